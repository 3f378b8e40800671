//! `hearth run`: the long-running loop around ticks (DESIGN 3, 12).
//!
//! Between ticks: commit hand edits as the operator, start the tick as a
//! child under a time limit (pinging the systemd watchdog while it runs),
//! record how it ended in `state/ticks.jsonl`, commit, then sleep until the
//! next tick is due, an inbox message arrives, or a signal says stop.
//!
//! The supervisor never runs model code itself: a panic, hang or OOM in a
//! tick is the child's, and the supervisor records it as a `crash` and goes
//! on.

mod child;
mod commit;
pub mod day;
mod disk;
mod error;
mod gap;
mod git_wait;
pub mod metrics;
mod origins;
mod packer;
mod peers;
mod push;
mod record;
mod recovery;
mod reload;
mod room;
pub mod runtime;
mod safety;
mod said;
mod signals;
pub mod status;
mod ticking;
mod upkeep;
pub use push::PushState;
pub mod systemd;
mod waiting;
pub mod wake;

use std::path::PathBuf;
use std::time::Duration;

use chrono::{DateTime, Utc};

use crate::ask::journal::Whose;
use crate::clock::Clock;
use crate::config::Config;
use crate::healer::{state::HealerState, Verdict};
use crate::home::lock::{CommitLock, RunLock};
use crate::home::Home;
use crate::io_hint::IoError;
use crate::mailbox::flares;
use crate::mailbox::outbox;
use crate::repo::{clean_stale_locks, Repo};
use crate::tick::ledger::{Ledger, TickRecord};
pub use error::SupervisorError;
use runtime::Phase;
use systemd::Notifier;
use wake::{Wake, Wakeups};

/// How long a look for hand edits waits for running asks to end (new ones
/// wait behind it): an ask is a model call or two, so most end well within.
const ASKS_WAIT: Duration = Duration::from_secs(10);
/// The same at exit, where a stop must stay quick.
const ASKS_WAIT_AT_EXIT: Duration = Duration::from_secs(3);

/// How to run the supervisor.
pub struct RunOptions {
    /// The hearth executable to start each tick with.
    pub exe: PathBuf,
    /// Stop after this many ticks (`--ticks N`).
    pub ticks: Option<u64>,
    /// Overrides `[tick] interval_s` (`--interval`).
    pub interval: Option<Duration>,
    /// systemd's notify socket, when run under systemd.
    pub notifier: Option<Notifier>,
    /// Where "now" comes from (pinned by `HEARTH_NOW`).
    pub clock: Clock,
    /// What `[git] push` authenticates with (from the environment).
    pub push_credentials: crate::repo::PushCredentials,
    /// A test's pause between writing a handoff into the inbox and
    /// recording it (`HEARTH_TEST_INTAKE_DELAY`), to `kill -9` there.
    pub intake_pause: Option<Duration>,
}

/// Why the supervisor returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunOutcome {
    /// `--ticks N` done.
    TicksDone,
    /// Told to stop by a signal.
    Stopped(i32),
    /// Healing is exhausted: stop and wait for a human (exit status 2).
    Panic,
}

/// How a turn of the main loop ended.
pub(super) enum LoopTurn {
    /// A tick ran; the next is due then.
    Ticked(DateTime<Utc>),
    /// The disk has no room for a tick.
    NoRoom,
    /// The run is over.
    Return(RunOutcome),
}

/// How one tick went, as the main loop needs it.
struct TickEnd {
    record: TickRecord,
    /// When the agent asked to be woken next (`sleep`).
    sleep_until: Option<DateTime<Utc>>,
    /// A stop signal that arrived during the tick.
    stop: Option<i32>,
    /// What the healer made of it.
    verdict: Verdict,
}

