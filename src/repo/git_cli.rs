//! The `git` command, for talking to other machines: every fetch of a peer,
//! and a push over ssh or https (transports this build's libgit2 is built
//! without). A child process can be bounded in time — killed, with the
//! ssh it started, when it gives no answer, or when the supervisor stops —
//! and it brings the host's own ssh setup (keys, agent, `known_hosts`,
//! `~/.ssh/config`) exactly as `git` at a shell would.
//!
//! Credentials come only from the environment: the SSH agent or keys of
//! the user hearth runs as, and `HEARTH_GIT_USERNAME` /
//! `HEARTH_GIT_PASSWORD` for https, handed to git by a credential helper
//! that names the variables (their values are never on a command line, in
//! a file or in a message). Nothing ever prompts: an ssh that would ask
//! for a password or a host key fails at once and says so.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::credentials::RemoteCredentials;
use super::RepoError;

/// Whether `url` names a transport only the `git` command carries here:
/// ssh (`ssh://`, `git+ssh://`, or scp's `user@host:path`) and http(s).
pub fn needs_git_command(url: &str) -> bool {
    let scheme = url.split_once("://").map(|(s, _)| s);
    match scheme {
        Some(s) => matches!(s, "ssh" | "git+ssh" | "ssh+git" | "https" | "http"),
        // scp-like: a colon before any slash (`host:path`, `me@host:path`).
        None => url
            .find(':')
            .is_some_and(|colon| !url[..colon].contains('/') && colon > 1),
    }
}

/// One run of `git` against a repository.
pub(super) struct GitCommand<'a> {
    /// `--git-dir`.
    pub git_dir: &'a Path,
    /// Handed to git's credential helper.
    pub credentials: &'a RemoteCredentials,
    /// Killed, with all it started, after this long.
    pub timeout: Duration,
    /// Killed at once when this turns true (the supervisor stops).
    pub cancel: Option<&'a AtomicBool>,
}

impl GitCommand<'_> {
    /// Runs `git ARGS`; when it does not exit 0, a message naming what
    /// failed (`what`), in git's last words, and what to do.
    pub fn run(&self, what: &str, args: &[&str]) -> Result<(), RepoError> {
        self.run_reading(what, args).map(drop)
    }

    /// Runs `git ARGS` as [`GitCommand::run`] does, and returns what it
    /// wrote on its standard output (at most 256 KiB).
    pub fn run_reading(&self, what: &str, args: &[&str]) -> Result<String, RepoError> {
        let fail = |message: String| RepoError::Git {
            path: self.git_dir.to_path_buf(),
            message,
        };
        let mut command = self.command(args);
        command.stdout(Stdio::piped());
        let mut child = command.spawn().map_err(|e| fail(not_started(what, &e)))?;
        let stdout = drain(child.stdout.take());
        let stderr = drain(child.stderr.take());
        let started = Instant::now();
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break Some(status),
                Ok(None) => {}
                Err(e) => return Err(fail(format!("{what}: waiting for git failed: {e}"))),
            }
            let cancelled = self.cancel.is_some_and(|c| c.load(Ordering::SeqCst));
            if cancelled || started.elapsed() >= self.timeout {
                crate::process::signal_group(child.id() as i32, libc::SIGKILL);
                let _ = child.wait();
                if cancelled {
                    return Err(fail(format!("{what}: stopped with the supervisor")));
                }
                break None;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let stderr = stderr.collect();
        match status {
            // What git said on stdout is the answer: one not read whole
            // (a reader that did not finish) is no answer, never "nothing".
            Some(status) if status.success() => stdout
                .whole()
                .ok_or_else(|| fail(format!("{what}: git's answer could not be read whole"))),
            Some(_) => Err(fail(failed(what, &stderr))),
            None => Err(fail(format!(
                "{what}: no answer within {} s, so it was stopped; check that the remote \
                 host is up and reachable from here (a firewall that drops packets looks \
                 like this)",
                self.timeout.as_secs()
            ))),
        }
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new("git");
        cmd.arg("--git-dir")
            .arg(self.git_dir)
            // No program a repository's config names runs for hearth's
            // transport: not its hooks, an fsmonitor, a filter or diff
            // driver, an alternates command or an upload-pack hook. Given
            // on the command line, these win over any repository's config
            // — a peer's too, whose upload-pack inherits them.
            .args(NO_PROGRAMS.iter().flat_map(|setting| ["-c", setting]))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .env("LC_ALL", "C")
            .env("GIT_TERMINAL_PROMPT", "0")
            .env_remove("GIT_DIR")
            .env_remove("GIT_WORK_TREE")
            .env_remove("GIT_INDEX_FILE")
            // Its own group: a kill reaches the ssh it started.
            .process_group(0);
        // No password or host-key prompt can wait for a terminal that is
        // not there: ssh fails at once and says why. As configuration,
        // which the operator's GIT_SSH_COMMAND or GIT_SSH (git reads them
        // first) still overrides — without this library reading them.
        cmd.args(["-c", "core.sshCommand=ssh -o BatchMode=yes"]);
        if let (Some(user), Some(password)) =
            (&self.credentials.username, &self.credentials.password)
        {
            // The helper names the variables; git's child reads them.
            cmd.env("HEARTH_GIT_USERNAME", user)
                .env("HEARTH_GIT_PASSWORD", password)
                .args(["-c", "credential.helper="])
                .args(["-c", CREDENTIAL_HELPER]);
        }
        cmd.args(args);
        cmd
    }
}

