//! Broken files of every kind (issue 11's 41 bad inputs): each case sets up
//! a home, breaks one thing, and runs one tick. The run must end the way
//! the case says — handled (exit 0) or a clear error that names the file —
//! within a minute, and every byte the case put there must still be
//! somewhere: on disk, moved aside beside it, or committed.

use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::time::Duration;

use super::Table;
use crate::common::TestHome;

/// How a case must end.
pub enum Expect {
    /// Exit 0.
    Handled,
    /// Exit 1, stderr naming this.
    Error(&'static str),
}

type Setup = Box<dyn Fn(&TestHome)>;

fn write(home: &TestHome, rel: &str, bytes: impl AsRef<[u8]>) {
    let path = home.file(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, bytes).unwrap();
}

fn fifo(path: &std::path::Path) {
    let made = std::process::Command::new("mkfifo").arg(path).status();
    assert!(made.unwrap().success());
}

fn set_old(path: &std::path::Path) {
    let old = hearth::clock::file_time_now() - Duration::from_secs(3600);
    let file = std::fs::File::options().write(true).open(path).unwrap();
    file.set_modified(old).unwrap();
}

/// The cases; `huge_mb` sizes the big files (100 in the long run).
pub fn cases(huge_mb: usize) -> Vec<(&'static str, Expect, Setup)> {
    use Expect::*;
    let huge = huge_mb * 1024 * 1024;
    vec![
        (
            "front matter: bad YAML",
            Handled,
            Box::new(|h| write(h, "memory/core/a.md", "---\ntitle: [unclosed\n---\nbody\n")),
        ),
        (
            "front matter: unclosed ---",
            Handled,
            Box::new(|h| write(h, "memory/core/b.md", "---\ntitle: x\nbody without end\n")),
        ),
        (
            "front matter: core: maybe",
            Handled,
            Box::new(|h| write(h, "memory/c.md", "---\ncore: maybe\n---\nx\n")),
        ),
        (
            "memory: invalid UTF-8",
            Handled,
            Box::new(|h| write(h, "memory/core/latin1.md", b"caf\xe9 \xff\xfe\n")),
        ),
        (
            "memory: binary",
            Handled,
            Box::new(|h| {
                write(
                    h,
                    "memory/blob.md",
                    (0..=255u8).cycle().take(70_000).collect::<Vec<u8>>(),
                )
            }),
        ),
        (
            "memory: empty",
            Handled,
            Box::new(|h| write(h, "memory/core/empty.md", "")),
        ),
        (
            "memory: huge file",
            Handled,
            Box::new(move |h| {
                write(
                    h,
                    "memory/huge.md",
                    "all work and no play\n".repeat(huge / 21),
                )
            }),
        ),
        (
            "state: messages.json garbage",
            Handled,
            Box::new(|h| write(h, "state/messages.json", "}{ not json")),
        ),
        (
            "state: messages.json truncated",
            Handled,
            Box::new(|h| {
                let text = std::fs::read(h.file("state/messages.json")).unwrap();
                write(h, "state/messages.json", &text[..text.len() / 2]);
            }),
        ),
        (
            "state: messages.json wrong shape",
            Handled,
            Box::new(|h| write(h, "state/messages.json", "[1, 2, 3]")),
        ),
        (
            "state: messages.json missing",
            Handled,
            Box::new(|h| std::fs::remove_file(h.file("state/messages.json")).unwrap()),
        ),
        (
            "state: healer.json garbage",
            Handled,
            Box::new(|h| write(h, "state/healer.json", "\u{0}\u{1}garbage")),
        ),
        (
            "state: healer.json wrong shape",
            Handled,
            Box::new(|h| write(h, "state/healer.json", "{\"version\": \"one\"}")),
        ),
        (
            "state: budget.json garbage",
            Handled,
            Box::new(|h| write(h, "state/budget.json", "{{{")),
        ),
        (
            "state: ticks.jsonl torn last line",
            Handled,
            Box::new(|h| {
                let mut text = h.read("state/ticks.jsonl");
                text.push_str("{\"tick\": 2, \"sta");
                write(h, "state/ticks.jsonl", text);
            }),
        ),
        (
            "state: ticks.jsonl binary",
            Handled,
            Box::new(|h| write(h, "state/ticks.jsonl", [0u8, 159, 146, 150, 10, 255])),
        ),
        (
            "state: healer_note.json garbage",
            Handled,
            Box::new(|h| write(h, "state/healer_note.json", "nope")),
        ),
        (
            "state: directory missing",
            Handled,
            Box::new(|h| std::fs::remove_dir_all(h.file("state")).unwrap()),
        ),
        (
            "git: stale index.lock",
            Handled,
            Box::new(|h| {
                write(h, ".git/index.lock", "");
                set_old(&h.file(".git/index.lock"));
            }),
        ),
        (
            "git: fresh index.lock, owner gone",
            Handled,
            Box::new(|h| write(h, ".git/index.lock", "")),
        ),
        (
            "git: stale ref lock",
            Handled,
            Box::new(|h| write(h, ".git/refs/heads/main.lock", "")),
        ),
        (
            "git: detached HEAD",
            Handled,
            Box::new(|h| {
                let head = h.git(&["rev-parse", "HEAD"]).stdout;
                h.git(&[
                    "checkout",
                    "-q",
                    "--detach",
                    String::from_utf8_lossy(&head).trim(),
                ]);
            }),
        ),
        (
            "git: corrupt index",
            Handled,
            Box::new(|h| write(h, ".git/index", "DIRC garbage")),
        ),
        (
            "git: unfinished merge",
            Handled,
            Box::new(|h| {
                let head = h.git(&["rev-parse", "HEAD"]).stdout;
                write(h, ".git/MERGE_HEAD", head);
            }),
        ),
        (
            "git: no .git",
            Error("not a git repository"),
            Box::new(|h| std::fs::remove_dir_all(h.file(".git")).unwrap()),
        ),
        (
            "git: garbled HEAD",
            Error(".git/HEAD"),
            Box::new(|h| write(h, ".git/HEAD", "garbage\n")),
        ),
        (
            "config: unknown key",
            Error("intreval_s"),
            Box::new(|h| write(h, "hearth.toml", "[tick]\nintreval_s = 5\n")),
        ),
        (
            "config: bad type",
            Error("hearth.toml:2"),
            Box::new(|h| write(h, "hearth.toml", "[tick]\ninterval_s = \"soon\"\n")),
        ),
        (
            "config: not UTF-8",
            Error("hearth.toml"),
            Box::new(|h| write(h, "hearth.toml", b"# caf\xe9\n")),
        ),
        (
            "config: a directory",
            Error("hearth.toml is not a file"),
            Box::new(|h| {
                std::fs::remove_file(h.file("hearth.toml")).unwrap();
                std::fs::create_dir(h.file("hearth.toml")).unwrap();
            }),
        ),
        (
            "config: empty",
            Handled,
            Box::new(|h| write(h, "hearth.toml", "")),
        ),
        (
            "inbox: binary",
            Handled,
            Box::new(|h| {
                write(
                    h,
                    "inbox/bin.md",
                    (0..=255u8).cycle().take(5000).collect::<Vec<u8>>(),
                )
            }),
        ),
        (
            "inbox: huge",
            Handled,
            Box::new(move |h| {
                write(
                    h,
                    "inbox/big.md",
                    "please read all of this\n".repeat(huge / 2 / 24),
                )
            }),
        ),
        (
            "inbox: odd files",
            Handled,
            Box::new(|h| {
                write(h, "inbox/.hidden", "hidden");
                write(h, "inbox/no-extension", "plain");
                write(h, "inbox/sub/nested.md", "nested");
                write(h, "inbox/image.png", [137u8, 80, 78, 71]);
            }),
        ),
        (
            "inbox: FIFO",
            Handled,
            Box::new(|h| fifo(&h.file("inbox/pipe.md"))),
        ),
        (
            "tools: FIFO manifest",
            Handled,
            Box::new(|h| fifo(&h.file("tools/pipe.toml"))),
        ),
        (
            "peers: FIFO and /dev/zero named like handoffs",
            Handled,
            Box::new(|h| {
                let outbox = h.path.with_file_name("bob").join("outbox");
                std::fs::create_dir_all(&outbox).unwrap();
                fifo(&outbox.join("20260101T000000Z-handoff-x-1-to-agent.md"));
                std::os::unix::fs::symlink(
                    "/dev/zero",
                    outbox.join("20260101T000001Z-handoff-x-2-to-agent.md"),
                )
                .unwrap();
                let config = format!(
                    "[peers]\nbob = \"{}\"\n",
                    outbox.parent().unwrap().display()
                );
                std::fs::write(h.file("hearth.toml"), config).unwrap();
            }),
        ),
        (
            "memory: symlink loop",
            Handled,
            Box::new(|h| {
                std::os::unix::fs::symlink("loop-b.md", h.file("memory/loop-a.md")).unwrap();
                std::os::unix::fs::symlink("loop-a.md", h.file("memory/loop-b.md")).unwrap();
                std::os::unix::fs::symlink(".", h.file("memory/core/self")).unwrap();
            }),
        ),
        (
            "memory: FIFO",
            Handled,
            Box::new(|h| fifo(&h.file("memory/core/pipe.md"))),
        ),
        (
            "memory: symlink to /dev/zero",
            Handled,
            Box::new(|h| {
                std::os::unix::fs::symlink("/dev/zero", h.file("memory/core/zero.md")).unwrap();
            }),
        ),
        (
            "memory: 99 levels deep",
            Handled,
            Box::new(|h| {
                let mut deep = h.file("memory");
                for i in 0..99 {
                    deep.push(format!("d{i}"));
                }
                std::fs::create_dir_all(&deep).unwrap();
                std::fs::write(deep.join("x.md"), "deep").unwrap();
            }),
        ),
        (
            "memory: odd names",
            Handled,
            Box::new(|h| {
                write(h, "memory/two\nlines.md", "nl");
                std::fs::write(
                    h.path
                        .join(std::ffi::OsStr::from_bytes(b"memory/caf\xe9.md")),
                    "latin1",
                )
                .unwrap();
                write(h, "memory/-rf.md", "dash");
                write(h, "memory/with space.md", "space");
                write(h, "memory/*.md", "star");
            }),
        ),
        (
            "memory: unreadable file",
            Handled,
            Box::new(|h| {
                write(h, "memory/secret.md", "locked");
                std::fs::set_permissions(
                    h.file("memory/secret.md"),
                    std::os::unix::fs::PermissionsExt::from_mode(0o000),
                )
                .unwrap();
            }),
        ),
    ]
}

/// Runs every case on its own fresh home.
pub fn run(huge_mb: usize) -> Table {
    let mut table = Table::new("bad inputs");
    for (name, expect, setup) in cases(huge_mb) {
        table.trials += 1;
        let home = TestHome::with_config("");
        home.ok(&["run", "--ticks", "1"]);
        setup(&home);
        let before = files(&home);
        let child = home.spawn(&["run", "--ticks", "1"]);
        let started = std::time::Instant::now();
        let status = wait(child, Duration::from_secs(60));
        let log = home.log();
        let Some(status) = status else {
            table.fail("hung (> 60 s)", name.into());
            continue;
        };
        match expect {
            Expect::Handled if status.success() => table.count("handled", 1),
            Expect::Handled => table.fail(
                "failed instead of handling it",
                format!("{name}: {}", last_lines(&log)),
            ),
            Expect::Error(what) if status.code() == Some(1) && log.contains(what) => {
                table.count("clear errors", 1)
            }
            Expect::Error(what) => table.fail(
                "not the clear error expected",
                format!(
                    "{name}: wanted exit 1 naming {what:?}, got {status:?}: {}",
                    last_lines(&log)
                ),
            ),
        }
        if started.elapsed() > Duration::from_secs(30) {
            table.count("slow (> 30 s)", 1);
        }
        for (rel, bytes) in before {
            if !kept(&home, &rel, &bytes) {
                table.fail(
                    "lost a file's content",
                    format!("{name}: {}", rel.display()),
                );
            }
        }
    }
    table
}

fn wait(mut child: std::process::Child, limit: Duration) -> Option<std::process::ExitStatus> {
    let started = std::time::Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return Some(status);
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn last_lines(log: &str) -> String {
    let lines: Vec<&str> = log.lines().collect();
    lines[lines.len().saturating_sub(3)..].join(" | ")
}

/// Memory and inbox files (the operator's), readable ones, with their bytes.
fn files(home: &TestHome) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    for dir in ["memory", "inbox"] {
        for entry in walkdir::WalkDir::new(home.file(dir)).into_iter().flatten() {
            if entry.file_type().is_file() {
                if let Ok(bytes) = std::fs::read(entry.path()) {
                    let rel = entry.path().strip_prefix(&home.path).unwrap();
                    out.push((rel.to_path_buf(), bytes));
                }
            }
        }
    }
    out
}

/// The bytes are still at `rel`, or were archived (inbox messages move to
/// `state/inbox-archive/`), or are committed.
fn kept(home: &TestHome, rel: &std::path::Path, bytes: &[u8]) -> bool {
    if std::fs::read(home.path.join(rel)).is_ok_and(|b| b == bytes) {
        return true;
    }
    if rel.starts_with("inbox") {
        let archive = home.file("state/inbox-archive");
        let found = walkdir::WalkDir::new(archive)
            .into_iter()
            .flatten()
            .any(|e| e.file_type().is_file() && std::fs::read(e.path()).is_ok_and(|b| b == bytes));
        if found {
            return true;
        }
    }
    let spec = std::ffi::OsString::from_vec([b"HEAD:", rel.as_os_str().as_bytes()].concat());
    let shown = std::process::Command::new("git")
        .arg("-C")
        .arg(&home.path)
        .arg("show")
        .arg(spec)
        .output()
        .unwrap();
    shown.stdout == bytes
}
