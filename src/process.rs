//! Processes: a tick and an operator tool each run in their own group, so
//! everything they started dies with them in one `kill(-pgid)`; and
//! whether a process that wrote a file or journal still runs.

/// Makes this process non-dumpable, before it reads anything: its
/// `/proc/PID/environ` (the model's key, a door's token), `mem` and `fd`
/// then belong to root, and ptrace by the same account is refused, so no
/// process hearth starts — a tool, an MCP server, a job's check — reads
/// them from its ancestors. Every `hearth` process calls it first thing:
/// the supervisor, a tick, an ask and both doors hold secrets, and the
/// flag is reset by each exec, so each sets its own. (A process with
/// `CAP_SYS_PTRACE`, as anything root starts has, still reads it: the
/// sandbox takes that away.) Returns whether the kernel took it.
pub fn guard_secrets() -> bool {
    // SAFETY: prctl(PR_SET_DUMPABLE, 0) takes plain integers and changes
    // only this process's dumpable flag.
    #[allow(unsafe_code)] // the four unsafe blocks of hearth; see SAFETY
    unsafe {
        libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0) == 0
    }
}

/// The environment variables no process hearth starts is given, whatever
/// its configuration names: the secrets of hearth's own doors (the page's
/// and the MCP door's tokens). A tool an outside exchange can drive must
/// never hold what logs the operator in.
pub const NEVER_PASSED: [&str; 2] = ["HEARTH_WEB_TOKEN", "HEARTH_MCP_TOKEN"];

/// Whether a configured variable `name` may be passed to a process.
pub fn passable(name: &str) -> bool {
    !NEVER_PASSED.contains(&name)
}

/// The variables a command the operator configured (a job's `check`,
/// `[flares] exec`) always gets from hearth's own environment: where
/// programs are, the language and the zone. Nothing else crosses unless
/// its configuration names it (`env = [...]`): not the model's key, not a
/// door's token, not `HOME`.
pub const ALWAYS_PASSED: [&str; 5] = ["PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ"];

/// Clears `command`'s environment, then gives it [`ALWAYS_PASSED`] and
/// each of `named` that `environment` holds (never a door's token,
/// [`passable`]).
pub fn confine_env(
    command: &mut std::process::Command,
    environment: &std::collections::BTreeMap<String, String>,
    named: &[String],
) {
    command.env_clear();
    let names = ALWAYS_PASSED
        .iter()
        .copied()
        .chain(named.iter().map(String::as_str));
    for name in names.filter(|n| passable(n)) {
        if let Some(value) = environment.get(name) {
            command.env(name, value);
        }
    }
}

/// Sends `signal` to the process group `pgid` (a child started with
/// `process_group(0)`, whose group id is its pid).
pub fn signal_group(pgid: i32, signal: i32) {
    if pgid <= 1 {
        return;
    }
    // SAFETY: kill(2) with a negative pid signals a process group; callers
    // pass the group of a child they started with process_group(0).
    #[allow(unsafe_code)] // the four unsafe blocks of hearth; see SAFETY
    unsafe {
        libc::kill(-pgid, signal);
    }
}

/// Reads `source` (a child's pipe) to its end on a thread, keeping the
/// first `cap` bytes: (what was kept, whether more came). Read whole, so
/// the child never blocks on a full pipe however much it says.
pub fn drain(
    mut source: impl std::io::Read + Send + 'static,
    cap: usize,
) -> std::thread::JoinHandle<(Vec<u8>, bool)> {
    std::thread::spawn(move || {
        let mut kept = Vec::new();
        let mut cut = false;
        let mut buf = [0u8; 8192];
        loop {
            match source.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    let room = cap.saturating_sub(kept.len());
                    kept.extend_from_slice(&buf[..n.min(room)]);
                    cut |= n > room;
                }
            }
        }
        (kept, cut)
    })
}

/// The last `max` bytes of what a command said (its stderr), as text,
/// trimmed, cut on a character boundary: what a failure quotes.
pub fn tail(bytes: &[u8], max: usize) -> String {
    let text = String::from_utf8_lossy(bytes);
    let start = text.len().saturating_sub(max);
    let start = (start..=text.len())
        .find(|i| text.is_char_boundary(*i))
        .unwrap_or(0);
    text[start..].trim().to_string()
}

/// Whether process `pid` is running: it exists and is not a zombie (a
/// process killed whose parent died with it may stay a zombie for as long
/// as the machine's init leaves it unreaped; it writes nothing more).
pub fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // `pid (comm) S ...`: the state follows the last `)`.
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.trim_start().chars().next())
            .is_some_and(|state| !matches!(state, 'Z' | 'X' | 'x')),
        Err(_) => false,
    }
}

#[cfg(test)]
mod alive_tests {
    use super::alive;

    #[test]
    fn this_process_is_alive_and_a_reaped_zombie_is_not() {
        assert!(alive(std::process::id()));
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        // Exited, not yet reaped: a zombie, which writes nothing more.
        std::thread::sleep(std::time::Duration::from_millis(200));
        assert!(!alive(pid), "a zombie is not alive");
        child.wait().unwrap();
        assert!(!alive(pid));
    }
}

/// Why `sendmail` did not take a message.
#[derive(Debug, thiserror::Error)]
pub enum NotMailed {
    /// The program could not be started: a setting to fix.
    #[error("cannot run {program} ({why})")]
    NotStarted {
        /// The program.
        program: String,
        /// What the system said.
        why: String,
    },
    /// It ran and refused, failed, or took too long.
    #[error("{0}")]
    Refused(String),
}

/// Gives `message` (RFC 5322, headers first) to the host's `sendmail`
/// (`-t -i`: the recipients are its headers', a lone dot is text), and
/// waits for it at most `timeout`. The program gets only
/// [`ALWAYS_PASSED`] of `environment` ([`confine_env`]): never a key.
pub fn sendmail(
    program: &str,
    message: &str,
    environment: &std::collections::BTreeMap<String, String>,
    timeout: std::time::Duration,
) -> Result<(), NotMailed> {
    use std::io::{Read, Write};
    use std::process::{Command, Stdio};
    let mut command = Command::new(program);
    command
        .args(["-t", "-i"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    confine_env(&mut command, environment, &[]);
    let mut child = command.spawn().map_err(|e| NotMailed::NotStarted {
        program: program.to_string(),
        why: e.to_string(),
    })?;
    if let Some(mut stdin) = child.stdin.take() {
        // One that exits without reading (it refused) says why by its
        // status and its stderr, not by the pipe it closed.
        let _ = stdin.write_all(message.as_bytes());
    }
    let start = std::time::Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(status)) if status.success() => return Ok(()),
            Ok(Some(status)) => {
                let mut err = String::new();
                if let Some(mut e) = child.stderr.take() {
                    let _ = e.read_to_string(&mut err);
                }
                return Err(NotMailed::Refused(format!(
                    "{program} exited {status}: {}",
                    err.trim()
                )));
            }
            Ok(None) if start.elapsed() > timeout => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(NotMailed::Refused(format!(
                    "{program} took longer than {timeout:?}"
                )));
            }
            Ok(None) => std::thread::sleep(std::time::Duration::from_millis(20)),
            Err(e) => return Err(NotMailed::Refused(format!("{program}: {e}"))),
        }
    }
}
