//! `hearth tick`: one tick by hand (a supervisor run of one tick), and the
//! hidden `hearth tick --supervised`, which is the tick child itself.

use std::io::Read;
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use hearth::config::Config;
use hearth::supervisor::{self, RunOptions};
use hearth::tick::{self, class::FailureKind, TickOptions};

use super::{CommandError, Env};

#[derive(clap::Args)]
pub struct Args {
    /// Run as the supervisor's tick child (config JSON on stdin).
    #[arg(long, hide = true)]
    supervised: bool,
    /// The tick number (with --supervised).
    #[arg(long, hide = true, requires = "supervised")]
    number: Option<u64>,
}

pub fn run(env: &Env, flag: Option<&Path>, args: Args) -> Result<ExitCode, CommandError> {
    let home = env.open_home(flag)?;
    if !args.supervised {
        super::run::check_key(&home)?;
        let options = RunOptions {
            exe: env.exe.clone(),
            ticks: Some(1),
            interval: None,
            notifier: None,
            now: chrono::Utc::now,
        };
        let outcome = supervisor::run(&home, options)?;
        return Ok(match outcome {
            supervisor::RunOutcome::Panic => ExitCode::from(2),
            _ => ExitCode::SUCCESS,
        });
    }

    let mut json = Vec::new();
    std::io::stdin().read_to_end(&mut json)?;
    let config: Config = serde_json::from_slice(&json).map_err(|e| {
        CommandError::new(
            anyhow::anyhow!("the supervisor passed no usable config on stdin: {e}"),
            Some(
                "`hearth tick --supervised` is started by `hearth run`; run `hearth tick` instead"
                    .into(),
            ),
        )
    })?;
    let number = args.number.unwrap_or(0);
    let options = TickOptions {
        number,
        pause_after_write_ahead: test_delay(env.test_tick_delay.as_deref(), number),
        inject_failure: test_failure(env.test_fail.as_deref(), number),
        api_key: hearth::model::key_variable(&config.model)
            .and_then(|name| std::env::var(name).ok()),
    };
    let report = tick::run(&home, &config, &options, chrono::Utc::now())?;
    let class = report.class();
    for failure in &report.failures {
        tracing::warn!("tick {number}: {}", failure.detail);
    }
    Ok(ExitCode::from(class.exit_code() as u8))
}

/// `CLASS` or `CLASS@TICK,TICK…`: the failure class to inject.
fn test_failure(spec: Option<&str>, number: u64) -> Option<FailureKind> {
    let spec = spec?;
    let (class, ticks) = spec.split_once('@').unwrap_or((spec, ""));
    let applies = ticks.is_empty()
        || ticks
            .split(',')
            .any(|t| t.trim().parse::<u64>() == Ok(number));
    if !applies {
        return None;
    }
    Some(match class {
        "context-insufficiency" => FailureKind::Context,
        "coverage-gap" => FailureKind::UnknownTool,
        "dispatch-miss" => FailureKind::ToolFailed,
        "model-limitation" => FailureKind::Model,
        _ => FailureKind::MalformedCall,
    })
}

/// `MS` or `MS@TICK`.
fn test_delay(spec: Option<&str>, number: u64) -> Option<Duration> {
    let spec = spec?;
    let (ms, only) = match spec.split_once('@') {
        Some((ms, tick)) => (ms, tick.parse::<u64>().ok()),
        None => (spec, None),
    };
    let ms: u64 = ms.parse().ok()?;
    only.is_none_or(|t| t == number)
        .then(|| Duration::from_millis(ms))
}
