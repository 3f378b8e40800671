//! A sealed environment for end-to-end tests of the `hearth` binary: a temp
//! home, a cleared environment (no HEARTH_HOME, no NOTIFY_SOCKET, no keys
//! from the developer's shell), and helpers that read the home the way an
//! operator would: git history, files, the ledger.

#![allow(dead_code)]

pub mod billing;
pub mod cost;
pub mod git_daemon;
pub mod mail_server;
pub mod model_server;
pub mod obeying;
pub mod ports;
pub mod read_only;
pub mod receiver;
pub mod small_disk;
pub mod soak;
pub mod tls;
pub mod webdriver;

use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

pub const HEARTH: &str = env!("CARGO_BIN_EXE_hearth");

/// The time every `hearth` a test runs takes for "now", unless the test
/// says otherwise (as jj pins `JJ_TIMESTAMP`): commit dates, file names and
/// the budget's day are the same on every run. A test that needs time to
/// pass sets its own `HEARTH_NOW`, a simulated clock, or [`TestHome::unpinned`].
pub const PINNED_NOW: &str = "2026-11-24T09:00:00Z";

pub struct TestHome {
    _dir: Option<tempfile::TempDir>,
    pub path: PathBuf,
}

/// One commit, as `git log` shows it.
#[derive(Debug, Clone)]
pub struct Commit {
    pub id: String,
    pub author: String,
    pub summary: String,
    pub message: String,
    pub files: Vec<String>,
}

impl TestHome {
    /// A home path that does not exist yet.
    pub fn new() -> TestHome {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("agent");
        TestHome {
            _dir: Some(dir),
            path,
        }
    }

    /// A handle on a home another `TestHome` owns (for a second thread).
    pub fn at(path: &std::path::Path) -> TestHome {
        TestHome {
            _dir: None,
            path: path.to_path_buf(),
        }
    }

    /// A home made by `hearth init`, with `config` as its hearth.toml.
    pub fn with_config(config: &str) -> TestHome {
        let home = TestHome::new();
        home.ok(&["init"]);
        std::fs::write(home.path.join("hearth.toml"), config).unwrap();
        home
    }

    /// `hearth --home HOME ARGS…` in a sealed environment.
    pub fn cmd(&self, args: &[&str]) -> Command {
        self.cmd_of(HEARTH, args)
    }

