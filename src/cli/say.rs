//! `hearth say TEXT`: one message into the inbox, committed as the operator.

use std::path::Path;

use hearth::config::Config;
use hearth::home::lock::CommitLock;
use hearth::mailbox::inbox;
use hearth::repo::{Identity, Repo};

use super::{CommandError, Env, Exit};

#[derive(clap::Args)]
pub struct Args {
    /// The message (several words are joined with spaces).
    #[arg(required = true, num_args = 1..)]
    text: Vec<String>,
}

pub fn run(env: &Env, flag: Option<&Path>, args: Args) -> Result<Exit, CommandError> {
    let home = env.open_home(flag)?;
    let now = env.clock.now();
    // Held from before the file exists until it is committed, so a running
    // supervisor cannot take the new message for a hand edit.
    let lock = CommitLock::acquire(&home)?;
    let path = inbox::say(&home, &args.text.join(" "), now)?;
    let rel = home.relative(&path);
    outln!("{rel}");
    // The message is delivered once the file exists; the commit only
    // records it. If committing fails the supervisor commits it later.
    let committed = (|| -> Result<(), CommandError> {
        // A broken hearth.toml must not keep the operator from talking to
        // the agent: commit under the default operator name, and say so.
        let config = Config::load(&home.config_path()).unwrap_or_else(|e| {
            tracing::warn!("{e}; committing as the default operator");
            Config::default()
        });
        let repo = Repo::open(home.root())?;
        repo.commit(
            &[&rel],
            &Identity::operator(&config.git),
            &format!("say: {rel}"),
            now,
        )?;
        Ok(())
    })();
    drop(lock);
    if let Err(e) = committed {
        let hint = e.hint.map(|h| format!(" (hint: {h})")).unwrap_or_default();
        tracing::warn!(
            "{rel} is in the inbox but was not committed: {}{hint}",
            e.error
        );
    }
    Ok(Exit::Success)
}
