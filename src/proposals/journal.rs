//! A decision in progress: `accept` and `reject` write files and the book,
//! then make one commit. A `kill -9` between the first write and the commit
//! would leave the proposal's lines in the tree for the supervisor to
//! commit as the operator's hand edit, or half of them. So the decision is
//! named first, in `.hearth/deciding.json` (the proposal, the action, HEAD
//! before it, every file it will write with what it held before), and
//! whatever hearth commits next first asks [`recover`]: a decision whose
//! commit is on `main` is over; one whose commit is not is undone — each
//! file it named holds again what it held before (the book may hold a
//! proposal not committed yet, so not HEAD's) — and the proposal still
//! waits. Either way `main` holds all of it or none.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::home::Home;
use crate::json_file::{self, JsonFile};
use crate::repo::Repo;

/// The journal's place (never committed).
fn path(home: &Home) -> std::path::PathBuf {
    home.runtime_dir().join("deciding.json")
}

/// One decision in progress.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Deciding {
    /// The proposal.
    pub n: u64,
    /// `accept` or `reject`.
    pub action: String,
    /// HEAD before it (full id); `None` in a home with no commit.
    pub head: Option<String>,
    /// Every file it writes, relative to the home (the book included),
    /// with what it held before (`None`: it did not exist).
    pub files: BTreeMap<String, Option<String>>,
    /// When it began.
    pub at: DateTime<Utc>,
}

impl JsonFile for Deciding {
    const VERSION: u32 = 1;
}

impl Deciding {
    /// A decision on proposal `n` that will write `files`, each as it is
    /// now kept to put back.
    pub fn of(
        home: &Home,
        repo: &Repo,
        n: u64,
        action: &str,
        files: &[String],
        at: DateTime<Utc>,
    ) -> Deciding {
        let files = files
            .iter()
            .map(|rel| {
                let before = std::fs::read(home.path(rel))
                    .ok()
                    .map(|b| String::from_utf8_lossy(&b).into_owned());
                (rel.clone(), before)
            })
            .collect();
        Deciding {
            n,
            action: action.into(),
            head: repo.head(),
            files,
            at,
        }
    }

    /// Names the decision before anything of it is written.
    pub fn begin(&self, home: &Home) -> Result<(), crate::atomic::WriteError> {
        json_file::save(&path(home), self)
    }

    /// Its commit is made: the journal goes.
    pub fn end(home: &Home) {
        let _ = std::fs::remove_file(path(home));
    }
}

/// What [`recover`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Recovered {
    /// Its commit is on `main`: nothing to do but forget it.
    Finished(u64),
    /// It was cut short before its commit: its files are as they were
    /// before it (the ones put back named).
    Undone(u64, Vec<String>),
}

impl Recovered {
    /// For the log and the command's output.
    pub fn describe(&self) -> String {
        match self {
            Recovered::Finished(n) => {
                format!("proposal {n}'s decision was interrupted after its commit; it stands")
            }
            Recovered::Undone(n, files) => format!(
                "proposal {n}'s decision was interrupted before its commit; undone ({} as \
                 they were before it), and proposal {n} still waits",
                files.join(", ")
            ),
        }
    }
}

/// Finishes or undoes a decision a kill cut short. The caller holds the
/// commit lock (or is about to commit under it).
pub fn recover(home: &Home, repo: &Repo) -> Option<Recovered> {
    let deciding: Deciding = match json_file::load(&path(home)) {
        Ok(Some(d)) => d,
        Ok(None) => return None,
        Err(e) => {
            // A journal that cannot be read names nothing to undo: the
            // commit is atomic, so main is whole either way; what it wrote
            // may be left in the tree, and says so in the log.
            tracing::warn!("{e}; removing it (check `git status` for a half-made decision)");
            Deciding::end(home);
            return None;
        }
    };
    let n = deciding.n;
    let decided = [
        format!("proposal {n} accepted"),
        format!("proposal {n} rejected"),
        format!("proposal {n} needs review"),
    ];
    let committed = deciding.head.as_deref().is_some_and(|head| {
        repo.messages_since(head, 1000)
            .iter()
            .any(|m| decided.iter().any(|d| m.starts_with(d.as_str())))
    });
    if committed {
        Deciding::end(home);
        return Some(Recovered::Finished(n));
    }
    // What a commit killed midway staged goes back to HEAD's first.
    let paths: Vec<&str> = deciding.files.keys().map(String::as_str).collect();
    if let Err(e) = repo.unstage(&paths) {
        tracing::warn!(
            "the index could not be put back for {}: {e}",
            paths.join(", ")
        );
    }
    let mut undone = Vec::new();
    for (rel, before) in &deciding.files {
        let path = home.path(rel);
        // A write the kill cut in two leaves its temp file beside it.
        crate::atomic::remove_stale_temps(&path);
        let now = std::fs::read(&path).ok();
        if now.as_deref() == before.as_deref().map(str::as_bytes) {
            continue;
        }
        let restored = match before {
            Some(text) => crate::atomic::write(&path, text.as_bytes()).map_err(|e| e.source),
            None => std::fs::remove_file(&path),
        };
        match restored {
            Ok(()) => undone.push(rel.clone()),
            Err(e) => tracing::warn!("{rel} could not be put back as it was: {e}"),
        }
    }
    Deciding::end(home);
    Some(Recovered::Undone(n, undone))
}
