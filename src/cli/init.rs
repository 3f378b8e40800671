//! `hearth init [DIR]`

use std::path::{Path, PathBuf};

use super::{CommandError, Env, Exit};

#[derive(clap::Args)]
pub struct Args {
    /// Where to create the home (default: --home, $HEARTH_HOME, or the current directory).
    dir: Option<PathBuf>,
}

pub fn run(env: &Env, home: Option<&Path>, args: Args) -> Result<Exit, CommandError> {
    let dir = match args.dir.as_deref().or(home) {
        Some(dir) => dir.to_path_buf(),
        None => env.hearth_home.clone().unwrap_or_else(|| env.cwd.clone()),
    };
    let report = hearth::home::init(&dir, env.clock.now())?;
    let root = report.home.root().display();
    if report.created_files.is_empty() && report.commit.is_none() {
        outln!("{root} is already a hearth home; nothing to do");
    } else {
        outln!("initialised hearth home in {root}");
        for file in &report.created_files {
            outln!("  created {file}");
        }
        if let Some(commit) = &report.commit {
            outln!("  committed {}", &commit[..7]);
        }
        outln!("next: hearth run --home {root}");
    }
    Ok(Exit::Success)
}
