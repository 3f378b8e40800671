//! What the operator does to collaborations by hand (`hearth collab new`,
//! `rename`, `pause`, `complete`, `abandon`, `reopen`): each change is an
//! event in the record and one commit as the operator, and a status change
//! or a new name travels to the peers as a notice their supervisors take.
//! The command only parses and prints.

use std::path::PathBuf;

use chrono::{DateTime, Utc};

use super::store::{self, RecordError};
use super::{own_name, CollabError, Collaboration};
use crate::config::Config;
use crate::home::lock::{CommitLock, LockError};
use crate::home::Home;
use crate::repo::{Identity, Repo, RepoError};

/// Why the operator's change was not made.
#[derive(Debug, thiserror::Error)]
pub enum OperatorError {
    /// `new` with a slug in use.
    #[error("collaboration {0} exists already")]
    Exists(String),
    /// No record of that slug.
    #[error("no collaboration {0:?} in this home")]
    NotFound(String),
    /// `--workdir` outside the allow-list.
    #[error("{} is not one of [collaborations] workdirs", .0.display())]
    WorkdirNotAllowed(PathBuf),
    /// `--with` a name that is not one of `[peers]`.
    #[error("{0:?} is not one of this home's [peers]")]
    NotAPeer(String),
    /// `--founded-by` a memory that does not exist.
    #[error("--founded-by {0}: no such memory in this home")]
    NoSuchMemory(String),
    /// The record refused the change (a bad slug, a status it cannot go to).
    #[error(transparent)]
    Refused(#[from] CollabError),
    /// The record could not be read.
    #[error(transparent)]
    Record(#[from] RecordError),
    /// The commit lock could not be taken.
    #[error(transparent)]
    Lock(#[from] LockError),
    /// The record or a notice could not be written.
    #[error(transparent)]
    Write(#[from] crate::atomic::WriteError),
    /// git failed.
    #[error(transparent)]
    Repo(#[from] RepoError),
}

impl OperatorError {
    /// Whether the operator asked for something that cannot be (exit 2),
    /// rather than something failing on the way.
    pub fn is_misuse(&self) -> bool {
        !matches!(
            self,
            OperatorError::Record(_)
                | OperatorError::Lock(_)
                | OperatorError::Write(_)
                | OperatorError::Repo(_)
        )
    }

    /// What the operator can do about it.
    pub fn hint(&self) -> String {
        match self {
            OperatorError::Exists(_) => "pick another --slug, or `hearth collab reopen` it".into(),
            OperatorError::NotFound(_) => "`hearth collab list` shows them".into(),
            OperatorError::WorkdirNotAllowed(_) => {
                "add it to [collaborations] workdirs in hearth.toml (absolute paths), or leave \
                 --workdir out to work in the home"
                    .into()
            }
            OperatorError::NotAPeer(_) => {
                "add it to [peers] in hearth.toml (name = \"/path/to/its/home\")".into()
            }
            OperatorError::NoSuchMemory(_) => {
                "name a file under memory/, as `hearth recall` cites it".into()
            }
            OperatorError::Refused(CollabError::BadSlug(_)) => {
                "give another --slug, or a name to make one of".into()
            }
            OperatorError::Refused(_) => "`hearth collab show SLUG` shows where it stands".into(),
            OperatorError::Lock(e) => e.hint(),
            OperatorError::Repo(e) => e.hint(),
            OperatorError::Record(e) => e.hint(),
            OperatorError::Write(e) => e.hint(),
        }
    }
}

/// What `hearth collab new` asks for.
pub struct Founding {
    /// Its name.
    pub name: String,
    /// Its slug; none: made from the name.
    pub slug: Option<String>,
    /// Where its tools run (from `[collaborations] workdirs`).
    pub workdir: Option<PathBuf>,
    /// The peers it is with.
    pub with: Vec<String>,
    /// The memory it was founded on.
    pub founded_by: Option<String>,
}

/// Founds a collaboration by hand; returns its record.
pub fn found(
    home: &Home,
    config: &Config,
    founding: Founding,
    now: DateTime<Utc>,
) -> Result<Collaboration, OperatorError> {
    let slug = founding
        .slug
        .unwrap_or_else(|| super::slug_for(&founding.name));
    if store::load(home, &slug)?.is_some() {
        return Err(OperatorError::Exists(slug));
    }
    let workdir = match founding.workdir {
        None => None,
        Some(dir) if dir.is_absolute() && config.collaborations.allows(&dir) => {
            Some(dir.to_string_lossy().into_owned())
        }
        Some(dir) => return Err(OperatorError::WorkdirNotAllowed(dir)),
    };
    let mut participants = vec![own_name(home)];
    for peer in founding.with {
        if !config.peers.contains_key(&peer) {
            return Err(OperatorError::NotAPeer(peer));
        }
        if !participants.contains(&peer) {
            participants.push(peer);
        }
    }
    if let Some(memory) = &founding.founded_by {
        let under_memory = memory.starts_with("memory/") && !memory.contains("..");
        if !under_memory || !home.path(memory).is_file() {
            return Err(OperatorError::NoSuchMemory(memory.clone()));
        }
    }
    let c = Collaboration::found(
        &slug,
        &founding.name,
        workdir,
        participants,
        founding.founded_by,
        "operator",
        now,
    )?;
    let message = format!("collab: new {slug} ({})", founding.name);
    commit(home, config, &c, &message, None, now)?;
    Ok(c)
}

/// Loads `slug`, applies `apply`, writes and commits the record (and the
/// notices of a status change or a new name); returns it.
pub fn change(
    home: &Home,
    config: &Config,
    slug: &str,
    summary: &str,
    now: DateTime<Utc>,
    apply: impl FnOnce(&mut Collaboration, DateTime<Utc>) -> Result<(), CollabError>,
) -> Result<Collaboration, OperatorError> {
    let Some(mut c) = store::load(home, slug)? else {
        return Err(OperatorError::NotFound(slug.to_string()));
    };
    apply(&mut c, now)?;
    let notice = c.events.last().map(|e| e.what.clone()).filter(|what| {
        ["pause", "complete", "abandon", "reopen", "rename"].contains(&what.as_str())
    });
    let message = format!("collab: {summary} ({slug})");
    commit(home, config, &c, &message, notice.as_deref(), now)?;
    Ok(c)
}

/// Writes the record (and, for a status change `notice`, the notices to
/// the peers) and commits them as the operator, under the commit lock
/// from the write to the commit: a running supervisor must not take the
/// record for a hand edit.
fn commit(
    home: &Home,
    config: &Config,
    c: &Collaboration,
    message: &str,
    notice: Option<&str>,
    now: DateTime<Utc>,
) -> Result<(), OperatorError> {
    let _lock = CommitLock::acquire(home)?;
    let mut paths = vec![store::save(home, c)?];
    if let Some(what) = notice {
        paths.extend(notify_peers(home, config, c, what, now)?);
    }
    let specs: Vec<&str> = paths.iter().map(String::as_str).collect();
    Repo::open(home.root())?.commit(&specs, &Identity::operator(&config.git), message, now)?;
    Ok(())
}

/// Notices to `c`'s other participants among this home's peers that its
/// operator changed it (`what`): their supervisors take them into their
/// records and inboxes, as they take a completion.
fn notify_peers(
    home: &Home,
    config: &Config,
    c: &Collaboration,
    what: &str,
    now: DateTime<Utc>,
) -> Result<Vec<String>, OperatorError> {
    let me = own_name(home);
    let reason = c
        .events
        .last()
        .filter(|e| !e.note.is_empty())
        .map(|e| format!(" ({})", e.note))
        .unwrap_or_default();
    let message = format!(
        "{me}'s operator changed collaboration \"{}\" ({}): {what}{reason}; it is now {}.",
        c.name,
        c.slug,
        c.status.as_str()
    );
    let mut posted = Vec::new();
    for peer in c
        .participants
        .iter()
        .filter(|p| **p != me && config.peers.contains_key(*p))
    {
        let notice = super::handoff::notice(&me, peer, c, what, message.clone(), now);
        posted.push(store::post(home, &notice, now)?);
    }
    Ok(posted)
}
