//! A receiver flooded (issue 48's trial): a hostile peer publishes
//! `hostile` handoffs at once — half of them rounds of one collaboration
//! far past `max_rounds`, a quarter founding a collaboration each, a
//! quarter aimed at a collaboration it is not part of — claiming to be
//! older than everything else, while a legitimate peer's backlog of
//! `legit` handoffs waits out a git-server outage. Both are served by a
//! real `git daemon`; the receiver runs the offline model, one tick a
//! second, and its operator says something every second throughout.
//!
//! Counted from outside: the operator's messages a tick did not take within
//! [`ANSWER_WITHIN`]; legitimate handoffs not taken within `take_within` of
//! the server's return; hostile handoffs taken past their bounds (past
//! `max_rounds`, into the collaboration it is not part of); the
//! supervisor's peak memory over `max_rss_mb`.

#![allow(clippy::disallowed_methods)] // fixtures, not state

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::Table;
use crate::common::git_daemon::GitDaemon;
use crate::common::{finish, signal, TestHome};

/// How soon a tick must take what the operator says, flood or not.
const ANSWER_WITHIN: Duration = Duration::from_secs(15);
const MAX_ROUNDS: usize = 12;

/// The trial's shape.
pub struct Flood {
    /// The hostile peer's handoffs.
    pub hostile: usize,
    /// The legitimate peer's backlog.
    pub legit: usize,
    /// How long the git server is down while the backlog waits.
    pub outage: Duration,
    /// How soon after the server's return the backlog must all be taken.
    pub take_within: Duration,
    /// The supervisor's peak resident memory may not pass this.
    pub max_rss_mb: u64,
}

/// One handoff file as hearth renders it (its record holding the last few
/// rounds: a flood's files stay small).
fn handoff(from: &str, slug: &str, round: usize, created: &str, participants: &[&str]) -> String {
    let rounds: Vec<serde_json::Value> = (round.saturating_sub(3).max(1)..=round)
        .map(|n| {
            serde_json::json!({"n": n, "from": from, "to": "bob", "at": created,
                "summary": format!("round {n}")})
        })
        .collect();
    let record = serde_json::json!({"slug": slug, "name": slug, "status": "active",
        "participants": participants, "rounds": rounds,
        "events": [{"at": created, "by": from, "what": "new"}]});
    format!(
        "---\nkind: \"handoff\"\nfrom: {from:?}\nto: \"bob\"\nround: {round}\n\
         created: {created:?}\ncollaboration: {record}\n---\n{slug}, round {round}: \
         please look at this.\n"
    )
}

/// A bare repository at `bare` whose `main` holds `files` under
/// `outbox/`, written in one `git fast-import` stream.
fn publish(bare: &Path, files: &[(String, String)]) {
    crate::common::git_daemon::init_bare(bare);
    let mut stream = String::from(
        "commit refs/heads/main\ncommitter peer <peer@example.org> 1700000000 +0000\n\
         data 7\noutbox\n",
    );
    for (name, text) in files {
        stream.push_str(&format!(
            "M 100644 inline outbox/{name}\ndata {}\n{text}\n",
            text.len()
        ));
    }
    let mut child = Command::new("git")
        .arg("--git-dir")
        .arg(bare)
        .args(["fast-import", "--quiet"])
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stream.as_bytes())
        .unwrap();
    assert!(child.wait().unwrap().success());
}

/// The supervisor's peak resident memory (`VmHWM`), in MB.
fn peak_rss_mb(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb / 1024)
}

/// The supervisor's CPU time so far (user + system), from `/proc`.
fn cpu_time(pid: u32) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map_or(vec![], |(_, rest)| rest.split_whitespace().collect());
    let ticks: u64 = [11, 12]
        .iter()
        .filter_map(|i| fields.get(*i)?.parse::<u64>().ok())
        .sum();
    Duration::from_millis(ticks * 10)
}

