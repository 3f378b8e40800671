//! The operator's page (`hearth web`) on a home with 1,000 ticks and on one
//! with 100,000 (the ledger rotated into segments, as a live home's is),
//! side by side with what a user would otherwise run for the same day:
//! `hearth day --json` (the same read model, a process each time) and
//! `git log --since=24.hours` (the history alone). Then the server's RSS
//! at rest, and how soon an open page's event stream hears of a commit.
//!
//! `cargo bench --bench web` (WEB_TICKS=N for the larger home's size).

#![allow(clippy::disallowed_methods)] // fixtures, not state

mod common;

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Instant;

use common::{median, ms, samples};

const HEARTH: &str = env!("CARGO_BIN_EXE_hearth");

/// The binary measured: this build's, or `HEARTH_BIN` (the package's
/// `dist` build, which the .deb ships).
fn binary() -> String {
    std::env::var("HEARTH_BIN").unwrap_or_else(|_| HEARTH.to_string())
}
const NOW: &str = "2026-11-24T09:00:00Z";
const TOKEN: &str = "bench-token-for-the-page-0123456789";
const RUNS: usize = 21;

fn hearth(home: &Path) -> Command {
    let mut cmd = Command::new(binary());
    cmd.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HEARTH_NOW", NOW)
        .arg("--home")
        .arg(home);
    cmd
}

