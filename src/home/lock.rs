//! The home's two locks, both advisory `flock`s in `.hearth/`.
//!
//! - `run.lock` is held by the one supervisor for its whole life (and by a
//!   hand-run `hearth tick`): two supervisors on one home would double-tick
//!   and fight over the index. The holder's PID is written inside so the
//!   refusal can name it.
//! - `commit.lock` is held only around one commit, so CLI commands that write
//!   (`say`, later `ask` and `heal`) work while the supervisor runs.
//!
//! The kernel drops a `flock` when its holder dies, so a `kill -9` never
//! leaves a stale lock behind.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use super::Home;

/// A lock another process holds, or that could not be taken.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another process holds it.
    #[error("another hearth supervisor is running on this home (pid {pid}); lock: {}", path.display())]
    Held {
        /// The lock file.
        path: PathBuf,
        /// The pid written in it.
        pid: String,
    },
    /// The lock file could not be opened.
    #[error("could not lock {}: {source}", path.display())]
    Io {
        /// The lock file.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
}

impl LockError {
    /// What the operator can do about it.
    pub fn hint(&self) -> Option<String> {
        match self {
            LockError::Held { pid, .. } => Some(format!(
                "stop it first (`systemctl stop hearth` or `kill {pid}`), or talk to it with `hearth say`"
            )),
            LockError::Io { .. } => None,
        }
    }
}

/// Held while the supervisor lives; released on drop or death.
#[derive(Debug)]
pub struct RunLock {
    _file: File,
}

/// Held around one commit.
#[derive(Debug)]
pub struct CommitLock {
    _file: File,
}

impl RunLock {
    /// Takes the run lock or says who holds it. Never waits.
    pub fn acquire(home: &Home) -> Result<RunLock, LockError> {
        let path = run_lock_path(home);
        let mut file = open(&path)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                let mut pid = String::new();
                let _ = file.read_to_string(&mut pid);
                let pid = pid.trim().to_string();
                return Err(LockError::Held {
                    path,
                    pid: if pid.is_empty() {
                        "unknown".into()
                    } else {
                        pid
                    },
                });
            }
            Err(TryLockError::Error(source)) => return Err(LockError::Io { path, source }),
        }
        let io = |source| LockError::Io {
            path: path.clone(),
            source,
        };
        file.set_len(0).map_err(io)?;
        file.seek(SeekFrom::Start(0)).map_err(io)?;
        writeln!(file, "{}", std::process::id()).map_err(io)?;
        Ok(RunLock { _file: file })
    }
}

/// Whether some process holds the run lock right now (for `status`).
pub fn supervisor_running(home: &Home) -> bool {
    let path = run_lock_path(home);
    let Ok(file) = File::open(&path) else {
        return false;
    };
    match file.try_lock_shared() {
        Ok(()) => {
            let _ = file.unlock();
            false
        }
        Err(_) => true,
    }
}

/// Held, shared, by each `hearth ask` from before it writes its question
/// line to after its commit. What an ask writes is the ask's commit's: while any
/// ask holds this, the supervisor does not look for hand edits (it would
/// take the ask's half-done writes for the operator's), and looks at
/// everything the next time. The kernel lets go of it when the ask dies.
#[derive(Debug)]
pub struct AskLock {
    _file: File,
}

impl AskLock {
    /// Takes a share of the ask lock; asks never wait for one another.
    pub fn acquire(home: &Home) -> Result<AskLock, LockError> {
        let path = home.ask_lock_path();
        let file = open(&path)?;
        file.lock_shared()
            .map_err(|source| LockError::Io { path, source })?;
        Ok(AskLock { _file: file })
    }
}

/// Held by the supervisor around a look for hand edits: an ask that
/// starts meanwhile waits the moment the look takes.
#[derive(Debug)]
pub struct AsksHeld {
    _file: Option<File>,
}

/// The ask lock, exclusive, for a look for hand edits; `None` while an ask
/// is running (then the look waits for a later turn).
pub fn hold_asks(home: &Home) -> Option<AsksHeld> {
    // A lock file that cannot even be made cannot be held by an ask either.
    let Ok(file) = open(&home.ask_lock_path()) else {
        return Some(AsksHeld { _file: None });
    };
    match file.try_lock() {
        Ok(()) => Some(AsksHeld { _file: Some(file) }),
        Err(TryLockError::WouldBlock) => None,
        Err(TryLockError::Error(_)) => Some(AsksHeld { _file: None }),
    }
}

impl CommitLock {
    /// Waits for the commit lock; commits are short, so waiting is right.
    pub fn acquire(home: &Home) -> Result<CommitLock, LockError> {
        let path = home.commit_lock_path();
        let file = open(&path)?;
        file.lock()
            .map_err(|source| LockError::Io { path, source })?;
        Ok(CommitLock { _file: file })
    }
}

fn run_lock_path(home: &Home) -> PathBuf {
    home.run_lock_path()
}

fn open(path: &Path) -> Result<File, LockError> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|source| LockError::Io {
            path: dir.to_path_buf(),
            source,
        })?;
    }
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .map_err(|source| LockError::Io {
            path: path.to_path_buf(),
            source,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_run_lock_names_the_holder() {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::at(dir.path()).unwrap();
        let _held = RunLock::acquire(&home).unwrap();
        assert!(supervisor_running(&home));
        let err = RunLock::acquire(&home).unwrap_err();
        assert!(
            err.to_string().contains(&std::process::id().to_string()),
            "{err}"
        );
    }

    #[test]
    fn run_lock_is_free_after_drop() {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::at(dir.path()).unwrap();
        drop(RunLock::acquire(&home).unwrap());
        assert!(!supervisor_running(&home));
        RunLock::acquire(&home).unwrap();
    }
}
