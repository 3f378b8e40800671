//! A real `git daemon` on 127.0.0.1 serving every repository under a
//! directory (`git://127.0.0.1:PORT/NAME.git`), which a test may kill and
//! start again on the same port: a git server that goes away and returns.

#![allow(clippy::disallowed_methods)] // fixtures, not state

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// A new bare repository at `path` whose branch is `main`.
pub fn init_bare(path: &Path) {
    let init = Command::new("git")
        .args(["init", "-q", "--bare", "-b", "main"])
        .arg(path)
        .status()
        .expect("git must be installed");
    assert!(init.success(), "git init --bare {}", path.display());
}

pub struct GitDaemon {
    child: Option<Child>,
    base: PathBuf,
    pub port: u16,
}

impl GitDaemon {
    /// Serves `base` on a free port.
    pub fn start(base: &Path) -> GitDaemon {
        let port = super::ports::free_port();
        let mut daemon = GitDaemon {
            child: None,
            base: base.to_path_buf(),
            port,
        };
        daemon.up();
        daemon
    }

    /// The URL of `base/REPO.git`.
    pub fn url(&self, repo: &str) -> String {
        format!("git://127.0.0.1:{}/{repo}.git", self.port)
    }

    /// Whether it serves now.
    pub fn is_up(&self) -> bool {
        self.child.is_some()
    }

    /// Kills it (`kill -9`, its whole group: `git daemon` runs
    /// `git-daemon` as a child, which a kill of `git` alone leaves
    /// serving) and waits until the port is closed: every fetch fails
    /// until [`Self::up`].
    pub fn down(&mut self) {
        if let Some(mut child) = self.child.take() {
            // SAFETY: kill(2) on the process group of our own child.
            #[allow(unsafe_code)]
            unsafe {
                libc::kill(-(child.id() as i32), libc::SIGKILL);
            }
            let _ = child.wait();
            super::ports::wait_until(self.port, false, "git daemon, killed,", String::new);
        }
    }

    /// Starts it (again, on the same port) and waits until it listens.
    pub fn up(&mut self) {
        if self.child.is_some() {
            return;
        }
        let child = Command::new("git")
            .args([
                "daemon",
                "--reuseaddr",
                "--export-all",
                "--listen=127.0.0.1",
            ])
            .arg(format!("--port={}", self.port))
            .arg(format!("--base-path={}", self.base.display()))
            .arg(&self.base)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .expect("git daemon (the git package) must be installed to run this");
        super::ports::wait_until(self.port, true, "git daemon", String::new);
        self.child = Some(child);
    }
}

impl Drop for GitDaemon {
    fn drop(&mut self) {
        self.down();
    }
}
