//! How far the operator has read the thread (`/talk`): one time,
//! `state/talk_read.json`, beside the letters' own read marks. A page of
//! the thread is judged read or unread from this mark alone when it is
//! past everything shown — the usual case — so a page does not load the
//! read mark of every letter a long history holds.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::flares;
use super::MailboxError;
use crate::home::layout::rel;
use crate::home::lock::CommitLock;
use crate::home::Home;
use crate::json_file::{self, JsonFile};
use crate::repo::{Identity, Repo};

#[derive(Debug, Default, Serialize, Deserialize)]
struct ReadThrough {
    through: Option<DateTime<Utc>>,
}

impl JsonFile for ReadThrough {
    const VERSION: u32 = 1;
}

/// The time up to which the thread was read (none: never; a broken file
/// is read as never, which shows more as unread and loses nothing).
pub fn through(home: &Home) -> Option<DateTime<Utc>> {
    json_file::load::<ReadThrough>(&home.path(rel::TALK_READ))
        .unwrap_or_else(|e| {
            tracing::warn!("{e}; showing the thread as unread");
            None
        })
        .and_then(|r| r.through)
}

/// Why the thread could not be marked read.
#[derive(Debug, thiserror::Error)]
pub enum NotMarked {
    /// The marks could not be written.
    #[error(transparent)]
    Mailbox(#[from] MailboxError),
    /// They could not be committed.
    #[error(transparent)]
    Repo(#[from] crate::repo::RepoError),
}

/// Marks the thread read up to `shown` and the letters `letters` (ids, as
/// `hearth outbox` lists them) read, committed by `who` as `hearth
/// outbox --ack` commits; the mark never moves back. Returns the letters
/// newly marked.
pub fn mark(
    home: &Home,
    shown: DateTime<Utc>,
    letters: &[String],
    who: &Identity,
    surface: &str,
    now: DateTime<Utc>,
) -> Result<Vec<String>, NotMarked> {
    let _lock = CommitLock::acquire(home).map_err(MailboxError::from)?;
    let path = home.path(rel::TALK_READ);
    let through = through(home).map_or(shown, |was| was.max(shown));
    json_file::save(
        &path,
        &ReadThrough {
            through: Some(through),
        },
    )
    .map_err(MailboxError::from)?;
    let marked = flares::mark_read(home, letters)?;
    Repo::open(home.root())?.commit(
        &[rel::TALK_READ, rel::FLARES_READ],
        who,
        &format!(
            "{surface}: the thread read, {} letter(s) marked read",
            marked.len()
        ),
        now,
    )?;
    Ok(marked)
}
