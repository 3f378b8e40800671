//! Start-up after a supervisor that died mid-tick (`kill -9`, power loss),
//! and room again after a full disk cut a tick short: the interrupted tick
//! is recorded as a crash, or, when it was recorded but not committed,
//! finished as itself.

use super::commit;
use super::record::record_for;
use super::{Supervisor, SupervisorError};
use crate::exchange::class::Class;
use crate::exchange::ledger::TickRecord;
use crate::exchange::report::TickReport;
use crate::healer::{self, Verdict};
use crate::run_state::phase;

/// What cut the tick short.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Cut {
    /// The supervisor before this one died (found at start-up).
    SupervisorDied,
    /// A write found the disk full (found when there is room again).
    DiskFull,
    /// Another git held its lock past the wait (found when it let go).
    GitLocked,
}

impl Supervisor<'_> {
    /// A previous supervisor died during a tick (`kill -9`, power loss).
    /// If it died before recording the tick, the tick is recorded as a
    /// crash; if it had recorded it already (the ledger's last line is that
    /// tick), what was left undone is finished instead: the tick's own
    /// commit, the good ref, the healer's count. Either way before anything
    /// else touches the home.
    pub(super) fn recover_unfinished_tick(&mut self, cut: Cut) -> Result<Verdict, SupervisorError> {
        let Some(marker) = phase::unfinished_tick(self.home) else {
            return Ok(Verdict::Fine);
        };
        let previous = self.last_tick.clone();
        if let (Some(m), Some(last)) = (&marker, &previous) {
            if m.tick == last.tick {
                return self.finish_recorded_tick(last);
            }
        }
        let now = self.options.clock.now();
        let last_number = previous.as_ref().map_or(0, |t| t.tick);
        let number = marker
            .as_ref()
            .map(|m| m.tick)
            .filter(|n| *n > last_number)
            .unwrap_or(last_number + 1);
        let start = marker.map(|m| m.start).unwrap_or(now);
        let report = TickReport::load_with_paid(self.home, number);
        let note = match cut {
            Cut::SupervisorDied => {
                "The supervisor stopped during this tick (killed or lost power); \
                 recorded at the next start-up."
            }
            Cut::DiskFull => {
                "The disk holding the home filled up during this tick; recorded when \
                 there was room again."
            }
            Cut::GitLocked => {
                "Another git process held its lock when this tick ended; recorded when \
                 it let go."
            }
        };
        let mut record = record_for(
            self.healer.last_answer,
            number,
            start,
            now,
            137,
            Class::Crash,
            report.as_ref(),
            Some(note.to_string()),
        );
        record.disk_full = cut == Cut::DiskFull;
        tracing::warn!(
            "tick {number} was interrupted by {}; recording it as a crash",
            match cut {
                Cut::SupervisorDied => "the supervisor's death",
                Cut::DiskFull => "a full disk",
                Cut::GitLocked => "another git's lock",
            }
        );
        super::record::give_back_messages(self.home, &mut record, report.as_ref())?;
        self.finish_tick(&record, report.as_ref())
    }

    /// The rest of [`Supervisor::finish_tick`] for a tick already in the
    /// ledger: counted by the healer unless it was, committed as itself
    /// unless it was, `refs/hearth/good` moved if it exited 0.
    fn finish_recorded_tick(&mut self, record: &TickRecord) -> Result<Verdict, SupervisorError> {
        let now = self.options.clock.now();
        tracing::warn!(
            "tick {} was recorded but not committed before the supervisor stopped; committing it now",
            record.tick
        );
        let report = TickReport::load(self.home, record.tick);
        // Its spend, unless the budget holds it already: a full disk can
        // cut the save between the ledger line and the budget.
        self.record_spend(record, report.as_ref())?;
        let touched = report
            .map(|r| r.outcome.effects.touched.clone())
            .unwrap_or_default();
        let counted = self.healer.last_tick.is_none_or(|t| t >= record.tick);
        let verdict = if counted {
            Verdict::Fine
        } else {
            let verdict = healer::observe(&mut self.healer, record, &self.config.healer, now);
            if record.quiet.is_some() && self.healer.quiet == self.config.healer.quiet_streak {
                self.quiet_flare(record)?;
            }
            self.healer.save(self.home)?;
            verdict
        };
        let id = commit::commit_tick(self.home, &self.repo, record, &touched, now)?;
        if id.is_none() && record.exit == 0 {
            // Committed before the kill; the good ref may not have moved.
            commit::mark_good_if_head_is(&self.repo, record.tick)?;
        }
        phase::clear_tick(self.home);
        Ok(verdict)
    }
}