    /// Like [`Self::cmd`], with another build of hearth (a benchmark's
    /// "before" run).
    pub fn cmd_of(&self, binary: &str, args: &[&str]) -> Command {
        let mut cmd = Command::new(binary);
        cmd.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.path.parent().unwrap())
            .env("RUST_LOG", "info")
            .env("HEARTH_NOW", PINNED_NOW)
            .arg("--home")
            .arg(&self.path)
            .args(args)
            .stdin(Stdio::null());
        cmd
    }

    /// [`Self::cmd`] on the system clock: for a test about time passing
    /// (a gap, a timeout, a lock going stale).
    pub fn unpinned(&self, args: &[&str]) -> Command {
        let mut cmd = self.cmd(args);
        cmd.env_remove("HEARTH_NOW");
        cmd
    }

    /// The one way a test gives hearth a model API key: [`Self::cmd`] with
    /// `key` as both providers' variable (`ANTHROPIC_API_KEY`,
    /// `OPENAI_API_KEY`); nothing else of the caller's environment.
    pub fn keyed(&self, args: &[&str], key: &str) -> Command {
        let mut cmd = self.cmd(args);
        cmd.env("ANTHROPIC_API_KEY", key).env("OPENAI_API_KEY", key);
        cmd
    }

    /// [`Self::keyed`], run, asserting exit 0.
    pub fn ok_keyed(&self, args: &[&str], key: &str) -> Output {
        succeeded(args, self.keyed(args, key).output().unwrap())
    }

    pub fn output(&self, args: &[&str]) -> Output {
        self.cmd(args).output().unwrap()
    }

    /// Runs and asserts exit 0; returns stdout.
    pub fn ok(&self, args: &[&str]) -> String {
        let out = self.ok_with_env(args, &[]);
        String::from_utf8(out.stdout).unwrap()
    }

    /// Runs with `vars` added to the sealed environment and asserts exit 0.
    pub fn ok_with_env(&self, args: &[&str], vars: &[(&str, &str)]) -> Output {
        succeeded(
            args,
            self.cmd(args).envs(vars.iter().copied()).output().unwrap(),
        )
    }

    /// Starts hearth in the background, its stderr going to [`Self::log`]
    /// (a file, not a pipe nobody reads, which could fill and block it).
    pub fn spawn(&self, args: &[&str]) -> Child {
        self.spawn_with(self.cmd(args))
    }

    pub fn spawn_with(&self, mut cmd: Command) -> Child {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.log_path())
            .unwrap();
        cmd.stdout(Stdio::null()).stderr(log).spawn().unwrap()
    }

    fn log_path(&self) -> PathBuf {
        self.path.with_file_name("hearth-stderr.log")
    }

    /// What background hearth processes wrote to stderr.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.log_path()).unwrap_or_default()
    }

    /// Polls `check` until true; on time-out, fails showing the log.
    pub fn wait_for(&self, timeout: Duration, what: &str, mut check: impl FnMut() -> bool) {
        let start = Instant::now();
        while !check() {
            assert!(
                start.elapsed() < timeout,
                "timed out waiting for {what}; hearth's stderr:\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// `hearth run --ticks n` inside this test process: the same
    /// supervisor, ticks, ledger lines and commits as the binary's, with
    /// the pinned clock and `key` as the provider's API key, and no child
    /// process (for a test that needs no kill, signal, time limit or
    /// process group). Fails the test with the supervisor's error.
    pub fn run_here(&self, ticks: u64, key: Option<&str>) -> hearth::supervisor::RunOutcome {
        let home = hearth::home::Home::open(&self.path).expect("a home");
        let now = chrono::DateTime::parse_from_rfc3339(PINNED_NOW)
            .unwrap()
            .to_utc();
        let options = hearth::supervisor::RunOptions {
            exe: PathBuf::from("/nonexistent/in-process-ticks-start-no-child"),
            ticks: Some(ticks),
            interval: None,
            sd_notify: None,
            clock: hearth::clock::Clock::Pinned(now),
            remote_credentials: Default::default(),
            intake_pause: None,
            notify_secrets: Default::default(),
            run_job: None,
            in_process: Some(hearth::supervisor::InProcessTicks {
                api_key: key.map(str::to_string),
                ..Default::default()
            }),
            environment: Default::default(),
        };
        hearth::supervisor::run(&home, options)
            .unwrap_or_else(|e| panic!("the supervisor failed: {e} ({})", e.hint()))
    }

    /// `hearth ask QUESTION` inside this test process: the same ask, its
    /// journal, session lines and commit as the binary's, at the pinned
    /// time with `key`; the answer's text. Fails the test with the ask's
    /// error.
    pub fn ask_here(&self, question: &str, key: Option<&str>) -> String {
        let home = hearth::home::Home::open(&self.path).expect("a home");
        let config = hearth::config::Config::load(&home.config_path()).expect("hearth.toml");
        let now = chrono::DateTime::parse_from_rfc3339(PINNED_NOW)
            .unwrap()
            .to_utc();
        let question = hearth::ask::Question {
            text: question.to_string(),
            attachment: None,
            read_only: false,
            stdin_is_mine: false,
            relayed_by: None,
            api_key: key.map(str::to_string),
            environment: Default::default(),
        };
        let mut streamed = String::new();
        hearth::ask::ask(&home, &config, &question, now, &mut |t| {
            streamed.push_str(t)
        })
        .unwrap_or_else(|e| panic!("the ask failed: {e} ({})", e.hint()));
        streamed
    }

    /// A flare about `cause` posted in `outbox/` as hearth posts one (for
    /// a test of what a flare opens), at the pinned time.
    pub fn post_flare(&self, cause: hearth::mailbox::cause::Cause, subject: &str, body: &str) {
        let home = hearth::home::Home::open(&self.path).expect("a home");
        let now = chrono::DateTime::parse_from_rfc3339(PINNED_NOW)
            .unwrap()
            .to_utc();
        let flare = hearth::mailbox::outbox::Letter::flare(cause, subject, body);
        hearth::mailbox::outbox::post(&home, &flare, now).unwrap();
    }

    pub fn file(&self, rel: &str) -> PathBuf {
        self.path.join(rel)
    }

    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.file(rel)).unwrap()
    }

    /// Files in a directory of the home, sorted, hidden ones skipped.
    pub fn list(&self, rel: &str) -> Vec<String> {
        let mut names: Vec<String> = match std::fs::read_dir(self.file(rel)) {
            Ok(entries) => entries
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| !n.starts_with('.'))
                .collect(),
            Err(_) => vec![],
        };
        names.sort();
        names
    }

    /// The ledger's lines, parsed: the rotated segments (`state/ticks/`),
    /// oldest first, then the live file.
    pub fn ticks(&self) -> Vec<serde_json::Value> {
        let mut files: Vec<PathBuf> = std::fs::read_dir(self.file("state/ticks"))
            .map(|d| d.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        files.sort();
        files.push(self.file("state/ticks.jsonl"));
        files
            .iter()
            .flat_map(|f| {
                std::fs::read_to_string(f)
                    .unwrap_or_default()
                    .lines()
                    .filter_map(|l| serde_json::from_str(l).ok())
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    /// History, newest first.
    pub fn history(&self) -> Vec<Commit> {
        let repo = git2::Repository::open(&self.path).unwrap();
        let mut walk = repo.revwalk().unwrap();
        walk.push_head().unwrap();
        walk.map(|id| {
            let commit = repo.find_commit(id.unwrap()).unwrap();
            let tree = commit.tree().unwrap();
            let parent = commit.parent(0).ok().map(|p| p.tree().unwrap());
            let diff = repo
                .diff_tree_to_tree(parent.as_ref(), Some(&tree), None)
                .unwrap();
            let files = diff
                .deltas()
                .map(|d| {
                    d.new_file()
                        .path()
                        .or(d.old_file().path())
                        .unwrap()
                        .to_string_lossy()
                        .into_owned()
                })
                .collect();
            let author = commit.author().name().unwrap().to_string();
            Commit {
                id: commit.id().to_string(),
                author,
                summary: commit.summary().unwrap().to_string(),
                message: commit.message().unwrap().to_string(),
                files,
            }
        })
        .collect()
    }

    pub fn good_ref(&self) -> Option<String> {
        let repo = git2::Repository::open(&self.path).unwrap();
        repo.refname_to_id("refs/hearth/good")
            .ok()
            .map(|o| o.to_string())
    }

    pub fn git(&self, args: &[&str]) -> Output {
        Command::new("git")
            .arg("-C")
            .arg(&self.path)
            .args(args)
            .output()
            .unwrap()
    }
}

/// Sends `signal` to a child.
/// `out`, once it is known to have exited 0 (else the test fails showing
/// both streams).
fn succeeded(args: &[&str], out: Output) -> Output {
    assert!(
        out.status.success(),
        "hearth {args:?} failed: {:?}\nstdout: {}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Where a `hearth web` child says its page is: the first line of its
/// standard output (`hearth: the page is at http://ADDR/`), without the
/// last slash. The child's stdout must be piped.
pub fn page_address(child: &mut Child) -> String {
    use std::io::BufRead;
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().expect("stdout piped"))
        .read_line(&mut line)
        .expect("the page says where it is");
    line.trim()
        .strip_prefix("hearth: the page is at ")
        .unwrap_or_else(|| panic!("no address printed: {line:?}"))
        .trim_end_matches('/')
        .to_string()
}

pub fn signal(child: &Child, signal: i32) {
    // SAFETY: kill(2) on our own child's pid.
    #[allow(unsafe_code)]
    unsafe {
        libc::kill(child.id() as i32, signal);
    }
}

/// Waits for a child to exit within `timeout`.
pub fn finish(mut child: Child, timeout: Duration) -> std::process::ExitStatus {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if start.elapsed() > timeout {
            let _ = child.kill();
            let _ = child.wait();
            panic!("process did not exit within {timeout:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// SIGTERM, then wait up to 10 s for the exit status.
pub fn finish_after_term(child: Child) -> std::process::ExitStatus {
    signal(&child, libc::SIGTERM);
    finish(child, Duration::from_secs(10))
}

/// Whether the tick's ledger line records a tool error that went back to
/// the model with `what` in it, and how that recovery ended.
pub fn tool_recovery(tick: &serde_json::Value, what: &str) -> Option<String> {
    tick["recoveries"]
        .as_array()?
        .iter()
        .find(|r| {
            r["strategy"] == "tool error returned to the model"
                && r["detail"].as_str().unwrap_or("").contains(what)
        })
        .map(|r| r["outcome"].as_str().unwrap_or("").to_string())
}

/// A number of seconds no other test sleeps for: a process started with
/// it can be found from the host's `/proc` by its command line, whatever
/// pid namespace (a tool's sandbox) it was started in.
pub fn sleep_mark() -> String {
    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("300.{}{n:03}", std::process::id())
}

/// Whether a process runs (not a zombie) whose argv is exactly `argv`.
pub fn running_with_argv(argv: &[&str]) -> bool {
    let wanted: Vec<u8> = argv.iter().flat_map(|a| a.bytes().chain([0])).collect();
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .any(|entry| {
            let is_it = std::fs::read(entry.path().join("cmdline")).is_ok_and(|c| c == wanted);
            let live = std::fs::read_to_string(entry.path().join("stat"))
                .is_ok_and(|s| !s.contains(") Z ") && !s.contains(") X "));
            is_it && live
        })
}

/// Runs the Python `probe` as the account `nobody` (for the root-only
/// tests of what another account on the host can reach).
pub fn as_nobody(probe: &str) -> std::process::Output {
    Command::new("setpriv")
        .args([
            "--reuid=nobody",
            "--regid=nogroup",
            "--clear-groups",
            "/usr/bin/python3",
            "-c",
        ])
        .arg(probe)
        .output()
        .expect("setpriv (util-linux) runs the probe as nobody")
}
