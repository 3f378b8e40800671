//! The tick child: `hearth tick --supervised` in its own process group.
//!
//! Its own group, so the time limit kills the tick and everything it started
//! (tool commands) in one `kill(-pgid)`. `PR_SET_PDEATHSIG`, so a supervisor
//! killed with `-9` takes its tick with it instead of leaving an orphan that
//! writes into a home the next supervisor owns.

use std::io::Write;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};

use crate::config::Config;
use crate::home::Home;

pub struct TickChild {
    child: Child,
    pgid: i32,
}

/// How a tick child ended, as far as the process goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    Exited(i32),
    Signaled(i32),
}

impl Ending {
    /// The number the ledger records: the code, or 128 + the signal.
    pub fn exit_number(self) -> i32 {
        match self {
            Ending::Exited(code) => code,
            Ending::Signaled(signal) => 128 + signal,
        }
    }

    pub fn code(self) -> Option<i32> {
        match self {
            Ending::Exited(code) => Some(code),
            Ending::Signaled(_) => None,
        }
    }

    fn from_status(status: ExitStatus) -> Ending {
        match (status.code(), status.signal()) {
            (Some(code), _) => Ending::Exited(code),
            (None, Some(signal)) => Ending::Signaled(signal),
            (None, None) => Ending::Exited(-1),
        }
    }
}

impl TickChild {
    /// Starts tick `number` with `config` (the supervisor's last good one,
    /// passed on stdin so a hand-broken `hearth.toml` cannot reach the tick).
    pub fn spawn(
        exe: &Path,
        home: &Home,
        number: u64,
        config: &Config,
    ) -> std::io::Result<TickChild> {
        let parent = std::process::id();
        let mut command = Command::new(exe);
        command
            .arg("tick")
            .arg("--supervised")
            .arg("--number")
            .arg(number.to_string())
            .arg("--home")
            .arg(home.root())
            .stdin(Stdio::piped())
            .process_group(0);
        // SAFETY: only async-signal-safe calls (prctl, getppid, _exit)
        // between fork and exec.
        unsafe {
            command.pre_exec(move || {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                if libc::getppid() as u32 != parent {
                    libc::_exit(1);
                }
                Ok(())
            });
        }
        let mut child = command.spawn()?;
        let pgid = child.id() as i32;
        if let Some(mut stdin) = child.stdin.take() {
            let json = serde_json::to_vec(config).expect("a config serialises");
            // A child that died at once closed its stdin; its exit says why.
            let _ = stdin.write_all(&json);
        }
        Ok(TickChild { child, pgid })
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn try_wait(&mut self) -> std::io::Result<Option<Ending>> {
        Ok(self.child.try_wait()?.map(Ending::from_status))
    }

    pub fn wait(&mut self) -> std::io::Result<Ending> {
        Ok(Ending::from_status(self.child.wait()?))
    }

    /// Sends `signal` to the child's whole process group.
    pub fn signal_group(&self, signal: i32) {
        // SAFETY: kill(2) with a negative pid signals a process group; the
        // group is the child's own (process_group(0) above).
        unsafe {
            libc::kill(-self.pgid, signal);
        }
    }
}