struct Supervisor<'a> {
    home: &'a Home,
    repo: Repo,
    config: Config,
    options: RunOptions,
    wake: Wakeups,
    started: DateTime<Utc>,
    /// What it has said already (problems, flares handed on, a broken config).
    said: said::SaidOnce,
    healer: HealerState,
    /// The newest line of `state/ticks.jsonl`: read once at start-up, then
    /// kept as ticks finish, so the ledger is not re-read every tick.
    last_tick: Option<TickRecord>,
    /// The peers' directories watched, and how many of them were missing.
    peers_watched: (Vec<(String, PathBuf)>, usize),
    /// Pushing, line origins and packing, each on its thread.
    upkeep: upkeep::Upkeep,
    /// A full disk that pauses ticks, while it lasts.
    disk: Option<disk::DiskFull>,
    /// A commit put off while another git holds its lock.
    git_wait: Option<git_wait::GitWait>,
    /// `[metrics] textfile`, with the totals so far.
    metrics: Option<metrics::Textfile>,
}

/// Runs the supervisor on `home` until `--ticks` are done or a stop signal.
pub fn run(home: &Home, options: RunOptions) -> Result<RunOutcome, SupervisorError> {
    // Listen first: a SIGTERM that arrives while the start-up below runs
    // (lock cleanup, recovery) is a stop request to honour with exit 0,
    // not the default action that kills the process mid-way.
    let wake = Wakeups::start(home).map_err(|source| {
        SupervisorError::Io(IoError::doing(
            "could not listen for signals and inbox messages",
            source,
        ))
    })?;
    let _run_lock = RunLock::acquire(home)?;
    let config = Config::load(&home.config_path())?;
    let repo = open_repo(home, &config)?;
    let (healer, problem) = HealerState::load_or_fresh(home);
    if let Some(problem) = problem {
        tracing::warn!("{problem}");
    }
    if let Some(panic) = &healer.panic {
        return Err(SupervisorError::Panicked {
            since: panic.since.to_rfc3339(),
            reason: panic.reason.clone(),
        });
    }
    if metrics::Textfile::inside_home(home, &config.metrics.textfile) {
        return Err(SupervisorError::TextfileInHome {
            path: config.metrics.textfile.clone().into(),
            home: home.root().to_path_buf(),
        });
    }
    let upkeep = upkeep::Upkeep::start(home, &config, &options);
    let mut sup = Supervisor {
        home,
        repo,
        config,
        wake,
        started: options.clock.now(),
        said: said::SaidOnce::with_flares(flares::names(home)),
        healer,
        last_tick: last_recorded_tick(home),
        peers_watched: Default::default(),
        upkeep,
        disk: None,
        git_wait: None,
        metrics: None,
        options,
    };
    if let Some(RunOutcome::Panic) = sup.start_up()? {
        runtime::clear_state(home);
        return Ok(RunOutcome::Panic);
    }
    let outcome = sup.main_loop();
    sup.shut_down(&outcome);
    outcome
}

