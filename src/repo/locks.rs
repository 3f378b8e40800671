//! Leftovers of a killed git writer. A `kill -9` (or power loss) in the middle
//! of a commit leaves `.git/index.lock` and friends behind, and libgit2
//! refuses to write while they exist; its half-written objects stay as
//! `objects/**/tmp_object_git2_*`.
//!
//! A lock is not always a leftover: the operator's `git commit -a` holds
//! `index.lock` while their editor is open. A lock counts as stale when it is
//! older than [`STALE_AFTER`] or when no process is at work on it: no `git`
//! process has its working directory in the home, and no process has a lock
//! file itself open (as libgit2 and git do while they write it). A shell that
//! merely `cd`-ed into the home does not count, nor does a process that only
//! reads the repository (a `hearth ask` has its packs open for minutes: it
//! counted, and a lock a `kill -9` left stayed ten minutes in everyone's way). A
//! lock with a live owner is waited for a little, then left in place and
//! reported. Callers hold the run lock and the commit lock, so no hearth
//! process is the owner.

use crate::io_hint::IoError;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::RepoError;

/// A lock this old is stale whoever holds it.
pub const STALE_AFTER: Duration = Duration::from_secs(10 * 60);

/// What [`clean_stale_locks`] did.
#[derive(Debug, Default)]
pub struct LockCleanup {
    /// Removed, to be logged: the operator should know.
    pub removed: Vec<PathBuf>,
    /// Left in place: (lock, who holds it).
    pub held: Vec<(PathBuf, String)>,
}

/// Removes stale lock files and libgit2 temp objects under `root/.git`,
/// after waiting up to `owner_wait` for a live owner to let go.
pub fn clean_stale_locks(root: &Path, owner_wait: Duration) -> Result<LockCleanup, RepoError> {
    let git_dir = root.join(".git");
    let mut done = LockCleanup::default();
    let mut locks = Vec::new();
    if let Ok(entries) = std::fs::read_dir(&git_dir) {
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_file() && path.extension().is_some_and(|e| e == "lock") {
                locks.push(path);
            }
        }
    }
    for entry in walkdir::WalkDir::new(git_dir.join("refs"))
        .into_iter()
        .flatten()
    {
        if entry.file_type().is_file() && entry.path().extension().is_some_and(|e| e == "lock") {
            locks.push(entry.into_path());
        }
    }
    if !locks.is_empty() {
        let started = Instant::now();
        let mut owners = holders(root, &locks);
        while !owners.is_empty() && started.elapsed() < owner_wait && locks.iter().any(|l| young(l))
        {
            std::thread::sleep(Duration::from_millis(100));
            locks.retain(|l| l.exists());
            owners = holders(root, &locks);
        }
        for lock in locks.into_iter().filter(|l| l.exists()) {
            if !owners.is_empty() && young(&lock) {
                done.held.push((lock, owners.join(", ")));
            } else {
                done.removed.push(lock);
            }
        }
    }
    // Only libgit2 writes these, and every libgit2 writer of a home is a
    // hearth process holding the commit lock the caller holds.
    for entry in walkdir::WalkDir::new(git_dir.join("objects"))
        .max_depth(2)
        .into_iter()
        .flatten()
    {
        let name = entry.file_name().to_string_lossy();
        if entry.file_type().is_file() && name.starts_with("tmp_object_git2_") {
            done.removed.push(entry.into_path());
        }
    }
    for path in &done.removed {
        match std::fs::remove_file(path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(source) => {
                return Err(RepoError::Io(
                    IoError::at(path.clone(), source).framed("could not write or remove {}"),
                ))
            }
        }
    }
    Ok(done)
}

fn young(lock: &Path) -> bool {
    std::fs::metadata(lock)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|m| crate::clock::file_time_now().duration_since(m).ok())
        .is_some_and(|age| age < STALE_AFTER)
}

