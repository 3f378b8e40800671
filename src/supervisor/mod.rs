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

mod approved;
mod child;
mod commit;
mod config_wait;

mod disk;
mod error;
pub mod fetch;
mod gap;
mod git_wait;
mod jailed;

mod intake;
mod job_record;
pub mod jobs;
mod lifecycle;

mod notices;
mod origins;
mod packer;

mod peers;
mod push;
mod record;
mod recovery;
mod reload;
mod room;

mod safety;
mod said;
mod schedule;
mod signals;

mod ticking;
mod turns;
mod upkeep;
pub use crate::run_state::push::PushState;
pub use config_wait::{NoticeRoute, RouteFrom};
pub mod systemd;
mod waiting;
pub mod wake;

use std::path::PathBuf;
use std::time::Duration;

use chrono::{DateTime, Utc};

use crate::clock::Clock;
use crate::config::Config;
use crate::exchange::ledger::{Ledger, TickRecord};
use crate::healer::state::HealerState;
use crate::home::lock::RunLock;
use crate::home::Home;
use crate::io_hint::IoError;
use crate::mailbox::flares;
use crate::repo::Repo;
pub use error::SupervisorError;
use systemd::SdNotify;
use turns::{LoopTurn, TickEnd};
use wake::Wakeups;

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
    pub sd_notify: Option<SdNotify>,
    /// Where "now" comes from (pinned by `HEARTH_NOW`).
    pub clock: Clock,
    /// What `[git] push` authenticates with (from the environment).
    pub remote_credentials: crate::repo::RemoteCredentials,
    /// A test's pause between writing a handoff into the inbox and
    /// recording it (`HEARTH_TEST_INTAKE_DELAY`), to `kill -9` there.
    pub intake_pause: Option<Duration>,
    /// What `[notify]`'s targets sign and authenticate with (from the
    /// environment, read at start).
    pub notify_secrets: crate::notify::targets::Secrets,
    /// A job to run first, whatever its schedule (`hearth jobs run NAME`
    /// with no supervisor running).
    pub run_job: Option<String>,
    /// Run each tick inside this process instead of as a child (`exe`
    /// is then not started): for tests that need no process boundary.
    /// The tick, its report, its ledger line and its commit are the same;
    /// what a child gives that this cannot — a time limit that kills, a
    /// process group reaped, a signal mid-tick — is not there.
    pub in_process: Option<InProcessTicks>,
    /// hearth's environment, read at start: a job's `check` and `[flares]
    /// exec` get [`crate::process::ALWAYS_PASSED`] from it and what their
    /// configuration names, nothing else (never the model's key).
    pub environment: std::collections::BTreeMap<String, String>,
}

