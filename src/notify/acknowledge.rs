//! The operator's "I know": flares (or the agent's letters) marked read,
//! and the incidents they name acknowledged (no reminder, no repeat), in
//! one commit by the operator. One act for every surface: `hearth flares
//! --ack`, `hearth outbox --ack` and the page.

use chrono::{DateTime, Utc};

use super::incidents::{Incidents, NotifyStateError};
use crate::home::layout::rel;
use crate::home::lock::CommitLock;
use crate::home::Home;
use crate::mailbox::flares::{self, Which};
use crate::repo::{Identity, Repo};

/// What an acknowledgement did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Acknowledged {
    /// The incidents acknowledged, by key.
    pub incidents: Vec<String>,
    /// The flares (or letters) newly marked read.
    pub marked: Vec<String>,
}

/// Why nothing was acknowledged.
#[derive(Debug, thiserror::Error)]
pub enum NotAcknowledged {
    /// The commit lock could not be taken.
    #[error(transparent)]
    Lock(#[from] crate::home::lock::LockError),
    /// The incidents' record could not be read or written.
    #[error(transparent)]
    Incidents(#[from] NotifyStateError),
    /// The read marks could not be kept (an id that names nothing, say).
    #[error(transparent)]
    Marks(#[from] flares::AckError),
    /// The commit could not be made.
    #[error(transparent)]
    Repo(#[from] crate::repo::RepoError),
    /// The incident asked for is not open (closed, or never was) as the
    /// act was taken: what was shown is not what is there.
    #[error("incident {key} is not open any more: nothing was acknowledged")]
    NotOpen {
        /// The key asked for.
        key: String,
    },
}

/// Acknowledges what `ids` name — an incident's key (or its start), a
/// flare of one, a letter — or, with none and `all`, everything listed;
/// committed by `who` as `SURFACE: N marked read`.
pub fn acknowledge(
    home: &Home,
    which: Which,
    ids: Vec<String>,
    all: bool,
    who: &Identity,
    surface: &str,
    now: DateTime<Utc>,
) -> Result<Acknowledged, NotAcknowledged> {
    let _lock = CommitLock::acquire(home)?;
    // An incident's key (or a flare of it) acknowledges its cause: its
    // flares are marked read, and it reminds no more.
    let (ids, incidents) = match which {
        Which::Flares => incidents_of(home, ids)?,
        Which::Letters => (ids, Vec::new()),
    };
    let marked = if ids.is_empty() && !all {
        Vec::new()
    } else {
        flares::ack_of(home, which, &ids)?
    };
    commit_marks(home, who, surface, &marked, now)?;
    Ok(Acknowledged { incidents, marked })
}

/// Acknowledges the open incident whose key is exactly `key`, judged
/// under the commit lock: one that closed between the operator's look
/// and the act is refused ([`NotAcknowledged::NotOpen`]), never another
/// acknowledged in its place.
pub fn acknowledge_incident(
    home: &Home,
    key: &str,
    who: &Identity,
    surface: &str,
    now: DateTime<Utc>,
) -> Result<Acknowledged, NotAcknowledged> {
    let _lock = CommitLock::acquire(home)?;
    let mut record = Incidents::load(home).map_err(NotifyStateError::from)?;
    let not_open = || NotAcknowledged::NotOpen {
        key: key.to_string(),
    };
    let incident = record
        .open
        .get_mut(key)
        .filter(|_| !key.is_empty())
        .ok_or_else(not_open)?;
    incident.acked = true;
    let flare_ids = incident.flares.clone();
    record.save(home).map_err(NotifyStateError::from)?;
    let marked = flares::ack_of(home, Which::Flares, &flare_ids)?;
    commit_marks(home, who, surface, &marked, now)?;
    Ok(Acknowledged {
        incidents: vec![key.to_string()],
        marked,
    })
}

/// The read marks and the incidents' record, committed by `who`.
fn commit_marks(
    home: &Home,
    who: &Identity,
    surface: &str,
    marked: &[String],
    now: DateTime<Utc>,
) -> Result<(), NotAcknowledged> {
    let repo = Repo::open(home.root())?;
    repo.commit(
        &[rel::FLARES_READ, super::incidents::FILE],
        who,
        &format!("{surface}: {} marked read", marked.len()),
        now,
    )?;
    Ok(())
}

/// Acknowledges the incidents `ids` name (a key's start, or a flare of
/// theirs): the ids left for the flares' read marks, with the flares of
/// each incident acknowledged, and the keys acknowledged.
fn incidents_of(
    home: &Home,
    ids: Vec<String>,
) -> Result<(Vec<String>, Vec<String>), NotifyStateError> {
    let mut record = Incidents::load(home).unwrap_or_default();
    let mut flare_ids = Vec::new();
    let mut acked = Vec::new();
    for id in ids {
        let keys = record.ack(&id);
        if keys.iter().any(|k| k.starts_with(&id)) {
            // A key: its flares are what is marked read.
            for key in &keys {
                flare_ids.extend(record.open[key].flares.iter().cloned());
            }
        } else {
            flare_ids.push(id);
        }
        acked.extend(keys);
    }
    if !acked.is_empty() {
        record.save(home)?;
    }
    Ok((flare_ids, acked))
}