/// Other processes at work on `locks`, as `pid N (name)`: a `git…`
/// process whose working directory is in the home (the operator's `git
/// commit` keeps `index.lock` while its editor is open, with no file open),
/// or any process with one of the lock files open. Processes this one may
/// not inspect are not seen (their lock ages out instead).
fn holders(root: &Path, locks: &[PathBuf]) -> Vec<String> {
    let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let locks: Vec<PathBuf> = locks
        .iter()
        .map(|l| l.canonicalize().unwrap_or_else(|_| l.clone()))
        .collect();
    let me = std::process::id().to_string();
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for proc_dir in procs.flatten() {
        let pid = proc_dir.file_name().to_string_lossy().into_owned();
        if pid == me || !pid.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let dir = proc_dir.path();
        let name = std::fs::read_to_string(dir.join("comm")).unwrap_or_default();
        let at_work = (name.starts_with("git")
            && std::fs::read_link(dir.join("cwd")).is_ok_and(|cwd| cwd.starts_with(&root)))
            || std::fs::read_dir(dir.join("fd")).is_ok_and(|fds| {
                fds.flatten().any(|fd| {
                    std::fs::read_link(fd.path()).is_ok_and(|target| locks.contains(&target))
                })
            });
        if at_work {
            found.push(format!("pid {pid} ({})", name.trim()));
        }
    }
    found
}

/// Runs `op` again while another git process holds a lock it needs
/// (`index.lock`, a ref lock), for up to `wait`: an operator's `git`
/// command is waited for, not failed on. Past it the caller gets
/// [`RepoError::Locked`]: a supervisor then pauses its commits and tries
/// again later (`supervisor/git_wait.rs`); a command says so and exits.
///
/// Every caller holds the commit lock, so no hearth process owns the lock
/// in the way: when the wait runs out, a lock no process is at work on (a
/// writer killed with it held, an ask's `kill -9` mid-commit) is removed
/// and `op` tried once more, rather than every commit after it waiting and
/// failing until the next start-up.
pub(super) fn retry_locked<T>(
    root: &Path,
    wait: Duration,
    mut op: impl FnMut() -> Result<T, git2::Error>,
) -> Result<T, git2::Error> {
    let started = std::time::Instant::now();
    let mut cleaned = false;
    loop {
        match op() {
            Err(e) if e.code() == git2::ErrorCode::Locked && started.elapsed() < wait => {
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            Err(e) if e.code() == git2::ErrorCode::Locked && !cleaned => {
                cleaned = true;
                match clean_stale_locks(root, Duration::ZERO) {
                    Ok(done) if !done.removed.is_empty() => {
                        for path in done.removed {
                            tracing::warn!(
                                "removed {}, left by a git writer that is gone",
                                path.display()
                            );
                        }
                    }
                    _ => return Err(e),
                }
            }
            other => return other,
        }
    }
}

/// How long a commit waits for another git process's lock, unless
/// `[git] lock_wait_s` says otherwise.
pub const LOCK_WAIT: Duration = Duration::from_secs(5);

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // fixtures, not state
mod tests {
    use super::*;

    #[test]
    fn removes_locks_and_temp_objects_but_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        crate::repo::Repo::init(dir.path()).unwrap();
        let git = dir.path().join(".git");
        std::fs::write(git.join("index.lock"), "").unwrap();
        std::fs::create_dir_all(git.join("refs/hearth")).unwrap();
        std::fs::write(git.join("refs/hearth/good.lock"), "").unwrap();
        std::fs::create_dir_all(git.join("objects/ab")).unwrap();
        std::fs::write(git.join("objects/ab/tmp_object_git2_x1"), "").unwrap();
        std::fs::write(git.join("objects/ab/cdef"), "keep").unwrap();
        let removed = clean_stale_locks(dir.path(), LOCK_WAIT).unwrap().removed;
        assert_eq!(removed.len(), 3, "{removed:?}");
        assert!(git.join("objects/ab/cdef").exists());
        assert!(git.join("HEAD").exists());
    }

    #[test]
    fn a_young_lock_with_a_process_at_work_in_the_home_is_left_and_named() {
        let dir = tempfile::tempdir().unwrap();
        crate::repo::Repo::init(dir.path()).unwrap();
        let lock = dir.path().join(".git/index.lock");
        std::fs::write(&lock, "").unwrap();
        // A process with the lock open, as git holds it while it writes.
        let mut owner = std::process::Command::new("sleep")
            .arg("30")
            .stdin(std::fs::File::open(&lock).unwrap())
            .spawn()
            .unwrap();
        let done = clean_stale_locks(dir.path(), LOCK_WAIT).unwrap();
        owner.kill().unwrap();
        owner.wait().unwrap();
        assert!(done.removed.is_empty(), "{:?}", done.removed);
        assert_eq!(done.held.len(), 1);
        assert!(done.held[0].1.contains("(sleep)"), "{:?}", done.held);
        assert!(dir.path().join(".git/index.lock").exists());
    }
}
