//! `hearth say TEXT`: one message into the inbox, committed as the operator.
//! With no TEXT, the message is read from stdin (`fortune | hearth say`).

use std::io::{IsTerminal, Read};
use std::path::Path;

use hearth::mailbox::say;

use super::{CommandError, Env, Exit};

#[derive(clap::Args)]
pub struct Args {
    /// The message (several words are joined with spaces); none: read from stdin.
    text: Vec<String>,
}

/// The most of stdin one message takes.
const STDIN_BYTES: u64 = 1024 * 1024;

pub fn run(env: &Env, flag: Option<&Path>, args: Args) -> Result<Exit, CommandError> {
    let home = env.open_home(flag)?;
    let mut text = args.text.join(" ");
    let stdin = std::io::stdin();
    if text.trim().is_empty() && !stdin.is_terminal() {
        let mut bytes = Vec::new();
        stdin.lock().take(STDIN_BYTES + 1).read_to_end(&mut bytes)?;
        if bytes.len() as u64 > STDIN_BYTES {
            return Err(CommandError::usage(
                "the message on stdin is over 1 MiB",
                "put it in a memory file and say where it is, or send less",
            ));
        }
        text = String::from_utf8_lossy(&bytes).into_owned();
    }
    if text.trim().is_empty() {
        return Err(CommandError::usage(
            "hearth say needs a message",
            "hearth say \"check the tide tables\"  (or: echo \"…\" | hearth say)",
        ));
    }
    let said = say::say(&home, &text, env.clock.now())?;
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
