//! git's lock on the index, held by hearth across a commit as git holds
//! it: from reading the index to moving HEAD.
//!
//! libgit2 takes `.git/index.lock` only for the instant it writes the index,
//! so a commit of hearth's used to leave its staged paths in `.git/index`
//! while it moved HEAD. An operator's `git commit` in that moment committed
//! them as its own — a tick's state, under the operator's name, and no
//! commit of the tick's. Holding the lock as git does, the operator's git
//! waits or says "another git process seems to be running", as with any
//! two gits; and the new index is written under the lock's name and
//! renamed into place only once HEAD has moved (git's own way), so a
//! failed commit leaves `.git/index` as it was.

use std::path::{Path, PathBuf};
use std::time::Duration;

use git2::{ErrorClass, ErrorCode, Index};

use super::locks::retry_locked;

/// `.git/index.lock`, held: created by hearth (never another's taken).
pub(super) struct GitIndexLock {
    path: PathBuf,
    index: PathBuf,
    placed: bool,
}

impl GitIndexLock {
    /// Takes the lock of the repository whose git directory is `git_dir`
    /// (the home `root`'s), waiting up to `wait` for another git's.
    pub(super) fn take(
        root: &Path,
        git_dir: &Path,
        wait: Duration,
    ) -> Result<GitIndexLock, git2::Error> {
        let path = git_dir.join("index.lock");
        retry_locked(root, wait, || {
            match std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path)
            {
                Ok(_) => Ok(()),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Err(git2::Error::new(
                    ErrorCode::Locked,
                    ErrorClass::Index,
                    format!("{} exists: another git is at work", path.display()),
                )),
                Err(e) => Err(git2::Error::new(
                    ErrorCode::GenericError,
                    ErrorClass::Os,
                    format!("could not create {}: {e}", path.display()),
                )),
            }
        })?;
        Ok(GitIndexLock {
            index: git_dir.join("index"),
            path,
            placed: false,
        })
    }

    /// The index as it is now, opened at the lock's path: what hearth
    /// stages and writes there is nobody's until [`GitIndexLock::place`].
    /// A missing index is an empty one. Errors are libgit2's (a corrupt
    /// index is the caller's to rebuild: [`GitIndexLock::empty`]).
    pub(super) fn open(&self) -> Result<Index, git2::Error> {
        match std::fs::copy(&self.index, &self.path) {
            Ok(_) => Index::open(&self.path),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => self.empty(),
            Err(e) => Err(git2::Error::from_str(&format!(
                "could not copy {} to {}: {e}",
                self.index.display(),
                self.path.display()
            ))),
        }
    }

    /// An empty index at the lock's path (libgit2 writes a valid empty
    /// index file; a file of no bytes is no index).
    pub(super) fn empty(&self) -> Result<Index, git2::Error> {
        let fresh = self.path.with_extension("hearth-empty");
        let _ = std::fs::remove_file(&fresh);
        Index::open(&fresh)?.write()?;
        std::fs::rename(&fresh, &self.path).map_err(|e| {
            git2::Error::from_str(&format!("could not place {}: {e}", self.path.display()))
        })?;
        Index::open(&self.path)
    }

    /// Puts the index written at the lock's path in place of `.git/index`,
    /// which releases the lock (git's commit of a lock file).
    pub(super) fn place(mut self) -> std::io::Result<()> {
        std::fs::rename(&self.path, &self.index)?;
        self.placed = true;
        Ok(())
    }
}

impl Drop for GitIndexLock {
    /// Not placed: the lock goes and `.git/index` stays as it was.
    fn drop(&mut self) {
        if !self.placed {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}
