//! Every git operation hearth makes. git2 stays inside this module: the rest
//! of hearth speaks in paths, identities and commit ids (as hex strings).
//!
//! libgit2 does not fsync by default; hearth turns it on once per process
//! ([`enable_fsync`]) because a home must survive power loss with every
//! commit it reported intact.

mod config_guard;
mod conflict;
mod credentials;
mod error;
mod git_cli;
mod history;
mod index_lock;
mod locks;
mod mirror;
mod origin_store;
mod origins;
mod outside;
mod pack;
mod proposal;
mod push;
pub mod reflog;
mod stable_read;
mod tick_commit;
pub mod trailers;
mod worktree;

use std::path::{Path, PathBuf};
use std::sync::Once;

use chrono::{DateTime, Utc};
use git2::{ErrorCode, Repository};

pub use credentials::RemoteCredentials;
pub use error::RepoError;
pub use git_cli::needs_git_command;
use index_lock::GitIndexLock;
pub use locks::clean_stale_locks;
use locks::retry_locked;
pub use mirror::{Fetched, HeadFile};
pub use origins::LineOrigin;
pub use outside::{line_digest, name_digest, OutsideWords};
pub use pack::{PackPolicy, Packed, PACKED_REF};
pub use proposal::{DiffSince, FileDiff, Merged, RefCommit, RemovedLine};
use worktree::{Mode, RootIgnore, Scanner};
pub use worktree::{RepoPath, Scan};

use crate::config::GitConfig;
use crate::io_hint::IoError;

/// The ref that names the last commit of an exit-0 tick.
pub const GOOD_REF: &str = "refs/hearth/good";

/// Who a commit is by: the agent (`hearth`) or the operator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// The author's name.
    pub name: String,
    /// The author's email.
    pub email: String,
}

impl Identity {
    /// hearth itself: ticks, heals, flares.
    pub fn hearth() -> Identity {
        Identity {
            name: "hearth".into(),
            email: "hearth@localhost".into(),
        }
    }

    /// The operator, as `[git]` names them: hand edits, `say`, `heal --resume`.
    pub fn operator(git: &GitConfig) -> Identity {
        Identity {
            name: git.operator_name.clone(),
            email: git.operator_email.clone(),
        }
    }
}

/// How many times a commit builds again on a branch another committer
/// moved under it before it says so ([`Repo::commit_scoped`]).
pub const MOVED_TRIES: u32 = 8;

/// Past this many files re-read unchanged, a look writes the index anyway.
const REFRESH_KEEP: usize = 64;

/// What [`Repo::commit_scoped`] did.
#[derive(Debug, Default)]
pub struct Committed {
    /// The new commit, or `None` when nothing changed.
    pub commit: Option<String>,
    /// The paths that changed.
    pub paths: Vec<RepoPath>,
    /// What could not be committed, by name (logged by the caller).
    pub problems: Vec<String>,
    /// Links to a folder of the home left out of the commit (each also in
    /// `problems`), as the home names them: the supervisor flares them.
    pub home_links: Vec<String>,
}

/// An open home repository.
pub struct Repo {
    git: Repository,
    root: PathBuf,
    /// Whether libgit2's in-memory index is the index file as this `Repo`
    /// last read or wrote it (set when a look or commit has settled the
    /// index). Then the next one re-reads the file only if someone else
    /// changed it: a long-lived supervisor does not parse and checksum
    /// 1 MB (10,000 files) twice a tick.
    index_fresh: std::cell::Cell<bool>,
    /// How long a write waits for another git's lock (`[git] lock_wait_s`).
    lock_wait: std::time::Duration,
    /// The outside words as of a HEAD (`outside.rs`), kept for this
    /// `Repo`'s life: an exchange that judges many reads opens one `Repo`
    /// and reads the set once per HEAD.
    outside_memo: std::cell::RefCell<Option<(git2::Oid, std::sync::Arc<OutsideWords>)>>,
}

/// Turns on libgit2's fsync of objects, refs and the index for this process.
pub fn enable_fsync() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // SAFETY: git_libgit2_opts with ENABLE_FSYNC_GITDIR takes one int and
        // only sets a global flag; git2's own option setters call it the same
        // way. Called once, before any repository is opened by hearth.
        #[allow(unsafe_code)] // the four unsafe blocks of hearth; see SAFETY
        unsafe {
            libgit2_sys::init();
            libgit2_sys::git_libgit2_opts(
                libgit2_sys::GIT_OPT_ENABLE_FSYNC_GITDIR as libc::c_int,
                1 as libc::c_int,
            );
        }
    });
}