/// What an in-process tick gets that a tick child reads from its
/// environment.
#[derive(Debug, Clone, Default)]
pub struct InProcessTicks {
    /// The provider's API key.
    pub api_key: Option<String>,
    /// What a test asks of each tick.
    pub hooks: crate::tick::TestHooks,
    /// The environment operator tools see.
    pub environment: std::collections::BTreeMap<String, String>,
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

/// The supervisor as it runs. Its methods live with what they do:
/// `lifecycle.rs` (before the first tick and after the last), `turns.rs`
/// (the main loop, one turn at a time, and the hand edits between ticks),
/// `ticking.rs` (one tick as a child process), `waiting.rs` (until the
/// next is due), `recovery.rs` (a tick a dead supervisor left), `safety.rs`
/// (the healer's verdicts: heals and panic), `jobs.rs` and `job_record.rs`
/// (work at set times, and its record), `git_wait.rs` and `room.rs`
/// (a git lock held, a full disk), `signals.rs`, `reload.rs` (a changed
/// `hearth.toml`), `peers.rs` and `intake.rs` (taking handoffs from peers;
/// what they posted is read by `crate::intake`). Its components own their
/// state and are not `Supervisor`: `notices.rs` (incidents, notices, the
/// courier), `upkeep.rs` (pushing, line origins, packing), `fetch.rs`.
/// What it publishes for readers is `crate::run_state`'s; what readers
/// see is computed in `crate::view`.
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
    /// The peers: what is watched of them, which cannot be read, and
    /// what their blobs said.
    peers: peers::PeerWatch,
    /// Pushing, line origins and packing, each on its thread.
    upkeep: upkeep::Upkeep,
    /// A full disk that pauses ticks, while it lasts.
    disk: Option<disk::DiskFull>,
    /// A commit put off while another git holds its lock.
    git_wait: Option<git_wait::GitWait>,
    /// `[metrics] textfile`, with the totals so far.
    metrics: Option<crate::view::metrics::Textfile>,
    /// Incidents, notices and their courier (`notices.rs`).
    notices: notices::Notices,
    /// When each job was first seen (`state/jobs-seen.json`).
    jobs_seen: crate::jobs::seen::JobsSeen,
    /// The mail watch's thread (`[mail]`), stopped with the supervisor.
    _mail: Option<crate::mail::watch::MailThread>,
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
    let config = match Config::load(&home.config_path()) {
        Ok(config) => config,
        // As a service: up, flared, waiting for the fix; at a terminal
        // (`--ticks N`), the command's error.
        Err(broken) if options.ticks.is_none() => {
            match config_wait::until_it_parses(home, &options, &wake, broken) {
                config_wait::Waited::Parses(config) => *config,
                config_wait::Waited::Stopped(signal) => return Ok(RunOutcome::Stopped(signal)),
            }
        }
        Err(broken) => return Err(broken.into()),
    };
    let repo = lifecycle::open_repo(home, &config)?;
    let (healer, problem) = HealerState::load_or_fresh(home);
    if let Some(problem) = problem {
        tracing::warn!("{problem}");
    }
    if let Some(panic) = &healer.panic {
        return Err(SupervisorError::Panicked {
            since: crate::clock::to_second(panic.since),
            reason: panic.reason.clone(),
        });
    }
    if crate::view::metrics::Textfile::inside_home(home, &config.metrics.textfile) {
        return Err(SupervisorError::TextfileInHome {
            path: config.metrics.textfile.clone().into(),
            home: home.root().to_path_buf(),
        });
    }
    let upkeep = upkeep::Upkeep::start(home, &config, &options, wake.sender());
    let notices = notices::Notices::start(home, options.clock, &config, &options.notify_secrets);
    let mail = crate::mail::watch::start(home, mail_watching(&config, &options));
    let mut sup = Supervisor {
        home,
        repo,
        config,
        wake,
        started: options.clock.now(),
        said: said::SaidOnce::with_flares(flares::names(home)),
        healer,
        last_tick: last_recorded_tick(home),
        peers: Default::default(),
        upkeep,
        disk: None,
        git_wait: None,
        metrics: None,
        notices,
        jobs_seen: crate::jobs::seen::JobsSeen::load(home),
        _mail: mail,
        options,
    };
    let outcome = match sup.start_up()? {
        Some(RunOutcome::Panic) => {
            crate::run_state::phase::clear_state(home);
            return Ok(RunOutcome::Panic);
        }
        // Stopped while the start-up waited for room.
        Some(stopped) => Ok(stopped),
        None => sup.main_loop(),
    };
    sup.shut_down(&outcome);
    outcome
}

/// What the mail watch is given: `[mail]`, the password and the
/// operator's CA from the supervisor's environment.
fn mail_watching(config: &Config, options: &RunOptions) -> crate::mail::watch::MailWatching {
    crate::mail::watch::MailWatching {
        config: config.mail.clone(),
        password: options.environment.get(&config.mail.password_env).cloned(),
        extra_roots: options.environment.get("SSL_CERT_FILE").map(PathBuf::from),
        clock: options.clock,
        backoff: Duration::from_secs(1),
    }
}

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
