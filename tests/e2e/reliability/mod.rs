//! The reliability trials of issue 11, shared by `cargo test` (short runs,
//! `tests/trials.rs`) and `cargo bench --bench trials` (long runs). Each
//! trial drives the real `hearth` binary on a real home the way its users
//! do — an editor saving in place, messages arriving, `kill -9` and SIGTERM
//! at random moments — then checks what a user would check: `git fsck`,
//! every state file parses, every message and hand edit is there and
//! committed, no tick counted twice.

#![allow(dead_code)]
#![allow(clippy::disallowed_methods)] // fixtures, not state

pub mod asks;
pub mod bad_inputs;
pub mod decisions;
pub mod flood;
pub mod planted;
pub mod remote;
mod rng;
pub mod sandbox;
pub mod week;

pub use rng::Rng;

use std::collections::BTreeMap;
use std::process::Child;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::common::{finish, signal, TestHome};

/// Failures by kind, and what was lost.
#[derive(Debug, Default)]
pub struct Table {
    pub name: &'static str,
    pub trials: usize,
    pub failures: BTreeMap<String, usize>,
    /// Worked examples of failures (first few), for the reader.
    pub examples: Vec<String>,
    pub counts: BTreeMap<&'static str, usize>,
}

impl Table {
    fn new(name: &'static str) -> Table {
        Table {
            name,
            ..Table::default()
        }
    }

    pub fn fail(&mut self, kind: &str, example: String) {
        *self.failures.entry(kind.to_string()).or_default() += 1;
        if self.examples.len() < 5 {
            self.examples.push(format!("{kind}: {example}"));
        }
    }

    pub fn count(&mut self, what: &'static str, n: usize) {
        *self.counts.entry(what).or_default() += n;
    }

    /// A figure that is a level, not a sum over trials: the highest seen.
    pub fn level(&mut self, what: &'static str, n: usize) {
        let slot = self.counts.entry(what).or_default();
        *slot = (*slot).max(n);
    }

    pub fn total_failures(&self) -> usize {
        self.failures.values().sum()
    }

    /// A markdown table, as the README shows it.
    pub fn render(&self) -> String {
        let mut out = format!(
            "{}: {} trials, {} failures\n\n",
            self.name,
            self.trials,
            self.total_failures()
        );
        out.push_str("| what | count |\n|---|---|\n");
        for (what, n) in &self.counts {
            out.push_str(&format!("| {what} | {n} |\n"));
        }
        for (kind, n) in &self.failures {
            out.push_str(&format!("| FAILED: {kind} | {n} |\n"));
        }
        for example in &self.examples {
            out.push_str(&format!("\n- {example}"));
        }
        out
    }
}

/// An operator at work: saving memory files in place and sending messages,
/// remembering the last content of each file and every message delivered.
struct Operator {
    stop: Arc<AtomicBool>,
    edits: Arc<Mutex<BTreeMap<String, String>>>,
    sent: Arc<Mutex<Vec<String>>>,
    threads: Vec<JoinHandle<()>>,
}

impl Operator {
    fn start(home: &TestHome, trial: usize) -> Operator {
        let stop = Arc::new(AtomicBool::new(false));
        let edits = Arc::new(Mutex::new(BTreeMap::new()));
        let sent = Arc::new(Mutex::new(Vec::new()));
        let editor = {
            let (stop, edits, dir) = (stop.clone(), edits.clone(), home.path.join("memory"));
            std::thread::spawn(move || {
                let mut n = 0;
                while !stop.load(Ordering::Relaxed) {
                    n += 1;
                    let name = format!("hand-{}.md", n % 3);
                    let text = format!(
                        "# Note\n\ntrial {trial} save {n}\n{}",
                        "line\n".repeat(n % 50)
                    );
                    std::fs::write(dir.join(&name), &text).unwrap();
                    edits.lock().unwrap().insert(format!("memory/{name}"), text);
                    std::thread::sleep(Duration::from_millis(3));
                }
            })
        };
        let sender = {
            let (stop, sent) = (stop.clone(), sent.clone());
            let path = home.path.clone();
            std::thread::spawn(move || {
                let mut n = 0;
                let home = TestHome::at(&path);
                while !stop.load(Ordering::Relaxed) {
                    n += 1;
                    let token = format!("message-t{trial}-n{n}");
                    let out = home.output(&["say", &token]);
                    if out.status.success() {
                        sent.lock().unwrap().push(token);
                    }
                    std::thread::sleep(Duration::from_millis(40));
                }
            })
        };
        Operator {
            stop,
            edits,
            sent,
            threads: vec![editor, sender],
        }
    }