impl Repo {
    /// `git init` at `root` with `main` as the first branch.
    pub fn init(root: &Path) -> Result<Repo, RepoError> {
        enable_fsync();
        let mut opts = git2::RepositoryInitOptions::new();
        opts.initial_head("main");
        let git = Repository::init_opts(root, &opts).map_err(|e| git_error(root, e))?;
        Ok(Repo {
            git,
            root: root.to_path_buf(),
            index_fresh: std::cell::Cell::new(false),
            lock_wait: locks::LOCK_WAIT,
            outside_memo: Default::default(),
        })
    }

    /// Opens the repository at `root` (not a parent's) and checks that its
    /// HEAD can be read; an unborn HEAD (no commit yet) is fine.
    pub fn open(root: &Path) -> Result<Repo, RepoError> {
        enable_fsync();
        if !root.join(".git").exists() {
            return Err(RepoError::NotARepo {
                path: root.to_path_buf(),
            });
        }
        let git = Repository::open(root).map_err(|e| match e.code() {
            ErrorCode::NotFound => RepoError::NotARepo {
                path: root.to_path_buf(),
            },
            ErrorCode::Owner => RepoError::NotOwner {
                path: root.to_path_buf(),
            },
            _ => RepoError::BrokenHead {
                path: root.to_path_buf(),
                message: e.message().to_string(),
            },
        })?;
        match git.head() {
            Ok(head) => {
                head.peel_to_commit().map_err(|e| RepoError::BrokenHead {
                    path: root.to_path_buf(),
                    message: e.message().to_string(),
                })?;
            }
            Err(e) if e.code() == ErrorCode::UnbornBranch => {}
            Err(e) => {
                return Err(RepoError::BrokenHead {
                    path: root.to_path_buf(),
                    message: e.message().to_string(),
                })
            }
        }
        Ok(Repo {
            git,
            root: root.to_path_buf(),
            index_fresh: std::cell::Cell::new(false),
            lock_wait: locks::LOCK_WAIT,
            outside_memo: Default::default(),
        })
    }

    /// How long this repository's writes wait for another git's lock
    /// (`[git] lock_wait_s`; 5 s unless set).
    pub fn set_lock_wait(&mut self, wait: std::time::Duration) {
        self.lock_wait = wait;
    }

    /// What changed in the whole home since the last commit (added,
    /// modified, deleted; never `.git/` or `.hearth/`, nor what the home's own
    /// `.gitignore` ignores), and what could not be looked at, by name.
    pub fn changes(&self) -> Result<Scan, RepoError> {
        let mut problems = Vec::new();
        let (stamp, mut index) = self.open_index(&mut problems)?;
        let (ignore, ignore_problems) = RootIgnore::load(&self.root);
        problems.extend(ignore_problems);
        let mut scan = Scanner {
            git: &self.git,
            root: &self.root,
            index: &mut index,
            stamp,
            ignore: &ignore,
            mode: Mode::Look,
        }
        .scan(&worktree::scope_of(&["."]))
        .map_err(|e| self.error(e))?;
        // A look stages nothing: memory still holds the file's index.
        self.index_fresh.set(true);
        scan.problems.splice(0..0, problems);
        Ok(scan)
    }

    /// The paths of [`Repo::changes`], as text (escaped where not UTF-8).
    pub fn dirty_paths(&self) -> Result<Vec<String>, RepoError> {
        Ok(self
            .changes()?
            .changed
            .iter()
            .map(ToString::to_string)
            .collect())
    }

    /// Stages `pathspecs` (literal paths, files or directories; `.` for the
    /// whole home; deletions included) and commits them as `who`. Returns
    /// `None` when nothing changed. Callers hold the home's commit lock.
    pub fn commit(
        &self,
        pathspecs: &[&str],
        who: &Identity,
        message: &str,
        now: DateTime<Utc>,
    ) -> Result<Option<String>, RepoError> {
        let outcome = self.commit_scoped(pathspecs, who, &|_| message.to_string(), now)?;
        for problem in &outcome.problems {
            tracing::warn!("{problem}");
        }
        Ok(outcome.commit)
    }

