//! `hearth status` on a home whose peer's outbox holds 10,000 handoffs
//! addressed to it that are all refused (a hostile peer's flood), side by
//! side with what a user would otherwise run to look at the same files
//! (`git ls-tree` and `git cat-file --batch` over every blob): the first
//! status, which reads each blob once, and the ones after, which keep what
//! the blobs said under `.hearth/` and read none again.
//!
//! `cargo bench --bench peer_status` (PEER_FILES=N for another size).

#![allow(clippy::disallowed_methods)] // fixtures, not state

mod common;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use common::{median, ms, samples};

const HEARTH: &str = env!("CARGO_BIN_EXE_hearth");
const RUNS: usize = 11;

fn hearth(home: &Path, args: &[&str]) -> std::process::Output {
    Command::new(HEARTH)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HEARTH_NOW", "2026-11-24T09:00:00Z")
        .arg("--home")
        .arg(home)
        .args(args)
        .output()
        .unwrap()
}

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args([
            "-c",
            "user.name=alice",
            "-c",
            "user.email=alice@example.org",
        ])
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
}

fn main() {
    let files: usize = std::env::var("PEER_FILES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000);
    let dir = tempfile::tempdir().unwrap();
    let (alice, bob) = (dir.path().join("alice"), dir.path().join("bob"));
    for home in [&alice, &bob] {
        assert!(hearth(home, &["init"]).status.success());
    }
    let built = Instant::now();
    for i in 0..files {
        std::fs::write(
            alice.join(format!(
                "outbox/2026010{i:05}T000000Z-handoff-x-1-to-bob.md"
            )),
            format!("---\nkind: handoff\nfrom: alice\nto: bob\n---\nnot a handoff {i}\n"),
        )
        .unwrap();
    }
    git(&alice, &["add", "-A"]);
    git(&alice, &["commit", "-qm", "a flood"]);
    std::fs::write(
        bob.join("hearth.toml"),
        format!("[peers]\nalice = \"{}\"\n", alice.display()),
    )
    .unwrap();
    println!(
        "a peer outbox of {files} refused handoffs built in {:.1} s",
        built.elapsed().as_secs_f64()
    );

    let memo = bob.join(".hearth/handoff-reads.json");
    let first = samples(RUNS.min(5), || {
        let _ = std::fs::remove_file(&memo);
        let out = hearth(&bob, &["status"]);
        assert!(String::from_utf8_lossy(&out.stdout).contains("more files in its outbox/"));
    });
    let _ = hearth(&bob, &["status"]);
    let again = samples(RUNS, || {
        let out = hearth(&bob, &["status"]);
        assert!(String::from_utf8_lossy(&out.stdout).contains("more files in its outbox/"));
    });
    let by_git = samples(RUNS.min(5), || {
        let listed = Command::new("git")
            .arg("-C")
            .arg(&alice)
            .args(["ls-tree", "--object-only", "HEAD", "outbox/"])
            .output()
            .unwrap();
        let mut cat = Command::new("git")
            .arg("-C")
            .arg(&alice)
            .args(["cat-file", "--batch"])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        cat.stdin.take().unwrap().write_all(&listed.stdout).unwrap();
        assert!(cat.wait().unwrap().success());
    });
    let version = samples(RUNS, || {
        assert!(hearth(&bob, &["--version"]).status.success());
    });
    let m = |s: &[std::time::Duration]| ms(median(s.iter().copied()));
    println!("| what | median ms |");
    println!("|---|---|");
    println!(
        "| hearth status, first (reads every blob) | {:.1} |",
        m(&first)
    );
    println!(
        "| hearth status, after (memo under .hearth/) | {:.1} |",
        m(&again)
    );
    println!(
        "| git ls-tree + cat-file --batch of every blob | {:.1} |",
        m(&by_git)
    );
    println!(
        "| hearth --version (a process start) | {:.1} |",
        m(&version)
    );
    println!(
        "ratios: first / after = {:.1}x; after / git = {:.2}x",
        m(&first) / m(&again),
        m(&again) / m(&by_git)
    );
}
