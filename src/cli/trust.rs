//! `hearth trust`: the operator approves the commands the home holds —
//! every `tools/*.toml`, every `jobs/*.toml` (a job's `check`) and
//! `[flares] exec` as they are now. Run it after
//! reading them; until then, a home you did not write runs none of them.

use std::path::Path;

use hearth::config::Config;
use hearth::tools::trust;

use super::{CommandError, Env, Exit};

#[derive(clap::Args)]
pub struct Args {}

pub fn run(env: &Env, flag: Option<&Path>, _args: Args) -> Result<Exit, CommandError> {
    let home = env.open_home(flag)?;
    let config = Config::load(&home.config_path())?;
    let trusted = trust::trust_now(&home, &config.flares.trusted_text())?;
    if trusted.files.is_empty() {
        outln!("nothing to trust: no tools/*.toml, no jobs/*.toml and no [flares] exec");
    }
    for file in trusted.files.keys() {
        outln!("trusted {file}");
    }
    outln!("recorded in .hearth/trust.json (never committed: a clone does not bring trust along)");
    Ok(Exit::Success)
}
