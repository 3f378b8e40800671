//! `hearth mail send OUTBOX/LETTER.md`: the operator's word on a reply the
//! agent wrote to someone not proven to be them — held, never sent on
//! its own — sent as it is, after the operator read the draft whole.

use std::path::Path;

use hearth::config::Config;
use hearth::repo::Identity;

use super::{CommandError, Env, Exit};

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: MailCommand,
}

#[derive(clap::Subcommand)]
enum MailCommand {
    /// Send a held reply (`outbox/…md`, as the letter that held it names).
    Send {
        /// The agent's letter, relative to the home.
        letter: String,
    },
}

pub fn run(env: &Env, flag: Option<&Path>, args: Args) -> Result<Exit, CommandError> {
    let home = env.open_home(flag)?;
    let config = Config::load(&home.config_path())?;
    match args.command {
        MailCommand::Send { letter } => {
            let to = hearth::mail::reply::send_held(
                &home,
                &config.mail,
                &letter,
                env.vars(),
                &Identity::operator(&config.git),
                env.clock.now(),
            )
            .map_err(|e| {
                CommandError::new(
                    e,
                    "`hearth outbox` lists the letters; a held reply's letter names it",
                )
            })?;
            outln!("sent {letter} to {to}");
        }
    }
    Ok(Exit::Success)
}
