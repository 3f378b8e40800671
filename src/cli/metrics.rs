//! `hearth metrics`: the home's metrics in the Prometheus text format, for
//! a scrape by hand or a cron job; the supervisor writes the same to
//! `[metrics] textfile` after every tick.

use std::path::Path;

use hearth::view::metrics;

use super::{CommandError, Env, Exit};

#[derive(clap::Args)]
pub struct Args {}

pub fn run(env: &Env, flag: Option<&Path>, _args: Args) -> Result<Exit, CommandError> {
    let home = env.open_home(flag)?;
    let text = metrics::of_home(&home, env.clock.now()).map_err(|e| {
        CommandError::new(
            anyhow::anyhow!("could not read the ledger: {e}"),
            "check that the ledger files are readable by this user",
        )
    })?;
    outln!("{}", text.trim_end());
    Ok(Exit::Success)
}
