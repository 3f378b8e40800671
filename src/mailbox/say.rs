//! The operator's message, delivered and recorded: `hearth say` and the
//! MCP server's `say` tool are this one function, so a message reaches
//! the agent the same way whichever door it came through.

use chrono::{DateTime, Utc};

use super::{inbox, MailboxError};
use crate::config::Config;
use crate::home::lock::CommitLock;
use crate::home::Home;
use crate::repo::{Identity, Repo};

/// A message in the inbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Said {
    /// The message file, relative to the home.
    pub rel: String,
    /// Why it was not committed, when it was not (it is delivered all the
    /// same: the supervisor commits it with the next hand edits).
    pub not_committed: Option<String>,
    /// What else the operator should know (a broken `hearth.toml` made
    /// the commit use the default operator name).
    pub notes: Vec<String>,
}

/// Writes `text` as a new inbox message and commits it as the operator.
/// The commit lock is held from before the file exists until it is
/// committed, so a running supervisor cannot take the new message for a
/// hand edit.
pub fn say(home: &Home, text: &str, now: DateTime<Utc>) -> Result<Said, MailboxError> {
    // Run as the wrong user (root on a home owned by `hearth`), nothing is
    // written: the file would be root's, and the commit refused.
    if let Err(e @ crate::repo::RepoError::NotOwner { .. }) = Repo::open(home.root()) {
        return Err(MailboxError::NotOwner(e));
    }
    let lock = CommitLock::acquire(home)?;
    let path = inbox::say(home, text, now)?;
    let rel = home.relative(&path);
    let mut notes = Vec::new();
    // A broken hearth.toml must not keep the operator from talking to the
    // agent: commit under the default operator name, and say so.
    let config = Config::load(&home.config_path()).unwrap_or_else(|e| {
        notes.push(format!("{e}; committed as the default operator"));
        Config::default()
    });
    let committed = Repo::open(home.root()).and_then(|repo| {
        repo.commit(
            &[&rel],
            &Identity::operator(&config.git),
            &format!("say: {rel}"),
            now,
        )
    });
    drop(lock);
    let not_committed = committed.err().map(|e| format!("{e} (hint: {})", e.hint()));
    Ok(Said {
        rel,
        not_committed,
        notes,
    })
}
