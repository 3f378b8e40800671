//! One tick, as the page shows it (`/ticks/N`): its ledger line and its
//! commit on `main` — subject and patch.

use std::path::PathBuf;

use crate::exchange::ledger::{Ledger, TickRecord};
use crate::home::Home;

/// The most of a commit's patch shown.
const PATCH_BYTES: usize = 64 * 1024;

/// A tick: what the ledger recorded, and its commit when `main` holds one.
#[derive(Debug, Clone)]
pub struct TickView {
    /// Its ledger line.
    pub record: TickRecord,
    /// Its commit (`None`: not made yet, or the history was rewritten).
    pub commit: Option<TickCommit>,
}

/// A tick's commit.
#[derive(Debug, Clone)]
pub struct TickCommit {
    /// Its id.
    pub id: String,
    /// Its subject line.
    pub subject: String,
    /// Its patch, cut at 64 KiB (`None`: git could not give it).
    pub patch: Option<String>,
}

/// Why the ledger could not be read.
#[derive(Debug, thiserror::Error)]
#[error("{}: {source}", path.display())]
pub struct LedgerUnread {
    /// The ledger's file.
    pub path: PathBuf,
    /// What the system said.
    #[source]
    pub source: std::io::Error,
}

/// Tick `n` (`None`: the ledger has no such tick): its line from the
/// ledger's current file (where the ticks a page links to mostly are),
/// else from every rotated segment.
pub fn tick(home: &Home, n: u64) -> Result<Option<TickView>, LedgerUnread> {
    let path = home.ticks_path();
    let unread = |source| LedgerUnread {
        path: path.clone(),
        source,
    };
    let find = |ledger: Ledger| ledger.records.into_iter().find(|r| r.tick == n);
    let record = match find(Ledger::read(&path).map_err(unread)?) {
        Some(found) => found,
        None => match find(Ledger::read_all(&path).map_err(unread)?) {
            Some(found) => found,
            None => return Ok(None),
        },
    };
    let repo = crate::repo::Repo::open(home.root()).ok();
    let commit = repo.as_ref().and_then(|repo| {
        let (id, subject) = repo.tick_commit(n, record.end)?;
        let patch = repo.commit_patch(&id, PATCH_BYTES).ok();
        Some(TickCommit { id, subject, patch })
    });
    Ok(Some(TickView { record, commit }))
}