/// The settings that keep every program a repository's config could name
/// from running in a git hearth starts (a peer's config is an outside
/// party's: CVE-2026-71963's `core.fsmonitor` ran when a tool typed `git
/// status` in a cloned repository).
const NO_PROGRAMS: [&str; 7] = [
    "core.hooksPath=/dev/null",
    "core.fsmonitor=false",
    "core.alternateRefsCommand=",
    "uploadpack.packObjectsHook=",
    "diff.external=",
    "core.pager=cat",
    "protocol.ext.allow=never",
];

/// git's credential helper protocol: answer `get` from the environment.
const CREDENTIAL_HELPER: &str = "credential.helper=!f() { test \"$1\" = get || exit 0; \
     echo \"username=$HEARTH_GIT_USERNAME\"; echo \"password=$HEARTH_GIT_PASSWORD\"; }; f";

/// What git said on its error pipe, read on a thread of its own so a
/// chatty git never blocks on a full pipe.
struct Drained(Option<std::sync::mpsc::Receiver<String>>);

fn drain(pipe: Option<impl Read + Send + 'static>) -> Drained {
    Drained(pipe.map(|mut pipe| {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = pipe.by_ref().take(256 * 1024).read_to_end(&mut bytes);
            let _ = tx.send(String::from_utf8_lossy(&bytes).into_owned());
        });
        rx
    }))
}

impl Drained {
    /// What was said, once git has exited; a process git started that
    /// left its group and holds the pipe open is not waited for.
    fn collect(self) -> String {
        self.whole().unwrap_or_default()
    }

    /// What was said, if it could be read to its end within 2 s of git's
    /// exit.
    fn whole(self) -> Option<String> {
        self.0
            .and_then(|rx| rx.recv_timeout(Duration::from_secs(2)).ok())
    }
}

fn not_started(what: &str, e: &std::io::Error) -> String {
    if e.kind() == std::io::ErrorKind::NotFound {
        format!(
            "{what}: the `git` command is not on hearth's PATH; install git (`apt install \
             git`): hearth reaches other machines through it"
        )
    } else {
        format!("{what}: git could not be started: {e}")
    }
}

/// The failure in git's own last words, with what to do about it.
fn failed(what: &str, stderr: &str) -> String {
    let said: Vec<&str> = stderr
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("hint:"))
        .collect();
    let said = said[said.len().saturating_sub(3)..].join(" / ");
    let said = crate::config::secret_url::masked(&said);
    match hint(&said) {
        Some(hint) => format!("{what}: {said}; {hint}"),
        None => format!("{what}: {said}"),
    }
}

fn hint(said: &str) -> Option<&'static str> {
    let lower = said.to_lowercase();
    Some(if lower.contains("host key verification failed") {
        "this host does not know the remote's ssh host key yet: add it to the known_hosts \
         of the user hearth runs as (`ssh-keyscan HOST >> ~/.ssh/known_hosts`)"
    } else if lower.contains("permission denied") {
        "the remote refused this host's ssh key: add the public key of the user hearth runs \
         as to the remote's authorized_keys, or give hearth an agent (SSH_AUTH_SOCK)"
    } else if lower.contains("authentication failed") || lower.contains("could not read username") {
        "the remote wants a user name and password: set HEARTH_GIT_USERNAME and \
         HEARTH_GIT_PASSWORD in hearth's environment (a token, for most hosts)"
    } else if lower.contains("could not resolve") || lower.contains("connection refused") {
        "the remote host cannot be reached from here: check the URL and that its server runs"
    } else if lower.contains("does not appear to be a git repository")
        || lower.contains("not found")
    {
        "no repository is served at that URL: check its path on the remote host"
    } else {
        return None;
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ssh_and_https_need_the_git_command_and_the_rest_does_not() {
        for url in [
            "ssh://git@example.org/srv/alice.git",
            "git+ssh://example.org/alice.git",
            "me@example.org:srv/alice.git",
            "example.org:alice.git",
            "https://example.org/alice.git",
        ] {
            assert!(needs_git_command(url), "{url}");
        }
        for url in [
            "git://127.0.0.1:9418/alice.git",
            "file:///srv/alice.git",
            "/srv/git/alice.git",
            "../alice.git",
            "./a:b",
        ] {
            assert!(!needs_git_command(url), "{url}");
        }
    }

    #[test]
    fn the_credential_helper_answers_git_from_the_environment_alone() {
        let mut fill = std::process::Command::new("git")
            .args(["-c", "credential.helper=", "-c", CREDENTIAL_HELPER])
            .args(["credential", "fill"])
            .env("HEARTH_GIT_USERNAME", "hearth-bot")
            .env("HEARTH_GIT_PASSWORD", "tok en$1")
            .env("GIT_TERMINAL_PROMPT", "0")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("git must be installed");
        use std::io::Write;
        fill.stdin
            .take()
            .unwrap()
            .write_all(b"protocol=https\nhost=example.org\n\n")
            .unwrap();
        let out = fill.wait_with_output().unwrap();
        let said = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success());
        assert!(said.contains("username=hearth-bot\n"), "{said}");
        assert!(said.contains("password=tok en$1\n"), "{said}");
        // The helper's text names the variables; the values are nowhere in it.
        assert!(!CREDENTIAL_HELPER.contains("hearth-bot"));
    }

    #[test]
    fn git_s_last_words_come_with_what_to_do() {
        let stderr = "Warning: Permanently added …\ngit@host: Permission denied (publickey).\n\
                      fatal: Could not read from remote repository.\n";
        let said = failed("fetching peer alice", stderr);
        assert!(said.starts_with("fetching peer alice: "), "{said}");
        assert!(said.contains("Permission denied (publickey)"), "{said}");
        assert!(said.contains("authorized_keys"), "{said}");
    }
}