    fn stop(self) -> (BTreeMap<String, String>, Vec<String>) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads {
            t.join().unwrap();
        }
        let edits = self.edits.lock().unwrap().clone();
        let sent = self.sent.lock().unwrap().clone();
        (edits, sent)
    }
}

/// A home for a series of trials: ticks back to back, the healer's streak
/// out of reach (the crashes here are the trial's, not the agent's). The
/// trials run on the system clock: each tick's start tells a crash from
/// its restart.
pub fn trial_home() -> TestHome {
    let home = TestHome::with_config("[healer]\nstreak = 1000000\n");
    let first = home.unpinned(&["run", "--ticks", "1"]).output().unwrap();
    assert!(first.status.success(), "{first:?}");
    home
}

/// The pids of `home`'s tick children.
fn tick_children(home: &TestHome) -> Vec<i32> {
    let needle = home.path.to_string_lossy().into_owned();
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|entry| {
            let pid: i32 = entry.file_name().to_string_lossy().parse().ok()?;
            let raw = std::fs::read(entry.path().join("cmdline")).ok()?;
            let cmd = String::from_utf8_lossy(&raw).replace('\0', " ");
            (cmd.contains("--supervised") && cmd.contains(&needle)).then_some(pid)
        })
        .collect()
}

/// `kill -9` at random points: of the supervisor, of its tick, or both,
/// while the operator edits and writes; then a restart and the checks.
pub fn crash(trials: usize, seed: u64) -> Table {
    let mut table = Table::new("crash (kill -9)");
    let mut rng = Rng::new(seed);
    let home = trial_home();
    for trial in 0..trials {
        table.trials += 1;
        let operator = Operator::start(&home, trial);
        let child = home.spawn_with(home.unpinned(&["run", "--interval", "0"]));
        std::thread::sleep(Duration::from_millis(30 + rng.below(400)));
        let target = ["supervisor", "tick", "both"][rng.below(3) as usize];
        table.count(
            match target {
                "supervisor" => "kills of the supervisor",
                "tick" => "kills of a running tick",
                _ => "kills of both",
            },
            1,
        );
        if target != "supervisor" {
            for pid in tick_children(&home) {
                // SAFETY: kill(2) on a process this test's hearth started.
                #[allow(unsafe_code)]
                unsafe {
                    libc::kill(pid, libc::SIGKILL)
                };
            }
        }
        let status = if target == "tick" {
            std::thread::sleep(Duration::from_millis(50));
            signal(&child, libc::SIGTERM);
            let status = finish(child, Duration::from_secs(20));
            if !status.success() {
                table.fail(
                    "supervisor did not survive its tick's kill",
                    format!("trial {trial}: {status:?}"),
                );
            }
            status
        } else {
            signal(&child, libc::SIGKILL);
            finish(child, Duration::from_secs(20))
        };
        let _ = status;
        let (edits, sent) = operator.stop();
        let restart = home.unpinned(&["run", "--ticks", "1"]).output().unwrap();
        if !restart.status.success() {
            table.fail(
                "restart needed a manual step",
                format!(
                    "trial {trial}: {}",
                    String::from_utf8_lossy(&restart.stderr)
                ),
            );
        }
        check(&home, &mut table, trial, &edits, &sent);
    }
    table
}