    /// [`Repo::commit`], with the message made from the paths that changed,
    /// and what could not be committed returned by name. A `hearth.toml`
    /// that holds a password in a URL is never in the commit: the tree is
    /// judged before HEAD moves (`config_guard`).
    ///
    /// Another committer is never fatal: when the branch moved between
    /// reading HEAD and writing the commit (the operator's `git commit`,
    /// a `git pull`, a reset), libgit2 refuses to move it and hearth looks
    /// again from the new tip — index re-read, paths scanned again, so what
    /// the other commit took is its own and the rest is this one's — at
    /// most [`MOVED_TRIES`] times. Past that the branch keeps moving under
    /// every try: [`RepoError::Moved`], which a supervisor waits out as it
    /// waits for git's lock.
    pub fn commit_scoped(
        &self,
        pathspecs: &[&str],
        who: &Identity,
        message: &dyn Fn(&[RepoPath]) -> String,
        now: DateTime<Utc>,
    ) -> Result<Committed, RepoError> {
        let mut tries = 1;
        loop {
            match self.commit_once(pathspecs, who, message, now) {
                Err(RepoError::Moved { .. }) if tries < MOVED_TRIES => {
                    tries += 1;
                    // The other committer wrote the index too.
                    self.index_fresh.set(false);
                    tracing::debug!("the branch moved under a commit: building on its new tip");
                }
                done => return done,
            }
        }
    }

    fn commit_once(
        &self,
        pathspecs: &[&str],
        who: &Identity,
        message: &dyn Fn(&[RepoPath]) -> String,
        now: DateTime<Utc>,
    ) -> Result<Committed, RepoError> {
        let mut problems = Vec::new();
        let scope = worktree::scope_of(pathspecs);
        // git's lock on the index, held until HEAD has moved: what this
        // commit stages is no other committer's to take.
        let lock = GitIndexLock::take(&self.root, self.git.path(), self.lock_wait)
            .map_err(|e| self.error(e))?;
        let (stamp, mut index) = self.open_locked_index(&lock, &mut problems)?;
        let (ignore, ignore_problems) = RootIgnore::load(&self.root);
        problems.extend(ignore_problems);
        let scan = Scanner {
            git: &self.git,
            root: &self.root,
            index: &mut index,
            stamp,
            ignore: &ignore,
            mode: Mode::Stage,
        }
        .scan(&scope)
        .map_err(|e| self.error(e))?;
        problems.extend(scan.problems);
        let home_links = scan.home_links.iter().map(ToString::to_string).collect();
        let parent = self.head_commit()?;
        let head_tree = match &parent {
            Some(p) => Some(p.tree().map_err(|e| self.error(e))?),
            None => None,
        };
        let unstaged = worktree::unstage_outside(&self.git, &mut index, head_tree.as_ref(), &scope)
            .map_err(|e| self.error(e))?;
        // The tree first: writing it fills the index's tree cache, which the
        // index file then keeps, so the next commit rebuilds only the trees
        // on changed paths (written the other way round, every commit
        // rebuilt all of them: 15 ms on 10,000 files).
        let tree_id = index.write_tree_to(&self.git).map_err(|e| self.error(e))?;
        let mut changed = scan.changed;
        let tree_id = self.keep_password_out(
            tree_id,
            head_tree.as_ref(),
            &mut index,
            &mut changed,
            &mut problems,
        )?;
        // Nothing staged or put back: the index file already says all this
        // (1 MB and an fsync saved per look on 10,000 files). Refreshed
        // entries are kept when there are many, so a mass touch is not
        // hashed again at every look.
        // An index rebuilt or missing (no stamp) is written whatever else
        // changed: a corrupt one was set aside, and none may stay missing.
        let rewrite =
            !changed.is_empty() || unstaged || scan.refreshed > REFRESH_KEEP || stamp.is_none();
        if rewrite {
            // Version 4 compresses each path against the one before it:
            // 0.96 MB → 0.7 MB on 10,000 files, 7.4 → 4.9 ms a write. git
            // has read it since 1.8.
            if index.version() < 4 {
                index.set_version(4).map_err(|e| self.error(e))?;
            }
            // At the lock's path: `.git/index` is untouched until placed.
            index.write().map_err(|e| self.error(e))?;
        }
        // The index this `Repo` holds in memory is not the file placed.
        self.index_fresh.set(false);
        let mut done = Committed {
            commit: None,
            paths: changed,
            problems,
            home_links,
        };
        let place = |lock: GitIndexLock| match rewrite {
            true => lock
                .place()
                .map_err(|e| self.io_error(&self.root.join(".git/index"), e)),
            false => Ok(()), // dropped: the lock goes, the index as it was
        };
        if parent.as_ref().is_some_and(|p| p.tree_id() == tree_id) {
            place(lock)?;
            return Ok(done);
        }
        let tree = self.git.find_tree(tree_id).map_err(|e| self.error(e))?;
        let time = git2::Time::new(now.timestamp(), 0);
        let sig = git2::Signature::new(&who.name, &who.email, &time).map_err(|e| self.error(e))?;
        let parents: Vec<&git2::Commit> = parent.iter().collect();
        let text = message(&done.paths);
        let oid = retry_locked(&self.root, self.lock_wait, || {
            self.git
                .commit(Some("HEAD"), &sig, &sig, &text, &tree, &parents)
        })
        .map_err(|e| match e.code() {
            // "current tip is not the first parent", "old reference value
            // does not match": someone else moved the branch meanwhile.
            ErrorCode::Modified => RepoError::Moved {
                path: self.root.clone(),
                message: e.message().to_string(),
            },
            _ => self.error(e),
        })?;
        done.commit = Some(oid.to_string());
        // HEAD has moved: the index that matches it takes its place. (A
        // kill before this leaves the old index beside the new HEAD; the
        // next look stages the files again and finds nothing to commit.)
        place(lock)?;
        Ok(done)
    }