/// The home's repository, once the git locks a killed writer left are
/// gone (those a live one holds are waited for by every commit), checked
/// to have the remote `[git] push` needs.
fn open_repo(home: &Home, config: &Config) -> Result<Repo, SupervisorError> {
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
    fn start_up(&mut self) -> Result<Option<RunOutcome>, SupervisorError> {
        let home = self.home;
        self.metrics = metrics::Textfile::open(home, &self.config.metrics.textfile);
        self.watch_peers();
        self.set_phase(Phase::Starting, None, None);
        let died_in = runtime::unfinished_tick(home).map(|m| m.map(|m| m.tick));
        let recovered = match self.recover_unfinished_tick(recovery::Cut::SupervisorDied) {
            Err(e) if git_wait::is_git_locked(&e) => {
                // Finished before the first tick, once git lets go.
                self.put_off_for_git(&e, recovery::Cut::SupervisorDied);
                Verdict::Fine
            }
            other => other?,
        };
        self.flare_start_up_gap(died_in)?;
        if let Some(RunOutcome::Panic) = self.act(recovered)? {
            return Ok(Some(RunOutcome::Panic));
        }
        if let Some(n) = &self.options.notifier {
            n.ready(&format!("hearth supervising {}", home.root().display()));
        }
        tracing::info!("supervising {}", home.root().display());
        if let Some(textfile) = &self.metrics {
            textfile.write(home, true, self.options.clock.now());
        }
        self.upkeep.started();
        Ok(None)
    }

    /// After the last tick, however the run ended: hand edits made while
    /// it ran and the outbox committed (asks that died finished first), the
    /// upkeep threads done, the stop recorded for the next start's gap.
    fn shut_down(&mut self, outcome: &Result<RunOutcome, SupervisorError>) {
        let home = self.home;
        if let Ok(RunOutcome::TicksDone) = outcome {
            self.upkeep.wait_for_pack();
        }
        let (clock, config) = (self.options.clock, &self.config);
        let everything = commit::hand_edit_scope(home, &self.repo, None);
        match crate::home::lock::hold_asks(home, ASKS_WAIT_AT_EXIT) {
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
        let posted = "outbox: posted since the last tick";
        if let Err(e) = commit::commit_outbox(home, &self.repo, posted, clock.now()) {
            tracing::warn!("could not commit the outbox at exit: {e}");
        }
        self.upkeep.finish();
        if let Some(n) = &self.options.notifier {
            n.stopping();
        }
        let reason = match outcome {
            Ok(RunOutcome::Stopped(signal)) => format!("stopped by signal {signal}"),
            Ok(RunOutcome::TicksDone) => "ran the ticks it was asked for (--ticks)".into(),
            Ok(RunOutcome::Panic) => "stopped in panic: healing was exhausted".into(),
            Err(e) => format!("stopped on an error: {e}"),
        };
        gap::record_stop(
            home,
            &gap::LastStop {
                at: clock.now(),
                reason,
            },
        );
        if let Some(textfile) = &self.metrics {
            textfile.write(home, false, clock.now());
        }
        runtime::clear_state(home);
    }
}

impl Supervisor<'_> {
    fn main_loop(&mut self) -> Result<RunOutcome, SupervisorError> {
        let mut done = 0u64;
        let mut next_due = self.first_due();
        // Whether the tick now due comes after a pause for a full disk
        // (late because of it, and flared as such already).
        let mut paused = false;
        loop {
            if let Some(signal) = self.wait_until(next_due) {
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
                Ok(LoopTurn::Return(outcome)) => {
                    self.disk_episode_over();
                    return Ok(outcome);
                }
                Ok(LoopTurn::NoRoom) => {
                    paused = true;
                    next_due = self.retry_for_room();
                }
                Err(e) if disk::is_disk_full(&e) => {
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
        // The first tick's lateness is the start-up gap, flared already;
        // a pause for room is flared as such.
        if done > 0 && !after_pause {
            let now = self.options.clock.now();
            if let Some(flare) = gap::late_tick(due, now, self.interval()) {
                outbox::post(self.home, &flare, now)?;
            }
        }
        self.reload_config();
        let TickEnd {
            record,
            sleep_until,
            stop,
            verdict,
        } = self.run_one_tick()?;
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
        if let Some(n) = &self.options.notifier {
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

    /// When to look for room again: [`disk::retry_after`] the interval.
    /// A simulated clock jumps there, so a real moment passes too: whoever
    /// frees the disk (a test's driver) keeps pace with it.
    fn retry_for_room(&self) -> DateTime<Utc> {
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
    fn commit_hand_edits(&mut self) {
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
                for problem in done.problems {
                    if self.said.problem(&problem) {
                        tracing::warn!("{problem}");
                    }
                }
            }
            Err(e) => {
                self.wake.hand_edits_failed();
                tracing::warn!("could not commit hand edits (will try again): {e}");
            }
        }
    }

    pub(super) fn stop_requested(&self) -> Option<i32> {
        match self.wake.drain_inbox() {
            Some(Wake::Stop(signal)) => Some(signal),
            _ => None,
        }
    }
}

/// The pushing thread, when `[git] push = true` (read at start-up).
/// The newest tick in the ledger; lines that do not parse are named once.
fn last_recorded_tick(home: &Home) -> Option<TickRecord> {
    let ledger = Ledger::read(&home.ticks_path()).unwrap_or_default();
    for (line, problem) in &ledger.skipped {
        tracing::warn!(
            "{}:{line}: skipped a line that does not parse: {problem}",
            home.ticks_path().display()
        );
    }
    ledger.last().cloned()
}
