//! The thread (`/talk`) on a long history beside a short one, and beside
//! what a user would otherwise run to read it: `tail` of the session log
//! (what the page reads) and `hearth outbox` (the letters, unread).
//! A history of N exchanges is half ticks (a message read, archived, and
//! a letter posted to `outbox/`) and half asks (a question and its
//! answer), copied from a real tick's and a real ask's records.
//! Target (issue 69): `/talk` on 100,000 exchanges within 2× its time on
//! 1,000 — measured with the thread read on the page (its read mark past
//! everything) and read with `hearth outbox --ack` only (every letter's
//! own mark, the thread's mark never set).
//!
//! `cargo bench --bench talk` (`TALK_EXCHANGES=N` for the long one)

#![allow(clippy::disallowed_methods)] // fixtures, not state

#[path = "../tests/common/mod.rs"]
mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

const RUNS: usize = 15;
const TOKEN: &str = "a-long-random-token-for-the-talk-bench";

fn hearth(home: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_hearth"));
    cmd.arg("--home").arg(home).env_remove("ANTHROPIC_API_KEY");
    cmd
}

fn ok(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{cmd:?}: {out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A home of `n` exchanges, each half a tick's and half an ask's records
/// copied from real ones; every letter marked read by its own mark
/// (`hearth outbox --ack`), or by the thread's (`thread_read`).
fn home_with(dir: &Path, n: u64, thread_read: bool) -> PathBuf {
    let home = dir.join(format!("home-{n}-{thread_read}"));
    ok(hearth(&home).arg("init"));
    ok(hearth(&home).args(["say", "Where does the heron nest?"]));
    ok(hearth(&home).args(["run", "--ticks", "1"]));
    ok(hearth(&home).args(["ask", "What did the heron do?"]));
    let sessions = home.join("state/sessions.jsonl");
    let lines: Vec<Value> = std::fs::read_to_string(&sessions)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let kind = |k: &str| lines.iter().find(|l| l["kind"] == k).unwrap().clone();
    let (tick, question, answer) = (kind("tick"), kind("question"), kind("answer"));
    let archived = std::fs::read(home.join(tick["read"][0]["archived"].as_str().unwrap())).unwrap();
    let letter = std::fs::read(home.join(tick["letters"][0].as_str().unwrap())).unwrap();
    let start = chrono::DateTime::parse_from_rfc3339("2025-01-01T00:00:00Z")
        .unwrap()
        .to_utc();
    let mut text = String::new();
    let mut marks = Vec::new();
    for i in 0..n {
        let at = (start + chrono::Duration::minutes(i as i64)).to_rfc3339();
        if i % 2 == 0 {
            let mut line = tick.clone();
            let (message, id) = (
                format!("state/inbox-archive/{i:09}-bench.md"),
                format!("{i:09}-re-bench"),
            );
            std::fs::write(home.join(&message), &archived).unwrap();
            std::fs::write(home.join(format!("outbox/{id}.md")), &letter).unwrap();
            line["id"] = format!("tick-{}", i + 2).into();
            line["time"] = at.into();
            line["read"][0]["archived"] = message.into();
            line["letters"] = serde_json::json!([format!("outbox/{id}.md")]);
            text.push_str(&format!("{line}\n"));
            marks.push(id);
        } else {
            for template in [&question, &answer] {
                let mut line = template.clone();
                line["id"] = format!("ask-{i}").into();
                line["time"] = at.clone().into();
                text.push_str(&format!("{line}\n"));
            }
        }
    }
    std::fs::write(&sessions, text).unwrap();
    if thread_read {
        let through = (start + chrono::Duration::minutes(n as i64)).to_rfc3339();
        let mark = serde_json::json!({"version": 1, "through": through});
        std::fs::write(home.join("state/talk_read.json"), mark.to_string()).unwrap();
    } else {
        let marks = serde_json::json!({"version": 1, "read": marks});
        std::fs::write(home.join("state/flares_read.json"), marks.to_string()).unwrap();
    }
    // Committed, as the supervisor leaves a home.
    for args in [vec!["add", "-A"], vec!["commit", "-qm", "the history"]] {
        let out = Command::new("git")
            .arg("-C")
            .arg(&home)
            .args(["-c", "user.name=b", "-c", "user.email=b@example.org"])
            .args(&args)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
    }
    home
}

struct Page {
    child: Child,
    base: String,
}

impl Drop for Page {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn open(home: &Path) -> Page {
    let mut child = hearth(home)
        .args(["web", "--listen", "127.0.0.1:0"])
        .env("HEARTH_WEB_TOKEN", TOKEN)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let base = common::page_address(&mut child);
    Page { child, base }
}

fn median(mut run: impl FnMut()) -> Duration {
    run(); // warm
    let mut times: Vec<Duration> = (0..RUNS)
        .map(|_| {
            let at = Instant::now();
            run();
            at.elapsed()
        })
        .collect();
    times.sort();
    times[RUNS / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn main() {
    let big: u64 = std::env::var("TALK_EXCHANGES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    let dir = tempfile::tempdir().unwrap();
    let client = reqwest::blocking::Client::new();
    println!(
        "GET /talk (the newest page) against what a user would otherwise run, median of {RUNS}\n"
    );
    println!("| exchanges | read by | /talk | hearth status --json | tail -n 30 sessions.jsonl | hearth outbox |");
    println!("|---|---|---|---|---|---|");
    for thread_read in [true, false] {
        let mut talk_ms = Vec::new();
        for n in [1_000, big] {
            let home = home_with(dir.path(), n, thread_read);
            let page = open(&home);
            let talk = median(|| {
                let answer = client
                    .get(format!("{}/talk", page.base))
                    .bearer_auth(TOKEN)
                    .send()
                    .unwrap();
                assert_eq!(answer.status(), 200);
                assert!(answer.text().unwrap().contains("the agent wrote"));
            });
            let tail = median(|| {
                ok(Command::new("tail")
                    .args(["-n", "30"])
                    .arg(home.join("state/sessions.jsonl")));
            });
            let outbox = median(|| {
                ok(hearth(&home).arg("outbox"));
            });
            // The verdict every page carries, alone.
            let status = median(|| {
                ok(hearth(&home).args(["status", "--json"]));
            });
            talk_ms.push(ms(talk));
            println!(
                "| {n} | {} | {:.1} ms | {:.1} ms | {:.1} ms | {:.1} ms |",
                if thread_read {
                    "the thread"
                } else {
                    "`outbox --ack`"
                },
                ms(talk),
                ms(status),
                ms(tail),
                ms(outbox)
            );
        }
        println!(
            "\nratio, read by {}: /talk on {big} / on 1,000: {:.2}× (the issue's bound: 2×)\n",
            if thread_read {
                "the thread"
            } else {
                "`outbox --ack`"
            },
            talk_ms[1] / talk_ms[0]
        );
    }
}