/// SIGTERM at random points: exit 0 at once, a clean tree, nothing lost.
pub fn sigterm(trials: usize, seed: u64) -> Table {
    let mut table = Table::new("SIGTERM");
    let mut rng = Rng::new(seed);
    let home = trial_home();
    for trial in 0..trials {
        table.trials += 1;
        let operator = Operator::start(&home, trial);
        let child = home.spawn_with(home.unpinned(&["run", "--interval", "0"]));
        std::thread::sleep(Duration::from_millis(30 + rng.below(400)));
        let (edits, sent) = operator.stop();
        let started = Instant::now();
        signal(&child, libc::SIGTERM);
        let status = finish(child, Duration::from_secs(20));
        table.count("stops", 1);
        if !status.success() {
            table.fail("exit status not 0", format!("trial {trial}: {status:?}"));
        }
        if started.elapsed() > Duration::from_secs(8) {
            table.fail(
                "slow stop (> 8 s)",
                format!("trial {trial}: {:?}", started.elapsed()),
            );
        }
        let porcelain = home.git(&["status", "--porcelain"]).stdout;
        if !porcelain.is_empty() {
            table.fail(
                "tree not clean after the stop",
                format!("trial {trial}: {}", String::from_utf8_lossy(&porcelain)),
            );
        }
        check(&home, &mut table, trial, &edits, &sent);
    }
    table
}

