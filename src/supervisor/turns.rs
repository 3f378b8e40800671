//! The main loop, one turn at a time: a tick when one is due (or the
//! reason it cannot run: no room on the disk, a stop), the hand edits
//! committed between ticks.

use chrono::{DateTime, Utc};

use std::time::Duration;

use super::wake::Wake;
use super::{
    commit, disk, gap, git_wait, recovery, RunOutcome, Supervisor, SupervisorError, ASKS_WAIT,
};
use crate::ask::journal::Whose;
use crate::exchange::ledger::TickRecord;
use crate::healer::Verdict;
use crate::mailbox::outbox;

/// How a turn of the main loop ended.
pub(super) enum LoopTurn {
    /// A tick ran; the next is due then.
    Ticked(DateTime<Utc>),
    /// No tick ran (a job's check found nothing to do, or a job the wait
    /// ended for was not due after all): the interval's tick is still due
    /// then.
    Between(DateTime<Utc>),
    /// The disk has no room for a tick.
    NoRoom,
    /// The run is over.
    Return(RunOutcome),
}

/// How one tick went, as the main loop needs it.
pub(super) struct TickEnd {
    pub(super) record: TickRecord,
    /// When the agent asked to be woken next (`sleep`).
    pub(super) sleep_until: Option<DateTime<Utc>>,
    /// A stop signal that arrived during the tick.
    pub(super) stop: Option<i32>,
    /// What the healer made of it.
    pub(super) verdict: Verdict,
    /// Model calls it made that were answered (and paid).
    pub(super) calls: u32,
}

