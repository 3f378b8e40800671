//! `hearth init`: make a directory a home, or finish making it one.
//!
//! Idempotent and conservative: files that exist are never overwritten, so
//! running it on a copied home without `.git`, or on a half-made one, keeps
//! everything the operator has and adds only what is missing.

use std::path::Path;

use chrono::{DateTime, Utc};

use super::{templates, Home, HomeError};
use crate::atomic;
use crate::config::Config;
use crate::io_hint::IoError;
use crate::repo::{Identity, Repo};

/// What `init` did.
#[derive(Debug)]
pub struct InitReport {
    /// The home.
    pub home: Home,
    /// Files written from the templates.
    pub created_files: Vec<String>,
    /// Whether `git init` ran.
    pub created_repo: bool,
    /// The first commit, when one was made.
    pub commit: Option<String>,
}

/// Creates (or completes) a home at `root` and commits what it added.
pub fn init(root: &Path, now: DateTime<Utc>) -> Result<InitReport, HomeError> {
    let home = Home::at(root)?;
    std::fs::create_dir_all(home.root())
        .map_err(|source| HomeError::Io(IoError::at(home.root(), source)))?;

    let mut created_files = Vec::new();
    let config_text = templates::commented_config();
    let mut files: Vec<(&str, &str)> = vec![
        ("hearth.toml", config_text.as_str()),
        (".gitignore", templates::GITIGNORE),
    ];
    files.extend_from_slice(templates::FILES);
    for (rel, contents) in files {
        let path = home.root().join(rel);
        if path.exists() {
            continue;
        }
        atomic::write(&path, contents.as_bytes())?;
        created_files.push(rel.to_string());
    }
    ensure_ignored(&home)?;
    for dir in [home.inbox_dir(), home.outbox_dir(), home.runtime_dir()] {
        std::fs::create_dir_all(&dir).map_err(|source| HomeError::Io(IoError::at(dir, source)))?;
    }

    let config = Config::load(&home.config_path())?;
    let created_repo = !home.root().join(".git").exists();
    let repo = if created_repo {
        Repo::init(home.root())?
    } else {
        Repo::open(home.root())?
    };
    let operator = Identity::operator(&config.git);
    let message = if created_repo {
        "init: new hearth home".to_string()
    } else {
        "init: complete hearth home".to_string()
    };
    let commit = repo.commit(&["."], &operator, &message, now)?;
    Ok(InitReport {
        home,
        created_files,
        created_repo,
        commit: commit.map(|oid| oid.to_string()),
    })
}

/// A home that came with its own `.gitignore` must still keep `.hearth/`
/// (locks, runtime files) out of history.
fn ensure_ignored(home: &Home) -> Result<(), HomeError> {
    let path = home.root().join(".gitignore");
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    if text
        .lines()
        .any(|l| matches!(l.trim(), "/.hearth/" | ".hearth/" | ".hearth" | "/.hearth"))
    {
        return Ok(());
    }
    let mut updated = text;
    if !updated.is_empty() && !updated.ends_with('\n') {
        updated.push('\n');
    }
    updated.push_str("# hearth's runtime files\n/.hearth/\n");
    atomic::write(&path, updated.as_bytes())?;
    Ok(())
}

/// True when `dir` is missing or has no entries: `hearth run` may make it a
/// home without asking.
pub fn is_missing_or_empty(dir: &Path) -> bool {
    match std::fs::read_dir(dir) {
        Ok(mut entries) => entries.next().is_none(),
        Err(e) => e.kind() == std::io::ErrorKind::NotFound,
    }
}
