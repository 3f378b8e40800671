//! The supervisor's side of the three layers of safety: carrying out the
//! healer's verdicts (heal, panic), the quiet-failure and gap flares, and
//! handing new flares to `[flares] exec`.

use crate::mailbox::cause::Cause;
use chrono::{DateTime, Utc};

use super::{gap, RunOutcome, Supervisor, SupervisorError};
use crate::exchange::ledger::TickRecord;
use crate::healer::{self, HealError, Verdict};
use crate::home::layout::rel;
use crate::home::lock::CommitLock;
use crate::mailbox::flares;
use crate::mailbox::outbox::{self, Letter};

impl Supervisor<'_> {
    /// Carries out the healer's verdict: a heal, or panic (which ends the
    /// run).
    pub(super) fn act(&mut self, verdict: Verdict) -> Result<Option<RunOutcome>, SupervisorError> {
        let now = self.options.clock.now();
        match verdict {
            Verdict::Fine => Ok(None),
            Verdict::Heal => match healer::plan(self.home, &self.repo, &self.healer) {
                Ok(plan) => {
                    healer::apply(self.home, &self.repo, &mut self.healer, &plan, now)?;
                    tracing::warn!("{}", plan.commit_message());
                    Ok(None)
                }
                Err(HealError::NoGoodCommit) => {
                    tracing::error!("cannot heal: no tick has exited 0 yet");
                    self.enter_panic(now, healer::Halt::NothingToRestore)
                }
                Err(e) => Err(e.into()),
            },
            Verdict::Panic => self.enter_panic(now, healer::Halt::Exhausted),
        }
    }

    /// `[healer] quiet_streak` quiet ticks in a row: the agent exits 0 but
    /// does not do its job. One flare per streak.
    pub(super) fn quiet_flare(&self, record: &TickRecord) -> Result<(), SupervisorError> {
        let body = format!(
            "The last {} ticks exited 0 but look like quiet failures; the latest, tick {}, {}.\n\n\
             The agent may be stuck in a loop or ignoring its inbox. Read its last replies in \
             state/messages.json and the ticks in state/ticks.jsonl (lines marked \"quiet\").\n",
            self.healer.quiet,
            record.tick,
            record.quiet.as_deref().unwrap_or("did nothing")
        );
        let mut flare = Letter::flare(
            Cause::QuietFailure,
            "ticks succeed but nothing happens",
            body,
        );
        flare.tick = Some(record.tick);
        outbox::post(self.home, &flare, self.options.clock.now())?;
        Ok(())
    }

    /// At start-up: if ticks were missed while no supervisor ran, say how
    /// long and why, as far as hearth knows.
    pub(super) fn flare_start_up_gap(
        &self,
        died_in: Option<Option<u64>>,
    ) -> Result<(), SupervisorError> {
        let Some(last) = &self.last_tick else {
            return Ok(());
        };
        let now = self.options.clock.now();
        let stop = gap::last_stop(self.home);
        // Stopped by the operator: only what was missed before the stop
        // counts (the time it stood still after is the operator's).
        let until = match &stop {
            Some(stop) if died_in.is_none() && stop.by_operator && stop.at >= last.end => stop.at,
            _ => now,
        };
        let why = match (died_in, stop) {
            (Some(tick), _) => format!(
                "the previous supervisor died during tick {} (killed, or the machine lost power)",
                tick.map_or("?".into(), |t| t.to_string())
            ),
            (None, Some(stop)) if stop.at >= last.end => format!(
                "the previous supervisor {} at {}",
                stop.reason,
                stop.at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
            ),
            _ => {
                "hearth was not running (the reason is unknown: no clean stop was recorded)".into()
            }
        };
        // The interval the ticks were run at: `--interval` when given (the
        // previous run most likely had the same command line), else the
        // config's (not `--ticks`' back-to-back zero: that is no schedule).
        let interval = self
            .options
            .interval
            .and_then(|i| chrono::Duration::from_std(i).ok())
            .unwrap_or_else(|| chrono::Duration::seconds(self.config.tick.interval_s as i64));
        if let Some(mut flare) = gap::at_start_up(last.end, interval, until, why) {
            flare.tick = Some(last.tick);
            let rel = outbox::post(self.home, &flare, now)?;
            tracing::warn!("gap since tick {}: {rel}", last.tick);
        }
        Ok(())
    }

    /// Hands each flare not yet seen to `[flares] exec`, and to the
    /// incidents of `[notify]`.
    pub(super) fn announce_new_flares(&mut self) {
        self.notices.new_flares();
        let exec = self.config.flares.exec.clone();
        // A command from a home you did not write does not run until you
        // trust it (`hearth trust`): said once, and flared.
        let trusted = crate::tools::trust::Trust::load(self.home)
            .trusts_exec(&self.config.flares.trusted_text());
        if !trusted {
            let problem = format!(
                "[flares] exec = {exec:?} is not trusted as it is now; it will not run until \
                 you check it and run `hearth trust`"
            );
            if self.said.problem(&problem) {
                tracing::warn!("{problem}");
                let flare = Letter::flare(Cause::Tools, "[flares] exec is not trusted", problem);
                if let Err(e) = outbox::post(self.home, &flare, self.options.clock.now()) {
                    tracing::error!("could not write the tools flare: {e}");
                }
            }
        }
        let incidents = crate::notify::incidents::Incidents::load(self.home).unwrap_or_default();
        for name in flares::names(self.home) {
            if self.said.flare(&name) && trusted {
                let notice = incidents.about_flare(&name);
                flares::announce(
                    self.home.root(),
                    &self.config.flares,
                    &self.options.environment,
                    &self.home.outbox_dir().join(name),
                    &notice,
                );
            }
        }
    }

    fn enter_panic(
        &mut self,
        now: DateTime<Utc>,
        why: healer::Halt,
    ) -> Result<Option<RunOutcome>, SupervisorError> {
        healer::panic(self.home, &mut self.healer, &self.config.healer, now, why)?;
        let _lock = CommitLock::acquire(self.home)?;
        self.repo.commit(
            &[rel::STATE, rel::OUTBOX, rel::INBOX],
            &crate::repo::Identity::hearth(),
            match why {
                healer::Halt::Exhausted => "panic: healing is exhausted; waiting for a human",
                healer::Halt::NothingToRestore => {
                    "panic: no tick has succeeded yet, nothing to restore; waiting for a human"
                }
            },
            now,
        )?;
        tracing::error!(
            "healing is exhausted; stopping with exit status 2 (run `hearth heal --resume` after fixing the cause)"
        );
        Ok(Some(RunOutcome::Panic))
    }
}
