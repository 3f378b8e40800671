//! `hearth consolidate`: ask for a consolidation of the identity memory at
//! the next idle tick (its result is a proposal: `hearth proposals`).

use std::path::Path;

use hearth::config::Config;
use hearth::consolidate::ConsolidationRecord;
use hearth::home::lock::CommitLock;
use hearth::repo::{Identity, Repo};

use super::{CommandError, Env, Exit};

#[derive(clap::Args)]
pub struct Args {}

pub fn run(env: &Env, flag: Option<&Path>, _args: Args) -> Result<Exit, CommandError> {
    let home = env.open_home(flag)?;
    let mut record = ConsolidationRecord::load(&home);
    if let (Some(last), Some(outcome)) = (record.last, &record.outcome) {
        outln!(
            "last consolidation: {} — {outcome}",
            last.format("%Y-%m-%d %H:%M UTC")
        );
    }
    record.requested = true;
    let config = Config::load(&home.config_path()).unwrap_or_default();
    let _lock = CommitLock::acquire(&home)?;
    record.save(&home)?;
    Repo::open(home.root())?.commit(
        &[hearth::home::layout::rel::CONSOLIDATION],
        &Identity::operator(&config.git),
        "consolidate: asked for at the next idle tick",
        env.clock.now(),
    )?;
    outln!(
        "the next idle tick (one with an empty inbox) consolidates the identity memory; \
         its result waits for you in `hearth proposals`"
    );
    Ok(Exit::Success)
}
