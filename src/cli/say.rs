//! `hearth say TEXT`: one message into the inbox, committed as the operator.

use std::path::Path;

use hearth::mailbox::say;

use super::{CommandError, Env, Exit};

#[derive(clap::Args)]
pub struct Args {
    /// The message (several words are joined with spaces).
    #[arg(required = true, num_args = 1..)]
    text: Vec<String>,
}

pub fn run(env: &Env, flag: Option<&Path>, args: Args) -> Result<Exit, CommandError> {
    let home = env.open_home(flag)?;
    let said = say::say(&home, &args.text.join(" "), env.clock.now())?;
    outln!("{}", said.rel);
    for note in &said.notes {
        tracing::warn!("{note}");
    }
    // The message is delivered once the file exists; the commit only
    // records it. If committing fails the supervisor commits it later.
    if let Some(why) = &said.not_committed {
        tracing::warn!("{} is in the inbox but was not committed: {why}", said.rel);
    }
    Ok(Exit::Success)
}