impl Supervisor<'_> {
    pub(super) fn main_loop(&mut self) -> Result<RunOutcome, SupervisorError> {
        let mut done = 0u64;
        let mut next_due = self.first_due();
        // Whether the tick now due comes after a pause for a full disk
        // (late because of it, and flared as such already).
        let mut paused = false;
        loop {
            if let Some(signal) = self.wait_until(&mut next_due) {
                return Ok(RunOutcome::Stopped(signal));
            }
            let recorded = self.last_tick.as_ref().map(|t| t.tick);
            let turn = self.turn(done, next_due, paused);
            paused = false;
            if turn.is_err() && self.last_tick.as_ref().map(|t| t.tick) != recorded {
                // A tick ran and is recorded; what failed after it (its
                // commit) is finished by a later turn, not run again.
                done += 1;
            }
            match turn {
                Ok(LoopTurn::Ticked(due)) => {
                    self.disk_episode_over();
                    done += 1;
                    next_due = due;
                }
                Ok(LoopTurn::Between(due)) => {
                    // `--ticks N` (and `hearth jobs run`) count a job run
                    // its check skipped as one of theirs.
                    if self.options.ticks.is_some() {
                        done += 1;
                    }
                    next_due = due;
                }
                Ok(LoopTurn::Return(outcome)) => {
                    self.disk_episode_over();
                    return Ok(outcome);
                }
                Ok(LoopTurn::NoRoom) => {
                    paused = true;
                    next_due = self.retry_for_room();
                }
                Err(e) if self.for_want_of_room(&e) => {
                    self.pause_for_room(&e);
                    paused = true;
                    next_due = self.retry_for_room();
                }
                Err(e) if git_wait::is_git_locked(&e) => {
                    self.put_off_for_git(&e, recovery::Cut::GitLocked);
                    paused = true;
                    next_due = self.retry_for_git();
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// One tick, with what goes before and after it, unless the disk has
    /// no room for it.
    fn turn(
        &mut self,
        done: u64,
        due: DateTime<Utc>,
        after_pause: bool,
    ) -> Result<LoopTurn, SupervisorError> {
        if let Some(instead) = self.room_for_a_tick()? {
            return Ok(instead);
        }
        if let Some(instead) = self.finish_put_off()? {
            return Ok(instead);
        }
        if self.options.ticks.is_some_and(|n| done >= n) {
            // The last of them waited for git or room: finished now.
            return Ok(LoopTurn::Return(RunOutcome::TicksDone));
        }
        // Handoffs the peers posted meanwhile are this tick's to read.
        self.take_handoffs();
        // Hand edits first (hearth.toml among them), so a flare written
        // next lands in the tick's commit, not the operator's.
        self.commit_hand_edits();
        self.run_approved_requests();
        // The first tick's lateness is the start-up gap, flared already;
        // a pause for room is flared as such.
        if done > 0 && !after_pause {
            let now = self.options.clock.now();
            if let Some(flare) = gap::late_tick(due, now, self.interval()) {
                outbox::post(self.home, &flare, now)?;
            }
        }
        self.reload_config();
        let Some(TickEnd {
            record,
            sleep_until,
            stop,
            verdict,
            ..
        }) = self.job_or_tick(due)?
        else {
            if let Some(signal) = self.stop_requested() {
                return Ok(LoopTurn::Return(RunOutcome::Stopped(signal)));
            }
            if self.options.ticks.is_some_and(|n| done + 1 >= n) {
                return Ok(LoopTurn::Return(RunOutcome::TicksDone));
            }
            return Ok(LoopTurn::Between(due));
        };
        let acted = self.act(verdict)?;
        if let Some(textfile) = &mut self.metrics {
            textfile.add(&record);
            textfile.write(self.home, true, self.options.clock.now());
        }
        self.announce_new_flares();
        self.update_recall_index();
        self.upkeep.tick_ended(&self.config);
        if let Some(outcome) = acted {
            return Ok(LoopTurn::Return(outcome));
        }
        if let Some(n) = &self.options.sd_notify {
            n.status(&format!(
                "tick {}: exit {} ({})",
                record.tick,
                record.exit,
                record.class.as_str()
            ));
        }
        if let Some(signal) = stop.or_else(|| self.stop_requested()) {
            return Ok(LoopTurn::Return(RunOutcome::Stopped(signal)));
        }
        if self.options.ticks.is_some_and(|n| done + 1 >= n) {
            return Ok(LoopTurn::Return(RunOutcome::TicksDone));
        }
        Ok(LoopTurn::Ticked(self.next_due(&record, sleep_until)))
    }

    /// This turn's tick: a job's run when one is due (an inbox message
    /// goes first), else the interval's tick — unless the wait ended
    /// early for a job that was not due after all. `None`: no tick ran.
    fn job_or_tick(&mut self, due: DateTime<Utc>) -> Result<Option<TickEnd>, SupervisorError> {
        let waiting = crate::mailbox::inbox::pending(self.home).is_ok_and(|p| !p.is_empty());
        // `hearth jobs run` with no supervisor: the job, whatever waits.
        if !waiting || self.options.run_job.is_some() {
            if let Some(run) = self.due_job()? {
                return self.run_job(run);
            }
        }
        let clock = self.options.clock;
        let early = self.options.ticks.is_none() && !clock.is_pinned() && clock.now() < due;
        if early && !waiting {
            return Ok(None);
        }
        self.run_one_tick(None).map(Some)
    }

    /// When to look for room again: [`disk::retry_after`] the interval.
    /// A simulated clock jumps there, so a real moment passes too: whoever
    /// frees the disk (a test's driver) keeps pace with it.
    pub(super) fn retry_for_room(&self) -> DateTime<Utc> {
        let clock = self.options.clock;
        let retry = disk::retry_after(self.interval());
        if clock.is_simulated() {
            std::thread::sleep(Duration::from_millis(20));
        }
        clock.now() + retry
    }

    /// Commits the operator's edits. Never fatal: a file that changes under
    /// the commit is committed as read and looked at again next time, and
    /// a commit that fails (say, the disk is full) is tried again before
    /// the next tick; the supervisor must outlive both.
    pub(super) fn commit_hand_edits(&mut self) {
        if self.tick_writes_wait() {
            // Committed after the tick's own commit, with a full look.
            self.wake.hand_edits_failed();
            return;
        }
        let Some(_asks) = crate::home::lock::hold_asks(self.home, ASKS_WAIT) else {
            // Its writes are its commit's; the hand edits wait for a full
            // look next time (nothing the watcher saw is dropped).
            self.wake.hand_edits_failed();
            tracing::info!("an ask is running: hand edits are committed at the next look");
            return;
        };
        // An ask that died before its commit (`kill -9`): its writes are
        // its own commit, not part of the operator's below.
        let gone = "its process ended before its commit";
        crate::ask::journal::finish(self.home, Whose::All, gone, self.options.clock.now());
        // The watcher says which memory files changed; without its word
        // (no watcher, a lost event, the first look) every file is looked at.
        let scope = match self.wake.take_hand_edits() {
            Some(changed) => commit::hand_edit_scope(self.home, &self.repo, Some(&changed)),
            None => commit::hand_edit_scope(self.home, &self.repo, None),
        };
        match commit::commit_hand_edits(
            self.home,
            &self.repo,
            &self.config,
            self.options.clock.now(),
            &scope,
        ) {
            Ok(done) => {
                if self.said.hand_edits_committed() {
                    tracing::info!("hand edits are committed again");
                }
                for problem in done.problems {
                    if self.said.problem(&problem) {
                        tracing::warn!("{problem}");
                    }
                }
                for link in &done.home_links {
                    if self.said.problem(&format!("link to the home: {link}")) {
                        let now = self.options.clock.now();
                        commit::flare_home_link(self.home, link, now);
                    }
                }
            }
            Err(e) => {
                self.wake.hand_edits_failed();
                if self.said.hand_edits_failed() {
                    tracing::warn!(
                        "could not commit hand edits (tried again at each look, said once \
                         until it works): {e}"
                    );
                } else {
                    tracing::debug!("could not commit hand edits (will try again): {e}");
                }
            }
        }
    }

    /// Whether a tick's own writes may be in the worktree uncommitted: its
    /// marker is there (a commit put off for git's lock or a full disk, or
    /// a tick a dead supervisor left not recovered yet). A hand-edit commit
    /// now would take them as the operator's — the agent's words, outside
    /// ones among them, passed off as the operator's — so it waits for the
    /// tick's commit.
    pub(super) fn tick_writes_wait(&self) -> bool {
        let waits = crate::run_state::phase::unfinished_tick(self.home).is_some();
        if waits {
            tracing::debug!(
                "a tick's commit is not made yet: hand edits are committed after it, so its \
                 writes are never taken as the operator's"
            );
        }
        waits
    }

    pub(super) fn stop_requested(&self) -> Option<i32> {
        match self.wake.drain_inbox() {
            Some(Wake::Stop(signal)) => Some(signal),
            _ => None,
        }
    }
}