    /// The index, read fresh at `lock`'s path, with the index file's mtime
    /// (for racy entries). A corrupt index file is set aside and the index
    /// rebuilt from HEAD, as [`Repo::open_index`] does; one with unmerged
    /// paths is refused.
    fn open_locked_index(
        &self,
        lock: &GitIndexLock,
        problems: &mut Vec<String>,
    ) -> Result<(Option<std::time::SystemTime>, git2::Index), RepoError> {
        let file = self.git.path().join("index");
        let stamp = std::fs::metadata(&file).and_then(|m| m.modified()).ok();
        match lock.open() {
            Ok(index) => self.refuse_unmerged(&index).map(|()| (stamp, index)),
            Err(broken) if broken.class() == git2::ErrorClass::Index && file.exists() => {
                self.set_aside(&file, &broken, problems)?;
                let mut index = lock.empty().map_err(|e| self.error(e))?;
                if let Some(head) = self.head_commit()? {
                    let tree = head.tree().map_err(|e| self.error(e))?;
                    index.read_tree(&tree).map_err(|e| self.error(e))?;
                }
                Ok((None, index))
            }
            Err(e) => Err(self.error(e)),
        }
    }

    /// The index, read fresh, with the index file's mtime (for racy
    /// entries). A corrupt index file is moved aside and the index rebuilt
    /// from HEAD: it is only a cache of HEAD plus stat data, and the files
    /// themselves are untouched, so nothing is lost.
    /// An index with unmerged paths (a merge, rebase or cherry-pick the
    /// operator started and did not finish) is one hearth cannot look at
    /// or commit over: named with its files and the way out.
    fn refuse_unmerged(&self, index: &git2::Index) -> Result<(), RepoError> {
        if !index.has_conflicts() {
            return Ok(());
        }
        let mut paths: Vec<String> = index
            .conflicts()
            .map_err(|e| self.error(e))?
            .flatten()
            .filter_map(|c| c.our.or(c.their).or(c.ancestor))
            .map(|e| String::from_utf8_lossy(&e.path).into_owned())
            .collect();
        paths.dedup();
        paths.truncate(5);
        Err(RepoError::Unmerged {
            path: self.root.clone(),
            paths,
        })
    }

