//! The sd_notify protocol, spoken directly: one datagram per message to the
//! socket systemd names in `$NOTIFY_SOCKET` (a path, or `@name` for an
//! abstract socket). Ten lines of std instead of a crate, and no libsystemd.
//!
//! The caller reads the environment (`NOTIFY_SOCKET`, `WATCHDOG_USEC`,
//! `WATCHDOG_PID`) and passes the values in.

use std::cell::Cell;
use std::io;
use std::os::unix::net::{SocketAddr, UnixDatagram};
use std::time::{Duration, Instant};

/// systemd's notify socket (`sd_notify(3)`), with the watchdog when set.
pub struct SdNotify {
    socket: UnixDatagram,
    addr: SocketAddr,
    watchdog: Option<Duration>,
    last_ping: Cell<Option<Instant>>,
}

impl SdNotify {
    /// The sd_notify socket `notify_socket`; the watchdog is on when `watchdog_usec`
    /// is set and `watchdog_pid` (if set) is this process.
    pub fn new(
        notify_socket: &str,
        watchdog_usec: Option<&str>,
        watchdog_pid: Option<&str>,
    ) -> io::Result<SdNotify> {
        let addr = if let Some(name) = notify_socket.strip_prefix('@') {
            use std::os::linux::net::SocketAddrExt;
            SocketAddr::from_abstract_name(name.as_bytes())?
        } else {
            SocketAddr::from_pathname(notify_socket)?
        };
        let ours = watchdog_pid
            .map(|pid| pid.trim() == std::process::id().to_string())
            .unwrap_or(true);
        let watchdog = watchdog_usec
            .and_then(|usec| usec.trim().parse::<u64>().ok())
            .filter(|usec| *usec > 0 && ours)
            .map(Duration::from_micros);
        Ok(SdNotify {
            socket: UnixDatagram::unbound()?,
            addr,
            watchdog,
            last_ping: Cell::new(None),
        })
    }

    /// Sends one notification; failures are logged, never fatal (a missing
    /// systemd must not stop the agent).
    pub fn send(&self, message: &str) {
        if let Err(e) = self.socket.send_to_addr(message.as_bytes(), &self.addr) {
            tracing::warn!("sd_notify {message:?} failed: {e}");
        }
    }

    /// `READY=1`, with a status line.
    pub fn ready(&self, status: &str) {
        self.send(&format!("READY=1\nSTATUS={status}"));
    }

    /// A status line for `systemctl status`.
    pub fn status(&self, status: &str) {
        self.send(&format!("STATUS={status}"));
    }

    /// `STOPPING=1`.
    pub fn stopping(&self) {
        self.send("STOPPING=1");
    }

    /// Pings the watchdog when half its interval has passed since the last
    /// ping, as systemd recommends.
    pub fn keep_alive(&self) {
        let Some(interval) = self.watchdog else {
            return;
        };
        let due = self
            .last_ping
            .get()
            .is_none_or(|last| last.elapsed() >= interval / 2);
        if due {
            self.send("WATCHDOG=1");
            self.last_ping.set(Some(Instant::now()));
        }
    }

    /// How often the supervisor must wake to keep the watchdog fed.
    pub fn wake_every(&self) -> Option<Duration> {
        self.watchdog.map(|w| w / 4)
    }
}
