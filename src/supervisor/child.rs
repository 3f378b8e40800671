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
use std::time::{Duration, Instant};

use crate::config::Config;
use crate::home::Home;
use crate::jobs::turn::JobTurn;

use super::systemd::SdNotify;
use super::wake::{Wake, Wakeups};

/// How long a tick gets to stop after the supervisor is told to stop.
const STOP_GRACE: Duration = Duration::from_secs(5);
/// How often the supervisor looks at a running tick when nothing wakes it
/// (its exit does, by SIGCHLD: see [`Wake::Child`]).
const POLL: Duration = Duration::from_millis(25);

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

/// How waiting for a tick child ended.
pub struct ChildEnd {
    pub ending: Ending,
    /// Why it ended the way it did, when the supervisor had a hand in it.
    pub note: Option<String>,
    /// A stop signal received meanwhile.
    pub stop: Option<i32>,
}

impl TickChild {
    /// Starts tick `number` with `config` (the supervisor's last good one,
    /// passed on stdin so a hand-broken `hearth.toml` cannot reach the tick).
    pub fn spawn(
        exe: &Path,
        home: &Home,
        number: u64,
        config: &Config,
        job: Option<&JobTurn>,
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
        #[allow(unsafe_code)] // the four unsafe blocks of hearth; see SAFETY
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
            let input = crate::tick::ChildInput {
                config: config.clone(),
                job: job.cloned(),
            };
            let json = serde_json::to_vec(&input).expect("a config serialises");
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

    /// Waits for tick `number` to end, killing its group past `limit`, and
    /// on a stop signal giving it [`STOP_GRACE`] to stop before killing it.
    /// Keeps the systemd watchdog fed meanwhile.
    pub fn supervise(
        &mut self,
        number: u64,
        limit: Duration,
        wake: &Wakeups,
        sd_notify: Option<&SdNotify>,
    ) -> std::io::Result<ChildEnd> {
        let started = Instant::now();
        let mut stop: Option<(i32, Instant)> = None;
        loop {
            if let Some(ending) = self.try_wait()? {
                let note = stop.map(|(signal, _)| {
                    format!("The supervisor was told to stop (signal {signal}) during this tick.")
                });
                return Ok(ChildEnd {
                    ending,
                    note,
                    stop: stop.map(|(s, _)| s),
                });
            }
            if started.elapsed() >= limit {
                tracing::error!(
                    "tick {number} ran past [tick] timeout_s = {}s; killing it",
                    limit.as_secs()
                );
                self.signal_group(libc::SIGKILL);
                let ending = self.wait()?;
                let note = format!(
                    "Killed after running past [tick] timeout_s = {}s.",
                    limit.as_secs()
                );
                return Ok(ChildEnd {
                    ending,
                    note: Some(note),
                    stop: stop.map(|(s, _)| s),
                });
            }
            if let Some((signal, at)) = stop {
                if at.elapsed() >= STOP_GRACE {
                    self.signal_group(libc::SIGKILL);
                    let ending = self.wait()?;
                    let note = format!(
                        "The supervisor was told to stop (signal {signal}); the tick did not stop within {}s and was killed.",
                        STOP_GRACE.as_secs()
                    );
                    return Ok(ChildEnd {
                        ending,
                        note: Some(note),
                        stop: Some(signal),
                    });
                }
            }
            if let Some(n) = sd_notify {
                n.keep_alive();
            }
            // Inbox events during a tick are not lost: after the tick the
            // supervisor looks at the inbox itself; a peer's is kept for
            // after it.
            let woke = wake.next(POLL);
            if woke == Some(Wake::Peer) {
                wake.note_peer();
            }
            if let Some(Wake::Stop(signal)) = woke {
                if stop.is_none() {
                    tracing::info!(
                        "signal {signal}: stopping tick {number} (pid {})",
                        self.pid()
                    );
                    self.signal_group(libc::SIGTERM);
                    stop = Some((signal, Instant::now()));
                }
            }
        }
    }

    /// Sends `signal` to the child's whole process group.
    pub fn signal_group(&self, signal: i32) {
        crate::process::signal_group(self.pgid, signal);
    }
}
