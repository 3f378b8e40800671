//! What went wrong with git, named so the operator can act on it.

use crate::io_hint::IoError;
use std::path::PathBuf;

/// What went wrong with git, by what the operator can do about it.
#[derive(Debug, thiserror::Error)]
pub enum RepoError {
    /// The home is not a git repository.
    #[error("{} is not a git repository", path.display())]
    NotARepo {
        /// The home.
        path: PathBuf,
    },
    /// The repository belongs to another user, and git refuses to open it
    /// for this one (its `safe.directory` rule): hearth runs as the wrong
    /// user, usually root on a home owned by `hearth`.
    #[error("the git repository in {} belongs to another user than the one running hearth", path.display())]
    NotOwner {
        /// The repository.
        path: PathBuf,
    },
    /// HEAD cannot be read.
    #[error("the HEAD of the git repository in {} cannot be read: {message}", path.display())]
    BrokenHead {
        /// The repository.
        path: PathBuf,
        /// What git said.
        message: String,
    },
    /// Another git holds a lock past the wait.
    #[error("git is locked in {}: {message}", path.display())]
    Locked {
        /// The repository.
        path: PathBuf,
        /// What git said.
        message: String,
    },
    /// The branch kept moving under hearth's commit, try after try:
    /// another program commits in the home without pause.
    #[error("the branch in {} kept moving under hearth's commit ({message})", path.display())]
    Moved {
        /// The repository.
        path: PathBuf,
        /// What git said.
        message: String,
    },
    /// The remote holds commits this home does not: another home pushes
    /// there (one restored by cloning it, say), or someone pushed by hand.
    /// Pushing again cannot fix that.
    #[error("the remote {remote} holds commits this home does not have, so this home cannot push to it without dropping them ({message})")]
    PushDiverged {
        /// The repository.
        path: PathBuf,
        /// The remote's name.
        remote: String,
        /// What git said.
        message: String,
    },
    /// Any other git error.
    #[error("git error in {}: {message}", path.display())]
    Git {
        /// The repository.
        path: PathBuf,
        /// What git said.
        message: String,
    },
    /// The index holds unmerged paths: a merge, rebase or cherry-pick the
    /// operator started and did not finish. hearth cannot commit over it.
    #[error("the git repository in {} has an unfinished merge: {} not merged yet", path.display(), paths.join(", "))]
    Unmerged {
        /// The repository.
        path: PathBuf,
        /// The paths in conflict (the first few).
        paths: Vec<String>,
    },
    /// A file of the repository could not be cleaned up.
    #[error(transparent)]
    Io(#[from] IoError),
}

impl RepoError {
    /// Whether another git process holds a lock hearth needs: a wait, not
    /// a failure, for a supervisor.
    /// A branch that keeps moving under the commit is waited out the same way.
    pub fn is_locked(&self) -> bool {
        matches!(self, RepoError::Locked { .. } | RepoError::Moved { .. })
    }

    /// What the operator can do about it.
    pub fn hint(&self) -> String {
        match self {
            RepoError::NotARepo { path } => format!(
                "run `hearth init {}`: it makes the home a git repository and keeps your files",
                path.display()
            ),
            RepoError::BrokenHead { path, .. } => format!(
                "check `git -C {0} status`; if .git/HEAD is damaged, restore it with \
                 `echo 'ref: refs/heads/main' > {0}/.git/HEAD` (or your branch name)",
                path.display()
            ),
            RepoError::NotOwner { path } => format!(
                "run hearth as the home's owner: `sudo -u $(stat -c %U {0}) hearth … --home {0}` \
                 (the unit runs as `hearth`); nothing in the home was changed",
                path.display()
            ),
            RepoError::Locked { path, .. } => format!(
                "if no git command is running in {0}, remove the stale lock file \
                 (`hearth run` does this itself at start-up)",
                path.display()
            ),
            RepoError::Moved { path, .. } => format!(
                "another program commits in {0} without pause (`git -C {0} log -5` names it); \
                 hearth's commit is tried again and nothing of hearth's is lost meanwhile",
                path.display()
            ),
            RepoError::Unmerged { path, .. } => format!(
                "finish it (resolve the files, `git -C {0} add` them, `git -C {0} commit`) or \
                 abandon it (`git -C {0} merge --abort`, or `rebase --abort`), then start \
                 hearth again; nothing of hearth's is lost meanwhile",
                path.display()
            ),
            RepoError::PushDiverged { path, remote, .. } => format!(
                "if another home (a copy restored with `git clone`) pushes to the same remote, \
                 give each home its own: `git -C {0} remote set-url {remote} NEW-URL`; to see \
                 what the remote holds: `git -C {0} fetch {remote} && git -C {0} log \
                 main..{remote}/main`. Pushing stops until it can succeed (tried again hourly)",
                path.display()
            ),
            RepoError::Git { path, .. } => format!(
                "`git -C {0} status` shows the repository's state and `hearth audit --home {0}` \
                 checks the home; hearth's files stand as they were",
                path.display()
            ),
            RepoError::Io(e) => e.hint(),
        }
    }
}
