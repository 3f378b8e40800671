//! The home's locks, all advisory `flock`s in `.hearth/`.
//!
//! - `run.lock` is held by the one supervisor for its whole life (and by a
//!   hand-run `hearth tick`): two supervisors on one home would double-tick
//!   and fight over the index. The holder's PID is written inside so the
//!   refusal can name it.
//! - `commit.lock` is held only around one commit, so CLI commands that write
//!   (`say`, `ask`, `heal`) work while the supervisor runs.
//! - `ask.lock` and `ask-gate.lock` keep an ask's writes out of the
//!   operator's commits ([`AskLock`]).
//!
//! The kernel drops a `flock` when its holder dies, so a `kill -9` never
//! leaves a stale lock behind.

use crate::io_hint::IoError;
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
    #[error(transparent)]
    Io(#[from] IoError),
}

impl LockError {
    /// What the operator can do about it.
    pub fn hint(&self) -> String {
        match self {
            LockError::Held { pid, .. } => format!(
                "stop it first (`systemctl stop hearth` or `kill {pid}`), or talk to it with `hearth say`"
            ),
            LockError::Io(e) => e.hint(),
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
            Err(TryLockError::Error(source)) => {
                return Err(LockError::Io(
                    IoError::at(path, source).framed("could not lock {}"),
                ))
            }
        }
        // The pid is for the refusal's message and `status` only: written
        // over the last one in place and then cut to length (cutting never
        // needs room), so a disk full to the last byte, with no block for a
        // file that was emptied first, still lets a supervisor start and
        // wait for room; and if even that fails, the lock is held all the
        // same.
        let line = format!("{}\n", std::process::id());
        let written = file
            .seek(SeekFrom::Start(0))
            .and_then(|_| file.write_all(line.as_bytes()))
            .and_then(|()| file.set_len(line.len() as u64));
        if let Err(e) = written {
            tracing::warn!(
                "could not write the pid into {} ({e}); the lock is held all the same",
                path.display()
            );
        }
        Ok(RunLock { _file: file })
    }
}

/// The pid the supervisor wrote into the run lock, if it could.
pub fn supervisor_pid(home: &Home) -> Option<u32> {
    std::fs::read_to_string(run_lock_path(home))
        .ok()?
        .trim()
        .parse()
        .ok()
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
/// take the ask's half-done writes for the operator's). The kernel lets go
/// of it when the ask dies.
///
/// Asks share it among themselves, so a steady stream of overlapping asks
/// would never leave the supervisor a moment to look: hand edits waited
/// without bound (8 asks at once for 90 s: not one committed). So the
/// supervisor is preferred, as a writer is in a fair reader-writer lock: it
/// closes the *gate* (`ask-gate.lock`, exclusive), which every ask passes
/// (shared, for an instant) before taking its share; asks that start while
/// it waits wait behind it, the running ones end, it looks, and the gate
/// opens.
#[derive(Debug)]
pub struct AskLock {
    _file: File,
}

impl AskLock {
    /// Takes a share of the ask lock, once a supervisor waiting to look for
    /// hand edits has looked; asks never wait for one another.
    pub fn acquire(home: &Home) -> Result<AskLock, LockError> {
        let gate_path = home.ask_gate_path();
        let gate = open(&gate_path)?;
        gate.lock_shared().map_err(|source| {
            LockError::Io(IoError::at(gate_path, source).framed("could not lock {}"))
        })?;
        let path = home.ask_lock_path();
        let file = open(&path)?;
        file.lock_shared().map_err(|source| {
            LockError::Io(IoError::at(path, source).framed("could not lock {}"))
        })?;
        drop(gate);
        Ok(AskLock { _file: file })
    }
}

/// Held by the supervisor around a look for hand edits: an ask that
/// starts meanwhile waits the moment the look takes.
#[derive(Debug)]
pub struct AsksHeld {
    _file: Option<File>,
}

/// The ask lock, exclusive, for a look for hand edits. While asks run, the
/// gate is closed to new ones and the running ones are waited for, up to
/// `wait`; `None` if they outlast it (the look waits for a later turn).
pub fn hold_asks(home: &Home, wait: std::time::Duration) -> Option<AsksHeld> {
    // A lock file that cannot even be made cannot be held by an ask either.
    let Ok(file) = open(&home.ask_lock_path()) else {
        return Some(AsksHeld { _file: None });
    };
    match file.try_lock() {
        Ok(()) => return Some(AsksHeld { _file: Some(file) }),
        Err(TryLockError::WouldBlock) => {}
        Err(TryLockError::Error(_)) => return Some(AsksHeld { _file: None }),
    }
    // Asks hold the gate only for an instant, so this wait is short.
    let gate = open(&home.ask_gate_path()).ok()?;
    gate.lock().ok()?;
    let started = std::time::Instant::now();
    loop {
        match file.try_lock() {
            Ok(()) => return Some(AsksHeld { _file: Some(file) }),
            Err(TryLockError::WouldBlock) if started.elapsed() < wait => {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            Err(TryLockError::WouldBlock) => return None,
            Err(TryLockError::Error(_)) => return Some(AsksHeld { _file: None }),
        }
    }
}

impl CommitLock {
    /// Waits for the commit lock; commits are short, so waiting is right.
    pub fn acquire(home: &Home) -> Result<CommitLock, LockError> {
        let path = home.commit_lock_path();
        let file = open(&path)?;
        file.lock().map_err(|source| {
            LockError::Io(IoError::at(path, source).framed("could not lock {}"))
        })?;
        Ok(CommitLock { _file: file })
    }
}

fn run_lock_path(home: &Home) -> PathBuf {
    home.run_lock_path()
}

fn open(path: &Path) -> Result<File, LockError> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|source| {
            LockError::Io(IoError::at(dir, source).framed("could not lock {}"))
        })?;
    }
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .map_err(|source| LockError::Io(IoError::at(path, source).framed("could not lock {}")))
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
