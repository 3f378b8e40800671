//! `hearth run [--ticks N] [--interval SECONDS]`

use std::path::Path;
use std::time::Duration;

use hearth::home::{self, Home};
use hearth::supervisor::{self, systemd::SdNotify, RunOptions, RunOutcome};

use super::{CommandError, Env, Exit};

#[derive(clap::Args)]
pub struct Args {
    /// Run this many ticks, then exit (back to back unless --interval is given).
    #[arg(long, value_name = "N")]
    ticks: Option<u64>,
    /// Seconds between ticks (overrides [tick] interval_s).
    #[arg(long, value_name = "SECONDS")]
    interval: Option<u64>,
}

pub fn run(env: &Env, flag: Option<&Path>, args: Args) -> Result<Exit, CommandError> {
    let dir = env.home_dir(flag)?;
    if home::is_missing_or_empty(&dir) {
        let report = home::init(&dir, env.clock.now())?;
        tracing::info!(
            "initialised a new hearth home in {}",
            report.home.root().display()
        );
    }
    let home = Home::open(&dir).map_err(|e| match e {
        home::HomeError::NotAHome { path } => home::HomeError::NotEmpty { path },
        other => other,
    })?;
    // Panic first: systemd's RestartPreventExitStatus=2 must hold the unit
    // whatever else is wrong (a missing key, a broken hearth.toml).
    refuse_if_panicked(&home)?;
    let notify = match hearth::config::Config::load(&home.config_path()) {
        Ok(config) => {
            env.require_key(&config.model)?;
            config.notify
        }
        // As a service, the supervisor comes up and waits for the fix,
        // flared; at a terminal (`--ticks N`) the error is the command's.
        Err(broken) if args.ticks.is_some() => return Err(broken.into()),
        Err(_) => supervisor::NoticeRoute::for_broken(&home).notify,
    };
    let sd_notify = env.notify_socket.as_deref().and_then(|socket| {
        SdNotify::new(
            socket,
            env.watchdog_usec.as_deref(),
            env.watchdog_pid.as_deref(),
        )
        .map_err(|e| tracing::warn!("NOTIFY_SOCKET={socket} is unusable: {e}"))
        .ok()
    });
    let options = RunOptions {
        exe: env.exe.clone(),
        ticks: args.ticks,
        interval: args.interval.map(Duration::from_secs),
        sd_notify,
        clock: env.clock,
        remote_credentials: env.remote_credentials(),
        intake_pause: env.intake_pause(),
        notify_secrets: env.notify_secrets(&notify),
        run_job: None,
        in_process: None,
        environment: env.vars().clone(),
    };
    let outcome = supervisor::run(&home, options)?;
    tracing::info!("supervisor exiting: {outcome:?}");
    Ok(match outcome {
        RunOutcome::Panic => Exit::Panic,
        _ => Exit::Success,
    })
}

/// The supervisor run of one turn that `hearth tick` is (and `hearth jobs
/// run`, with the job it runs): refused while healing is exhausted, and
/// without the key the model needs.
pub(super) fn one_turn(
    env: &Env,
    home: &Home,
    run_job: Option<String>,
) -> Result<RunOptions, CommandError> {
    refuse_if_panicked(home)?;
    let config = hearth::config::Config::load(&home.config_path())?;
    env.require_key(&config.model)?;
    Ok(RunOptions {
        exe: env.exe.clone(),
        ticks: Some(1),
        interval: None,
        sd_notify: None,
        clock: env.clock,
        remote_credentials: env.remote_credentials(),
        intake_pause: env.intake_pause(),
        notify_secrets: env.notify_secrets(&config.notify),
        run_job,
        in_process: None,
        environment: env.vars().clone(),
    })
}

/// Healing is exhausted and no human has said `hearth heal --resume` yet:
/// exit 2 before any other check.
pub(super) fn refuse_if_panicked(home: &Home) -> Result<(), CommandError> {
    let (healer, _) = hearth::healer::state::HealerState::load_or_fresh(home);
    match healer.panic {
        Some(panic) => Err(supervisor::SupervisorError::Panicked {
            since: hearth::clock::to_second(panic.since),
            reason: panic.reason,
        }
        .into()),
        None => Ok(()),
    }
}
