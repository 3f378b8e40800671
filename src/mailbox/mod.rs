//! The home's two mail slots: `inbox/` (operator → agent, one `.md`/`.txt`
//! file a message) and `outbox/` (agent → operator: replies and flares, one
//! markdown file each with front matter).
//!
//! Messages are files, not a queue in a database, so an operator can drop one
//! in with `cp` and read replies with `cat`; and nothing is ever deleted: a
//! consumed message moves to `state/inbox-archive/`.

pub mod cause;
pub mod flares;
pub mod inbox;
pub mod outbox;
pub mod read_through;
pub mod say;

use crate::io_hint::IoError;
use std::path::{Path, PathBuf};

/// What can go wrong with the inbox and outbox.
#[derive(Debug, thiserror::Error)]
pub enum MailboxError {
    /// A file could not be read, listed or moved.
    #[error(transparent)]
    Io(#[from] IoError),
    /// A message could not be written.
    #[error(transparent)]
    Write(#[from] crate::atomic::WriteError),
    /// The commit lock could not be taken.
    #[error(transparent)]
    Lock(#[from] crate::home::lock::LockError),
    /// `hearth say` with nothing to say.
    #[error("the message is empty")]
    Empty,
    /// The home is another user's: a message written now would be a file
    /// its owner cannot commit (nothing is written).
    #[error(transparent)]
    NotOwner(crate::repo::RepoError),
}

impl MailboxError {
    /// What the operator can do about it, when hearth knows.
    pub fn hint(&self) -> String {
        match self {
            MailboxError::Lock(e) => e.hint(),
            MailboxError::Empty => "hearth say \"what you want the agent to read\"".into(),
            MailboxError::Io(e) => e.hint(),
            MailboxError::Write(e) => e.hint(),
            MailboxError::NotOwner(e) => e.hint(),
        }
    }

    pub(crate) fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> MailboxError {
        let path = path.into();
        move |source| MailboxError::Io(IoError::at(path, source))
    }
}

/// `dir/stem.ext`, or `dir/stem-2.ext`, `-3`… — the first name not taken:
/// a message or an archived copy never overwrites another.
pub(crate) fn unique_path(dir: &Path, stem: &str, ext: &str) -> PathBuf {
    std::iter::once(dir.join(format!("{stem}.{ext}")))
        .chain((2..).map(|n| dir.join(format!("{stem}-{n}.{ext}"))))
        .find(|p| !p.exists())
        .expect("an unused name exists")
}