/// Runs the trial; its table, with the figures among the counts.
pub fn flood(shape: &Flood) -> Table {
    let mut table = Table::new("a receiver flooded by a hostile peer, beside a legitimate backlog");
    let root = tempfile::tempdir().unwrap();
    let server = root.path().join("server");
    std::fs::create_dir_all(&server).unwrap();

    // The hostile peer: older than everything (it says), and many.
    let old = "2020-01-01T00:00:00Z";
    let mut hostile = Vec::new();
    for i in 0..shape.hostile {
        let (slug, round, participants) = match i % 4 {
            0 | 1 => ("spam".to_string(), i / 2 + 1, vec!["mallory", "bob"]),
            2 => (format!("found-{i}"), 1, vec!["mallory", "bob"]),
            _ => (
                "ours".to_string(),
                i / 4 + 1,
                vec!["alice", "bob", "mallory"],
            ),
        };
        let name = format!("20200101T000000.{i:06}Z-handoff-{slug}-{round}-to-bob.md");
        hostile.push((name, handoff("mallory", &slug, round, old, &participants)));
    }
    publish(&server.join("mallory.git"), &hostile);
    // The legitimate backlog: two rounds each of collaborations alice
    // founded with bob.
    let mut legit = Vec::new();
    for i in 0..shape.legit {
        let (slug, round) = (format!("work-{}", i / 2), i % 2 + 1);
        let created = format!("2026-11-24T08:{:02}:{:02}Z", (i / 60) % 60, i % 60);
        let name = format!(
            "20261124T08{:02}{:02}.000Z-handoff-{slug}-{round}-to-bob.md",
            (i / 60) % 60,
            i % 60
        );
        legit.push((
            name,
            handoff("alice", &slug, round, &created, &["alice", "bob"]),
        ));
    }
    publish(&server.join("alice.git"), &legit);
    table.count("hostile handoffs published", shape.hostile);
    table.count("legitimate handoffs published", shape.legit);

    let mut daemon = GitDaemon::start(&server);
    let bob = TestHome::at(&root.path().join("bob"));
    bob.ok(&["init"]);
    std::fs::write(
        bob.file("hearth.toml"),
        format!(
            "[tick]\ninterval_s = 1\n[peers]\nfetch_every_s = 1\nalice = \"{}\"\n\
             mallory = \"{}\"\n[collaborations]\nmax_rounds = {MAX_ROUNDS}\nfounding = \"open\"\n",
            daemon.url("alice"),
            daemon.url("mallory")
        ),
    )
    .unwrap();
    bob.git(&["commit", "-qam", "peers"]);
    bob.ok(&["collab", "new", "Ours", "--slug", "ours", "--with", "alice"]);

    // The outage: the backlog waits while the supervisor runs.
    daemon.down();
    let supervisor = bob.spawn_with(bob.unpinned(&["run"]));
    let pid = supervisor.id();
    let says = |n: usize| {
        let out = bob.ok(&["say", &format!("Operator message {n}.")]);
        let file = out.trim().rsplit('/').next().unwrap_or("").to_string();
        (file, Instant::now())
    };
    let mut said = Vec::new();
    let outage_ends = Instant::now() + shape.outage;
    while Instant::now() < outage_ends {
        said.push(says(said.len()));
        std::thread::sleep(Duration::from_secs(1));
    }
    daemon.up();
    let back = Instant::now();

    // The flood and the backlog come in together; the operator goes on.
    let taken_from = |peer: &str| -> Vec<serde_json::Value> {
        std::fs::read_to_string(bob.file("state/handoffs.jsonl"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .filter(|t| t["peer"] == peer)
            .collect()
    };
    let mut backlog_taken = None;
    while back.elapsed() < shape.take_within {
        said.push(says(said.len()));
        if taken_from("alice").len() >= shape.legit {
            backlog_taken = Some(back.elapsed());
            break;
        }
        std::thread::sleep(Duration::from_secs(1));
    }
    // The last message said, answered too.
    std::thread::sleep(ANSWER_WITHIN.min(Duration::from_secs(5)));
    let cpu = cpu_time(pid);
    let peak = peak_rss_mb(pid);
    signal(&supervisor, libc::SIGTERM);
    finish(supervisor, Duration::from_secs(30));

    match backlog_taken {
        Some(took) => table.count(
            "seconds to take the backlog after the outage",
            took.as_secs() as usize,
        ),
        None => table.fail(
            "legitimate handoff not taken in time",
            format!(
                "{} of {} within {:?}",
                taken_from("alice").len(),
                shape.legit,
                shape.take_within
            ),
        ),
    }
    // Each operator message: taken by a tick (within ANSWER_WITHIN: the
    // last one was given that long before the stop).
    let ledger = std::fs::read_to_string(bob.file("state/ticks.jsonl")).unwrap_or_default();
    let mut late = 0;
    for (file, _) in &said {
        let taken = ledger.lines().any(|l| l.contains(file.as_str()));
        if !taken {
            late += 1;
            table.fail("operator message not answered", file.clone());
        }
    }
    table.trials = said.len();
    table.count("operator messages said", said.len());
    table.count("operator messages not taken by a tick", late);
    let hostile_taken = taken_from("mallory");
    let spam = hostile_taken.iter().filter(|t| t["slug"] == "spam").count();
    let ours = hostile_taken.iter().filter(|t| t["slug"] == "ours").count();
    if spam > MAX_ROUNDS {
        table.fail("hostile rounds past max_rounds taken", format!("{spam}"));
    }
    if ours > 0 {
        table.fail(
            "hostile handoff into another's collaboration",
            format!("{ours}"),
        );
    }
    let record = bob.read("collaborations/ours.md");
    if record.contains("mallory") {
        table.fail("a non-participant changed a record", record);
    }
    table.count(
        "hostile handoffs taken (their own collaborations, within bounds)",
        hostile_taken.len(),
    );
    table.level("supervisor peak memory, MB", peak as usize);
    table.level("supervisor CPU time, s", cpu.as_secs() as usize);
    if peak > shape.max_rss_mb {
        table.fail(
            "supervisor memory over its bound",
            format!("{peak} MB > {} MB", shape.max_rss_mb),
        );
    }
    table
}
