//! `hearth tick`: one tick by hand (a supervisor run of one tick), and the
//! hidden `hearth tick --supervised`, which is the tick child itself.

use std::io::Read;
use std::path::Path;

use hearth::exchange::ledger::Ledger;
use hearth::supervisor;
use hearth::tick::{self, TickOptions};

use super::{CommandError, Env, Exit};

#[derive(clap::Args)]
pub struct Args {
    /// Run as the supervisor's tick child (config and job as JSON on stdin).
    #[arg(long, hide = true)]
    supervised: bool,
    /// The tick number (with --supervised).
    #[arg(long, hide = true, requires = "supervised")]
    number: Option<u64>,
}

pub fn run(env: &Env, flag: Option<&Path>, args: Args) -> Result<Exit, CommandError> {
    let home = env.open_home(flag)?;
    if !args.supervised {
        let options = super::run::one_turn(env, &home, None)?;
        let outcome = supervisor::run(&home, options)?;
        // The tick's own code (0, 3, 11–15, crash), as the ledger has it.
        let last = Ledger::read(&home.ticks_path())
            .ok()
            .and_then(|l| l.last().cloned());
        return Ok(match (outcome, last) {
            (supervisor::RunOutcome::Panic, _) => Exit::Panic,
            (supervisor::RunOutcome::Stopped(_), _) | (_, None) => Exit::Success,
            (_, Some(record)) => Exit::Tick(record.class),
        });
    }

    let mut json = Vec::new();
    std::io::stdin().read_to_end(&mut json)?;
    let input: tick::ChildInput = serde_json::from_slice(&json).map_err(|e| {
        CommandError::new(
            anyhow::anyhow!("the supervisor passed no usable config on stdin: {e}"),
            "`hearth tick --supervised` is started by `hearth run`; run `hearth tick` instead",
        )
    })?;
    let config = input.config;
    let number = args.number.unwrap_or(0);
    let options = TickOptions {
        number,
        api_key: env.api_key(&config.model),
        hooks: env.hooks.clone(),
        environment: env.vars().clone(),
        job: input.job,
    };
    let report = match tick::run(&home, &config, &options, env.clock.now()) {
        Ok(report) => report,
        Err(e) => {
            // The cause reaches the ledger line and the flares, not only
            // stderr: the report on disk says what ended the tick.
            let error = CommandError::from(e);
            hearth::exchange::report::TickReport::record_error(
                &home,
                number,
                &format!("{} (hint: {})", error.error, error.hint),
            );
            return Err(error);
        }
    };
    for failure in &report.outcome.failures {
        tracing::warn!("tick {number}: {}", failure.detail);
    }
    Ok(Exit::Tick(report.class()))
}
