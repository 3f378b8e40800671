//! `hearth run [--ticks N] [--interval SECONDS]`

use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use hearth::home::{self, Home};
use hearth::supervisor::{self, systemd::Notifier, RunOptions, RunOutcome};

use super::{CommandError, Env};

#[derive(clap::Args)]
pub struct Args {
    /// Run this many ticks, then exit (back to back unless --interval is given).
    #[arg(long, value_name = "N")]
    ticks: Option<u64>,
    /// Seconds between ticks (overrides [tick] interval_s).
    #[arg(long, value_name = "SECONDS")]
    interval: Option<u64>,
}

pub fn run(env: &Env, flag: Option<&Path>, args: Args) -> Result<ExitCode, CommandError> {
    let dir = env.home_dir(flag)?;
    if home::is_missing_or_empty(&dir) {
        let report = home::init(&dir, chrono::Utc::now())?;
        tracing::info!(
            "initialised a new hearth home in {}",
            report.home.root().display()
        );
    }
    let home = Home::open(&dir).map_err(|e| match e {
        home::HomeError::NotAHome { path } => home::HomeError::NotEmpty { path },
        other => other,
    })?;
    check_key(&home)?;
    let notifier = env.notify_socket.as_deref().and_then(|socket| {
        Notifier::new(
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
        notifier,
        now: chrono::Utc::now,
    };
    let outcome = supervisor::run(&home, options).map_err(|e| {
        let panicked = matches!(e, supervisor::SupervisorError::Panicked { .. });
        let mut e = CommandError::from(e);
        if panicked {
            e.code = 2;
        }
        e
    })?;
    tracing::info!("supervisor exiting: {outcome:?}");
    Ok(match outcome {
        RunOutcome::Panic => ExitCode::from(2),
        _ => ExitCode::SUCCESS,
    })
}

/// An explicitly configured provider without its key fails at start-up,
/// naming the variable, not as a string of failed ticks.
pub fn check_key(home: &Home) -> Result<(), CommandError> {
    let config = hearth::config::Config::load(&home.config_path())?;
    if let Some(variable) = hearth::model::key_variable(&config.model) {
        if std::env::var(&variable).map_or(true, |k| k.trim().is_empty()) {
            let e = hearth::model::ModelError::MissingKey {
                provider: config.model.provider.as_str(),
                variable,
            };
            return Err(e.into());
        }
    }
    Ok(())
}
