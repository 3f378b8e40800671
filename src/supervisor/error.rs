//! Why the supervisor stopped, and what the operator can do about it.

use std::path::PathBuf;

use crate::config::ConfigError;
use crate::home::lock::LockError;
use crate::io_hint::IoError;
use crate::repo::RepoError;

/// Why the supervisor stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum SupervisorError {
    /// Another supervisor runs on the home, or a lock failed.
    #[error(transparent)]
    Lock(#[from] LockError),
    /// git failed.
    #[error(transparent)]
    Repo(#[from] RepoError),
    /// `hearth.toml` could not be read at start-up.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A state file could not be written.
    #[error(transparent)]
    Write(#[from] crate::atomic::WriteError),
    /// The tick child could not be started.
    #[error("could not start the tick process {}: {source}", exe.display())]
    Spawn {
        /// The executable it ran.
        exe: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// Healing is exhausted: the supervisor will not run until a human
    /// runs `hearth heal --resume`.
    #[error("healing is exhausted (since {since}): {reason}")]
    Panicked {
        /// When healing gave up.
        since: String,
        /// Why.
        reason: String,
    },
    /// A heal failed.
    #[error(transparent)]
    Heal(#[from] crate::healer::HealError),
    /// The inbox or outbox failed.
    #[error(transparent)]
    Mailbox(#[from] crate::mailbox::MailboxError),
    /// `[git] push = true` names a remote the home does not have.
    #[error("[git] push = true, but the home has no remote \"{remote}\" to push to")]
    NoRemote {
        /// `[git] remote`.
        remote: String,
        /// The home.
        home: PathBuf,
    },
    /// `[metrics] textfile` is inside the home: every write would be a
    /// hand edit to commit, every tick.
    #[error("[metrics] textfile = \"{}\" is inside the home {}", path.display(), home.display())]
    TextfileInHome {
        /// The textfile.
        path: PathBuf,
        /// The home.
        home: PathBuf,
    },
    /// Another operation failed.
    #[error(transparent)]
    Io(#[from] IoError),
}

impl SupervisorError {
    /// What the operator can do about it.
    pub fn hint(&self) -> String {
        match self {
            SupervisorError::Lock(e) => e.hint(),
            SupervisorError::Repo(e) => e.hint(),
            SupervisorError::Config(e) => e.hint(),
            SupervisorError::Write(e) => e.hint(),
            SupervisorError::Heal(e) => e.hint(),
            SupervisorError::Mailbox(e) => e.hint(),
            SupervisorError::Spawn { exe, source } => crate::io_hint::io_hint(source, exe),
            SupervisorError::NoRemote { remote, home } => format!(
                "add it (`git -C {} remote add {remote} URL`), or set [git] push = false",
                home.display()
            ),
            SupervisorError::Panicked { .. } => {
                "fix the cause (see `hearth status`, the panic flare in outbox/ and `git log`), \
                 then run `hearth heal --resume` and start hearth again"
                    .into()
            }
            SupervisorError::TextfileInHome { .. } => {
                "point [metrics] textfile at node_exporter's textfile directory, outside the home \
                 (e.g. /var/lib/prometheus/node-exporter/hearth.prom), or remove the key"
                    .into()
            }
            SupervisorError::Io(e) => e.hint(),
        }
    }
}