/// A home whose ledger holds `ticks` ticks, 15 minutes apart up to now,
/// in segments of a thousand as rotation leaves them.
fn home_with(dir: &Path, ticks: u64) -> std::path::PathBuf {
    let home = dir.join(format!("home-{ticks}"));
    assert!(hearth(&home).arg("init").status().unwrap().success());
    assert!(hearth(&home)
        .args(["run", "--ticks", "1"])
        .status()
        .unwrap()
        .success());
    let template: serde_json::Value = serde_json::from_str(
        std::fs::read_to_string(home.join("state/ticks.jsonl"))
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    let now = chrono::DateTime::parse_from_rfc3339(NOW).unwrap().to_utc();
    let line = |n: u64| {
        let mut record = template.clone();
        let at = now - chrono::Duration::minutes(15 * (ticks - n) as i64);
        record["tick"] = n.into();
        record["start"] = at.to_rfc3339().into();
        record["end"] = at.to_rfc3339().into();
        serde_json::to_string(&record).unwrap()
    };
    let segments = home.join("state/ticks");
    std::fs::create_dir_all(&segments).unwrap();
    let live_from = ticks - ticks % 1000 + 1;
    for first in (1..live_from).step_by(1000) {
        let last = first + 999;
        let text: String = (first..=last).map(|n| line(n) + "\n").collect();
        std::fs::write(segments.join(format!("{first:09}-{last:09}.jsonl")), text).unwrap();
    }
    let text: String = (live_from..=ticks).map(|n| line(n) + "\n").collect();
    std::fs::write(home.join("state/ticks.jsonl"), text).unwrap();
    // Committed, as the supervisor leaves its ledger.
    for args in [vec!["add", "-A"], vec!["commit", "-qm", "the ledger"]] {
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
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let base = line
        .trim()
        .trim_start_matches("hearth: the page is at ")
        .trim_end_matches('/')
        .to_string();
    Page { child, base }
}

/// The page's resident memory: (its own, the binary's code pages), KiB.
/// Code pages are the executable's, mapped from the file: shared with a
/// supervisor running the same binary, and the kernel's to drop.
fn rss_kib(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .unwrap_or(0)
    };
    (field("RssAnon:") + field("RssShmem:"), field("RssFile:"))
}

fn mb(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

/// `path` of `page`, read whole, as the operator's script would.
fn fetch(client: &reqwest::blocking::Client, page: &Page, path: &str) {
    let answer = client
        .get(format!("{}{path}", page.base))
        .bearer_auth(TOKEN)
        .send()
        .unwrap();
    assert!(answer.status().is_success(), "{path}");
    answer.text().unwrap();
}

/// The page's memory fresh, and at rest after every view was served once.
fn memory_at_rest(page: &Page, client: &reqwest::blocking::Client) {
    let (own, code) = rss_kib(page.child.id());
    println!(
        "RSS fresh: {:.1} MB ({:.1} MB its own, {:.1} MB the binary's code pages)",
        mb(own + code),
        mb(own),
        mb(code)
    );
    for path in [
        "/",
        "/incidents",
        "/proposals",
        "/jobs",
        "/spend",
        "/ticks/1",
        "/memory/",
        "/memory/identity.md",
        "/recall?q=note",
    ] {
        fetch(client, page, path);
    }
    // The blocking threads that rendered them let go after 10 s idle.
    std::thread::sleep(std::time::Duration::from_secs(12));
    let (own, code) = rss_kib(page.child.id());
    println!(
        "RSS at rest after every view: {:.1} MB ({:.1} MB its own, {:.1} MB the binary's code \
         pages; the issue's bound: 15 MB)",
        mb(own + code),
        mb(own),
        mb(code)
    );
}

fn main() {
    let big: u64 = std::env::var("WEB_TICKS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    let dir = tempfile::tempdir().unwrap();
    let client = reqwest::blocking::Client::new();
    println!("hearth web: `/` (today) against what a user would otherwise run, {RUNS} runs each");
    println!(
        "{:>9}  {:>10}  {:>14}  {:>12}  {:>8}",
        "ticks", "page /", "hearth day", "git log", "RSS"
    );
    let mut page_ms = Vec::new();
    for ticks in [1_000, big] {
        let home = home_with(dir.path(), ticks);
        let page = open(&home);
        let get = || fetch(&client, &page, "/");
        get(); // warm
        let served = median(samples(RUNS, get).into_iter());
        // The other views a phone opens most, on the same home.
        let others: Vec<String> = [
            "/spend",
            &format!("/ticks/{ticks}"),
            "/jobs",
            "/memory/identity.md",
        ]
        .iter()
        .map(|path| {
            let one = || fetch(&client, &page, path);
            one();
            format!(
                "{path} {:.1} ms",
                ms(median(samples(RUNS, one).into_iter()))
            )
        })
        .collect();
        println!("           ({})", others.join(", "));
        let day = median(
            samples(RUNS, || {
                assert!(hearth(&home)
                    .args(["day", "--json"])
                    .output()
                    .unwrap()
                    .status
                    .success());
            })
            .into_iter(),
        );
        let log = median(
            samples(RUNS, || {
                let out = Command::new("git")
                    .arg("-C")
                    .arg(&home)
                    .args(["log", "--since=24.hours", "--format=%H %s"])
                    .output()
                    .unwrap();
                assert!(out.status.success());
            })
            .into_iter(),
        );
        let status = median(
            samples(5, || {
                assert!(hearth(&home)
                    .args(["status", "--json"])
                    .output()
                    .unwrap()
                    .status
                    .success());
            })
            .into_iter(),
        );
        println!("           (hearth status --json: {:.1} ms)", ms(status));
        let (own, code) = rss_kib(page.child.id());
        page_ms.push(ms(served));
        println!(
            "{ticks:>9}  {:>7.1} ms  {:>11.1} ms  {:>9.1} ms  {:>5.1} MB",
            ms(served),
            ms(day),
            ms(log),
            mb(own + code)
        );
        if ticks == big {
            live_latency(&home, &page);
            let fresh = open(&home);
            memory_at_rest(&fresh, &client);
        }
    }
    println!(
        "ratio: `/` on {big} ticks / on 1,000: {:.2}x (the issue's bound: 2x)",
        page_ms[1] / page_ms[0]
    );
}

/// How soon an open page's event stream hears of a commit: the time from
/// `git commit` returning to the `commit` event, over a few commits.
fn live_latency(home: &Path, page: &Page) {
    let mut stream = BufReader::new(
        reqwest::blocking::Client::builder()
            .timeout(None)
            .build()
            .unwrap()
            .get(format!("{}/events", page.base))
            .bearer_auth(TOKEN)
            .send()
            .unwrap(),
    );
    let mut next_event = || {
        let mut line = String::new();
        loop {
            line.clear();
            stream.read_line(&mut line).unwrap();
            if line.starts_with("event: commit") {
                return;
            }
        }
    };
    next_event(); // the commit it opened on
    let mut heard = Vec::new();
    for n in 0..5 {
        let mut file = std::fs::File::create(home.join(format!("memory/bench-{n}.md"))).unwrap();
        writeln!(file, "note {n}").unwrap();
        for args in [vec!["add", "-A"], vec!["commit", "-qm", "bench: a commit"]] {
            let out = Command::new("git")
                .arg("-C")
                .arg(home)
                .args(["-c", "user.name=b", "-c", "user.email=b@example.org"])
                .args(&args)
                .output()
                .unwrap();
            assert!(out.status.success(), "{out:?}");
        }
        let committed = Instant::now();
        next_event();
        heard.push(committed.elapsed());
    }
    let heard = median(heard.into_iter());
    println!(
        "a commit reaches an open page in {:.0} ms (median of 5; the issue's bound: 1 s)",
        ms(heard)
    );
}
