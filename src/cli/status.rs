//! `hearth status [--json] [--check]`

use std::path::Path;

use hearth::view::{status, status_text};

use super::{CommandError, Env, Exit};

#[derive(clap::Args)]
pub struct Args {
    /// Print JSON.
    #[arg(long)]
    json: bool,
    /// Say only how the home is, and exit 0 (healthy), 1 (something waits
    /// for you) or 2 (the agent is not working): for monitoring.
    #[arg(long)]
    check: bool,
}

pub fn run(env: &Env, flag: Option<&Path>, args: Args) -> Result<Exit, CommandError> {
    let home = env.open_home(flag)?;
    let status = status::status(&home, env.clock.now());
    let checked = match status.verdict.health {
        status::Health::Healthy => Exit::Success,
        status::Health::Attention => Exit::Error,
        status::Health::Trouble => Exit::Panic,
    };
    if args.json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&status).expect("status serialises")
        );
        return Ok(if args.check { checked } else { Exit::Success });
    }
    if args.check {
        outln!("{}", status_text::verdict_line(&status));
        return Ok(checked);
    }
    let text = status_text::render(&status, env.clock.now());
    outln!("{}", text.trim_end());
    Ok(Exit::Success)
}