/// What every trial must leave behind.
fn check(
    home: &TestHome,
    table: &mut Table,
    trial: usize,
    edits: &BTreeMap<String, String>,
    sent: &[String],
) {
    let fsck = home.git(&["fsck", "--strict", "--no-progress"]);
    if !fsck.status.success() {
        table.fail(
            "git fsck",
            format!("trial {trial}: {}", String::from_utf8_lossy(&fsck.stderr)),
        );
    }
    for rel in [
        "state/messages.json",
        "state/healer.json",
        "state/budget.json",
    ] {
        if let Ok(bytes) = std::fs::read(home.file(rel)) {
            if serde_json::from_slice::<serde_json::Value>(&bytes).is_err() {
                table.fail("state file does not parse", format!("trial {trial}: {rel}"));
            }
        }
    }
    // The rotated segments (`state/ticks/*.jsonl`, oldest first), then the
    // live ledger: a long series fills a segment.
    let mut segments: Vec<_> = std::fs::read_dir(home.file("state/ticks"))
        .map(|entries| entries.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    segments.retain(|p| p.extension().is_some_and(|x| x == "jsonl"));
    segments.sort();
    let mut ledger = String::new();
    for segment in segments {
        ledger.push_str(&std::fs::read_to_string(segment).unwrap_or_default());
    }
    ledger.push_str(&std::fs::read_to_string(home.file("state/ticks.jsonl")).unwrap_or_default());
    let mut lines = Vec::new();
    for line in ledger.lines() {
        match serde_json::from_str::<serde_json::Value>(line) {
            Ok(v) => lines.push(v),
            Err(_) => table.fail(
                "ledger line does not parse",
                format!("trial {trial}: {line:.80}"),
            ),
        }
    }
    for (i, line) in lines.iter().enumerate() {
        if line["tick"].as_u64() != Some(i as u64 + 1) {
            table.fail(
                "tick number reused or skipped",
                format!("trial {trial}: line {} is tick {}", i + 1, line["tick"]),
            );
            break;
        }
    }
    for pair in lines.windows(2) {
        if pair[0]["start"] == pair[1]["start"] {
            table.fail(
                "phantom crash (two ticks, one start)",
                format!(
                    "trial {trial}: ticks {} and {}",
                    pair[0]["tick"], pair[1]["tick"]
                ),
            );
        }
    }
    let subjects = home.git(&["log", "--format=%s"]).stdout;
    let subjects = String::from_utf8_lossy(&subjects);
    let mut per_tick: BTreeMap<u64, usize> = BTreeMap::new();
    for s in subjects.lines() {
        if let Some(n) = s
            .strip_prefix("tick ")
            .and_then(|r| r.split(':').next())
            .and_then(|n| n.parse().ok())
        {
            *per_tick.entry(n).or_default() += 1;
        }
    }
    for line in &lines {
        let n = line["tick"].as_u64().unwrap_or(0);
        if per_tick.get(&n) != Some(&1) {
            table.fail(
                "tick without exactly one commit",
                format!("trial {trial}: tick {n} has {:?}", per_tick.get(&n)),
            );
        }
    }
    // The ledger is one home's over the whole series, so this is a level.
    table.level(
        "crash records in the ledger at the end",
        lines.iter().filter(|l| l["class"] == "crash").count(),
    );
    let mut delivered = String::new();
    for dir in ["inbox", "state/inbox-archive"] {
        for name in home.list(dir) {
            delivered.push_str(
                &std::fs::read_to_string(home.file(&format!("{dir}/{name}"))).unwrap_or_default(),
            );
        }
    }
    table.count("messages sent", sent.len());
    for token in sent {
        if !delivered.contains(token.as_str()) {
            table.fail("inbox message lost", format!("trial {trial}: {token}"));
        }
    }
    table.count("hand edits checked", edits.len());
    for (rel, text) in edits {
        let head = home.git(&["show", &format!("HEAD:{rel}")]).stdout;
        if head != text.as_bytes() {
            table.fail("hand edit not committed", format!("trial {trial}: {rel}"));
        }
    }
    let porcelain = home.git(&["status", "--porcelain"]).stdout;
    if !porcelain.is_empty() {
        table.fail(
            "left uncommitted",
            format!("trial {trial}: {}", String::from_utf8_lossy(&porcelain)),
        );
    }
}

/// `recalls` recall loops (each `rounds` queries) while the supervisor
/// ticks, the operator saves in place and by rename, and `index --rebuild`
/// runs: errors, whether the supervisor lived, and freshness lag (from a
/// save to the first recall that finds the new word).
pub fn concurrency(recalls: usize, rounds: usize) -> (Table, Vec<Duration>) {
    let mut table = Table::new("concurrency");
    let home = trial_home();
    let supervisor = home.spawn_with(home.unpinned(&["run", "--interval", "0"]));
    let errors = Arc::new(Mutex::new(Vec::<String>::new()));
    let mut loops = Vec::new();
    for r in 0..recalls {
        let (path, errors) = (home.path.clone(), errors.clone());
        loops.push(std::thread::spawn(move || {
            let home = TestHome::at(&path);
            for i in 0..rounds {
                let out = home.output(&[
                    "recall",
                    "--no-rerank",
                    "--json",
                    &format!("note save trial {}", (r + i) % 7),
                ]);
                if !out.status.success() {
                    errors
                        .lock()
                        .unwrap()
                        .push(String::from_utf8_lossy(&out.stderr).into_owned());
                }
            }
        }));
    }
    let mut lags = Vec::new();
    for n in 0..rounds.min(10) {
        let word = format!("zephyrword{n}x");
        let text = format!("# Fresh\n\nthe new word is {word}\n");
        let started = Instant::now();
        if n % 2 == 0 {
            std::fs::write(home.file("memory/fresh.md"), &text).unwrap();
        } else {
            std::fs::write(home.file("memory/.fresh.md.tmp"), &text).unwrap();
            std::fs::rename(
                home.file("memory/.fresh.md.tmp"),
                home.file("memory/fresh.md"),
            )
            .unwrap();
        }
        loop {
            let out = home.output(&["recall", "--no-rerank", "--json", &word]);
            if String::from_utf8_lossy(&out.stdout).contains(&word) {
                lags.push(started.elapsed());
                break;
            }
            if started.elapsed() > Duration::from_secs(30) {
                table.fail("a save never became recallable", word.clone());
                break;
            }
        }
        if n == 3 {
            let out = home.output(&["index", "--rebuild"]);
            if !out.status.success() {
                errors
                    .lock()
                    .unwrap()
                    .push(String::from_utf8_lossy(&out.stderr).into_owned());
            }
        }
    }
    for l in loops {
        l.join().unwrap();
    }
    table.trials = recalls * rounds;
    table.count("recalls", recalls * rounds + lags.len());
    for e in errors.lock().unwrap().iter() {
        table.fail(
            "recall or rebuild error",
            e.lines().last().unwrap_or("").to_string(),
        );
    }
    if supervisor_alive(&supervisor) {
        table.count("supervisor alive at the end", 1);
    } else {
        table.fail("the supervisor died", home.log());
    }
    let status = crate::common::finish_after_term(supervisor);
    if !status.success() {
        table.fail("the supervisor's stop", format!("{status:?}"));
    }
    lags.sort();
    (table, lags)
}

fn supervisor_alive(child: &Child) -> bool {
    std::path::Path::new(&format!("/proc/{}", child.id())).exists()
        && !std::fs::read_to_string(format!("/proc/{}/stat", child.id()))
            .is_ok_and(|s| s.contains(") Z "))
}
