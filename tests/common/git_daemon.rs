//! A real `git daemon` on 127.0.0.1 serving every repository under a
//! directory (`git://127.0.0.1:PORT/NAME.git`), which a test may kill and
//! start again on the same port: a git server that goes away and returns.

#![allow(clippy::disallowed_methods)] // fixtures, not state

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct GitDaemon {
    child: Option<Child>,
    base: PathBuf,
    pub port: u16,
}

impl GitDaemon {
    /// Serves `base` on a free port.
    pub fn start(base: &Path) -> GitDaemon {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
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
            let gone = Instant::now();
            while std::net::TcpStream::connect(("127.0.0.1", self.port)).is_ok() {
                assert!(
                    gone.elapsed() < Duration::from_secs(10),
                    "git daemon still serves port {} after its kill",
                    self.port
                );
                std::thread::sleep(Duration::from_millis(20));
            }
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
        let up = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            assert!(
                up.elapsed() < Duration::from_secs(10),
                "git daemon did not listen on {}",
                self.port
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        self.child = Some(child);
    }
}

impl Drop for GitDaemon {
    fn drop(&mut self) {
        self.down();
    }
}
