//! Before the first tick and after the last: the repository opened (the
//! locks a killed git left cleared), the tick a dead supervisor left
//! recovered, a gap since the last stop flared, systemd told; at the end,
//! hand edits and the outbox committed and the stop recorded.

use crate::mailbox::cause::Clearing;
use std::time::Duration;

use super::{
    commit, gap, git_wait, recovery, RunOutcome, Supervisor, SupervisorError, ASKS_WAIT_AT_EXIT,
};
use crate::ask::journal::Whose;
use crate::config::Config;
use crate::healer::Verdict;
use crate::home::lock::CommitLock;
use crate::home::Home;
use crate::repo::{clean_stale_locks, Repo};
use crate::run_state::phase::{self, Phase};
use crate::view::metrics;

/// The home's repository, once the git locks a killed writer left are
/// gone (those a live one holds are waited for by every commit), checked
/// to have the remote `[git] push` needs.
pub(super) fn open_repo(home: &Home, config: &Config) -> Result<Repo, SupervisorError> {
    let lock_wait = Duration::from_secs(config.git.lock_wait_s);
    let mut repo = {
        let _commit_lock = CommitLock::acquire(home)?;
        let cleanup = clean_stale_locks(home.root(), lock_wait)?;
        for path in cleanup.removed {
            tracing::warn!(
                "removed {} left by a git writer that was killed",
                path.display()
            );
        }
        for (path, owner) in cleanup.held {
            tracing::warn!(
                "{} is held by {owner}, still at work in the home: left in place; \
                 hearth's commits wait for it",
                path.display()
            );
        }
        Repo::open(home.root())?
    };
    repo.set_lock_wait(lock_wait);
    if config.git.push && !repo.has_remote(&config.git.remote) {
        return Err(SupervisorError::NoRemote {
            remote: config.git.remote.clone(),
            home: home.root().to_path_buf(),
        });
    }
    Ok(repo)
}

impl Supervisor<'_> {
    /// Before the first tick: the metrics file, the peers' watches, the
    /// tick a dead supervisor left unfinished recovered, a gap since the
    /// last stop flared, systemd told it is ready. `Some(Panic)` when the
    /// recovery exhausted healing.
    pub(super) fn start_up(&mut self) -> Result<Option<RunOutcome>, SupervisorError> {
        let home = self.home;
        self.metrics = metrics::Textfile::open(home, &self.config.metrics.textfile);
        self.watch_peers();
        self.set_phase(Phase::Starting, None, None);
        let died_in = phase::unfinished_tick(home).map(|m| m.map(|m| m.tick));
        // What a dead supervisor left is recovered in steps that write (the
        // cut tick's record, the gap flare, a heal): on a full disk each
        // waits for room, as a tick does, and runs again. Exiting instead
        // made systemd restart it into the same full disk until the unit
        // gave up.
        let recovered = match self.until_room(Self::recover_cut_work)? {
            Ok(verdict) => verdict,
            Err(signal) => return Ok(Some(RunOutcome::Stopped(signal))),
        };
        if let Err(signal) = self.until_room(|sup| sup.flare_start_up_gap(died_in))? {
            return Ok(Some(RunOutcome::Stopped(signal)));
        }
        // Flares posted while no supervisor ran (the wait for a broken
        // hearth.toml among them) reach the operator now; the config
        // parses, so its incident is resolved.
        self.notices.new_flares();
        self.notices
            .clear(Clearing::ConfigParses, "hearth.toml parses again");
        match self.until_room(|sup| sup.act(recovered))? {
            Ok(Some(RunOutcome::Panic)) => return Ok(Some(RunOutcome::Panic)),
            Ok(_) => {}
            Err(signal) => return Ok(Some(RunOutcome::Stopped(signal))),
        }
        if let Some(n) = &self.options.sd_notify {
            n.ready(&format!("hearth supervising {}", home.root().display()));
        }
        tracing::info!("supervising {}", home.root().display());
        self.flare_if_no_sandbox();
        if let Some(textfile) = &self.metrics {
            textfile.write(home, true, self.options.clock.now());
        }
        self.upkeep.started();
        Ok(None)
    }

    /// The job run and the tick a dead supervisor cut, recorded (their
    /// messages given back), with the healer's verdict on them.
    fn recover_cut_work(&mut self) -> Result<Verdict, SupervisorError> {
        // A job's run the dead supervisor left is judged while its tick's
        // report is still on disk.
        self.close_cut_job_runs()?;
        match self.recover_unfinished_tick(recovery::Cut::SupervisorDied) {
            Err(e) if git_wait::is_git_locked(&e) => {
                // Finished before the first tick, once git lets go.
                self.put_off_for_git(&e, recovery::Cut::SupervisorDied);
                Ok(Verdict::Fine)
            }
            other => other,
        }
    }

    /// After the last tick, however the run ended: hand edits made while
    /// it ran and the outbox committed (asks that died finished first), the
    /// upkeep threads done, the stop recorded for the next start's gap.
    pub(super) fn shut_down(&mut self, outcome: &Result<RunOutcome, SupervisorError>) {
        let home = self.home;
        if let Ok(RunOutcome::TicksDone) = outcome {
            self.upkeep.wait_for_pack();
        }
        let (clock, config) = (self.options.clock, &self.config);
        let everything = commit::hand_edit_scope(home, &self.repo, None);
        let tick_waits = crate::run_state::phase::unfinished_tick(home).is_some();
        match crate::home::lock::hold_asks(home, ASKS_WAIT_AT_EXIT) {
            // A tick's writes wait for its commit at the next start: taken
            // now, they would be the operator's.
            _ if tick_waits => tracing::info!(
                "a tick's commit is not made yet: it and the hand edits are committed at the \
                 next start"
            ),
            None => tracing::info!("an ask is running: hand edits are committed at the next start"),
            Some(_asks) => {
                let gone = "its process ended before its commit";
                crate::ask::journal::finish(home, Whose::All, gone, clock.now());
                if let Err(e) =
                    commit::commit_hand_edits(home, &self.repo, config, clock.now(), &everything)
                {
                    tracing::warn!("could not commit hand edits at exit: {e}");
                }
            }
        }
        // What waits for a receiver is tried once more, bounded: a run of
        // `--ticks N` ends before the courier's next round.
        self.notices.finish(config);
        let posted = "outbox: posted since the last tick";
        if let Err(e) = commit::commit_outbox(home, &self.repo, posted, clock.now()) {
            tracing::warn!("could not commit the outbox at exit: {e}");
        }
        if let Err(e) = commit::commit_job_records(home, &self.repo, clock.now()) {
            tracing::warn!("could not commit the job ledger at exit: {e}");
        }
        self.upkeep.finish();
        if let Some(n) = &self.options.sd_notify {
            n.stopping();
        }
        let reason = match outcome {
            Ok(RunOutcome::Stopped(signal)) => format!("stopped by signal {signal}"),
            Ok(RunOutcome::TicksDone) => "ran the ticks it was asked for (--ticks)".into(),
            Ok(RunOutcome::Panic) => "stopped in panic: healing was exhausted".into(),
            Err(e) => format!("stopped on an error: {e}"),
        };
        let by_operator = matches!(outcome, Ok(RunOutcome::Stopped(_) | RunOutcome::TicksDone));
        gap::record_stop(
            home,
            &gap::LastStop {
                at: clock.now(),
                reason,
                by_operator,
            },
        );
        if let Some(textfile) = &self.metrics {
            textfile.write(home, false, clock.now());
        }
        phase::clear_state(home);
    }
}