    fn open_index(
        &self,
        problems: &mut Vec<String>,
    ) -> Result<(Option<std::time::SystemTime>, git2::Index), RepoError> {
        let file = self.git.path().join("index");
        let stamp = std::fs::metadata(&file).and_then(|m| m.modified()).ok();
        // Unless known fresh, read in full: what a failed commit left in
        // memory is dropped. Fresh, libgit2 still re-reads a file whose
        // stamp (mtime, size, inode) moved: another process committed.
        let force = !self.index_fresh.replace(false);
        let broken = match self.git.index() {
            Ok(mut index) => match retry_locked(&self.root, self.lock_wait, || index.read(force)) {
                Ok(()) => return self.refuse_unmerged(&index).map(|()| (stamp, index)),
                Err(e) => e,
            },
            Err(e) => e,
        };
        if broken.class() != git2::ErrorClass::Index || !file.exists() {
            return Err(self.error(broken));
        }
        self.set_aside(&file, &broken, problems)?;
        let mut index = self.git.index().map_err(|e| self.error(e))?;
        index.read(true).map_err(|e| self.error(e))?;
        if let Some(head) = self.head_commit()? {
            let tree = head.tree().map_err(|e| self.error(e))?;
            index.read_tree(&tree).map_err(|e| self.error(e))?;
        }
        Ok((None, index))
    }

    /// Moves the corrupt index `file` aside, named by the time, and says so
    /// in `problems`: it is only a cache of HEAD plus stat data.
    fn set_aside(
        &self,
        file: &Path,
        broken: &git2::Error,
        problems: &mut Vec<String>,
    ) -> Result<(), RepoError> {
        // Named by the filesystem's clock, like the file's own times: a
        // scan (which has no "now" of the agent's) can find it broken.
        let stamp = crate::clock::file_time_now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let aside = self.git.path().join(format!("index.corrupt-{stamp}"));
        std::fs::rename(file, &aside).map_err(|source| {
            RepoError::Io(IoError::at(file, source).framed("could not write or remove {}"))
        })?;
        problems.push(format!(
            "{} was corrupt ({}); moved it aside to {} and rebuilt the index from the last \
             commit (no file in the home was touched)",
            file.display(),
            broken.message(),
            aside.display()
        ));
        Ok(())
    }

    /// The commit HEAD points at (full id), or None before the first commit.
    pub fn head(&self) -> Option<String> {
        self.head_commit()
            .ok()
            .flatten()
            .map(|c| c.id().to_string())
    }

    /// The paths commit `id` added or modified against its first parent
    /// (all of them, for a root commit): what a job's run wrote.
    pub fn changed_in(&self, id: &str) -> Result<Vec<String>, RepoError> {
        let oid = git2::Oid::from_str(id).map_err(|e| self.error(e))?;
        let commit = self.git.find_commit(oid).map_err(|e| self.error(e))?;
        let parent_tree = commit.parent(0).ok().and_then(|p| p.tree().ok());
        let tree = commit.tree().map_err(|e| self.error(e))?;
        let diff = self
            .git
            .diff_tree_to_tree(parent_tree.as_ref(), Some(&tree), None)
            .map_err(|e| self.error(e))?;
        Ok(diff
            .deltas()
            .filter(|d| matches!(d.status(), git2::Delta::Added | git2::Delta::Modified))
            .filter_map(|d| {
                d.new_file()
                    .path()
                    .map(|p| p.to_string_lossy().into_owned())
            })
            .collect())
    }

    fn head_commit(&self) -> Result<Option<git2::Commit<'_>>, RepoError> {
        match self.git.head() {
            Ok(head) => head.peel_to_commit().map(Some).map_err(|e| self.error(e)),
            Err(e) if e.code() == ErrorCode::UnbornBranch => Ok(None),
            Err(e) => Err(RepoError::BrokenHead {
                path: self.root.clone(),
                message: e.message().to_string(),
            }),
        }
    }

    /// The names at the top of HEAD's tree (a file or directory deleted
    /// from the working tree is still named here).
    pub fn head_top_level(&self) -> Vec<String> {
        let tree = self
            .head_commit()
            .ok()
            .flatten()
            .and_then(|c| c.tree().ok());
        tree.map(|t| {
            t.iter()
                .filter_map(|e| e.name().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
    }

    fn error(&self, e: git2::Error) -> RepoError {
        git_error(&self.root, e)
    }

    fn io_error(&self, path: &Path, source: std::io::Error) -> RepoError {
        RepoError::Io(IoError::at(path, source).framed("could not write or remove {}"))
    }
}

fn git_error(root: &Path, e: git2::Error) -> RepoError {
    if e.code() == ErrorCode::Locked {
        RepoError::Locked {
            path: root.to_path_buf(),
            message: e.message().to_string(),
        }
    } else {
        RepoError::Git {
            path: root.to_path_buf(),
            message: e.message().to_string(),
        }
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod tests_worktree;
