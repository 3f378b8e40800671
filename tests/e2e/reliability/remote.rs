//! Handoffs across hosts under failure (issue 42's trial series): three
//! homes, each in a directory standing for its host, each publishing by
//! its own `[git] push` to a bare repository a real `git daemon` serves,
//! each naming its two peers by `git://` URL. Each agent hands off to both
//! peers on its scheduled ticks until `total` handoffs are published;
//! meanwhile supervisors are killed (`kill -9`) and started again at
//! random, the git server is killed and started again at once, and at
//! chosen points it stays down for `outage` at a time.
//!
//! What is counted, by watching from outside (the published repositories
//! on the server; each receiver's `state/handoffs.jsonl`; its git history):
//! a handoff published and never taken is lost; one taken twice (two
//! ledger lines, or two commits adding its inbox message) is a failure;
//! one taken later than a fetch interval plus [`TAKE_SLACK`] of up-time
//! after it was published (time the server served and the receiver ran)
//! is late. The delivery latencies (published → taken, in all and in
//! up-time) are reported.

#![allow(clippy::disallowed_methods)] // fixtures, not state

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Child;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::{Rng, Table};
use crate::common::git_daemon::GitDaemon;
use crate::common::model_server::{anthropic, Answer, ModelServer};
use crate::common::{finish, signal, TestHome};

const NAMES: [&str; 3] = ["ann", "ben", "cal"];
/// `[peers] fetch_every_s` in the trial.
const FETCH_EVERY: Duration = Duration::from_secs(2);
/// What a take needs beyond the next fetch round: the fetch itself (a
/// two-minute backlog is about a second a peer, the peers one after
/// another), a tick in progress on an earlier batch to end, a supervisor
/// just started to reach its first look, the intake's commit.
const TAKE_SLACK: Duration = Duration::from_secs(10);
const KEY: &str = "sk-ant-trial";

/// The trial's shape.
pub struct Schedule {
    /// Handoffs to publish in all.
    pub total: usize,
    /// How many times the git server stays down for `outage`.
    pub outages: usize,
    /// How long it stays down each time.
    pub outage: Duration,
    /// Replays the random choices.
    pub seed: u64,
}

/// One agent: its home, its model, its supervisor while it runs.
struct Agent {
    name: &'static str,
    home: TestHome,
    _model: ModelServer,
    run: Option<Child>,
    /// When its supervisor was down: (killed, started again).
    down: Vec<(Instant, Instant)>,
    killed_at: Option<Instant>,
}

impl Agent {
    fn start(&mut self) {
        let mut cmd = self.home.unpinned(&["run"]);
        cmd.env("ANTHROPIC_API_KEY", KEY);
        self.run = Some(self.home.spawn_with(cmd));
        if let Some(killed) = self.killed_at.take() {
            self.down.push((killed, Instant::now()));
        }
    }

    fn kill(&mut self) {
        if let Some(run) = self.run.take() {
            signal(&run, libc::SIGKILL);
            finish(run, Duration::from_secs(20));
            self.killed_at = Some(Instant::now());
        }
    }

    fn stop(&mut self) {
        if let Some(run) = self.run.take() {
            signal(&run, libc::SIGTERM);
            finish(run, Duration::from_secs(30));
        }
    }
}

/// A handoff, by sender and its outbox file.
type Key = (String, String);

/// What the watcher saw, and when.
#[derive(Default)]
struct Seen {
    published: BTreeMap<Key, Instant>,
    taken: BTreeMap<Key, Instant>,
    /// Ledger lines per handoff (more than one: taken twice).
    lines: BTreeMap<Key, usize>,
}

/// The delivery latencies, each sorted.
#[derive(Debug, Default)]
pub struct Latencies {
    /// Published → taken.
    pub published: Vec<Duration>,
    /// Published → taken, counting only the time the server served and
    /// the receiver ran (what a fetch interval is measured against).
    pub fetchable: Vec<Duration>,
}

/// Runs the series; the table and the delivery latencies.
pub fn across_hosts(schedule: &Schedule) -> (Table, Latencies) {
    let mut table = Table::new("handoffs across hosts (git daemon), kill -9 and outages");
    let mut rng = Rng::new(schedule.seed);
    let root = tempfile::tempdir().unwrap();
    let server = root.path().join("server");
    std::fs::create_dir_all(&server).unwrap();
    let mut daemon = GitDaemon::start(&server);
    let more = Arc::new(AtomicBool::new(true));
    let asked = Arc::new(AtomicUsize::new(0));
    let mut agents: Vec<Agent> = NAMES
        .iter()
        .map(|name| agent(root.path(), name, &daemon, &more, &asked))
        .collect();
    for agent in &mut agents {
        agent.start();
    }
    let mut seen = Seen::default();
    // When the git server was down: (killed, serving again).
    let mut server_down: Vec<(Instant, Instant)> = Vec::new();
    let mut outages_left: Vec<usize> = (1..=schedule.outages)
        .map(|i| schedule.total * i / (schedule.outages + 1))
        .collect();
    let mut last_chaos = Instant::now();
    let began = Instant::now();
    // Publish `total` (more, while outages are left), with chaos.
    while seen.published.len() < schedule.total || !outages_left.is_empty() {
        watch(&server, &agents, &mut seen);
        assert!(
            began.elapsed() < Duration::from_secs(3600),
            "an hour and only {} handoffs published; logs in {}",
            seen.published.len(),
            root.path().display()
        );
        // An outage once its share is published and the server has been
        // back for a while (the last one's backlog is delivered first).
        let back_for = server_down
            .last()
            .map_or(Duration::MAX, |(_, up)| up.elapsed());
        if outages_left
            .first()
            .is_some_and(|&at| seen.published.len() >= at)
            && back_for > FETCH_EVERY * 5
        {
            outages_left.remove(0);
            let down_at = Instant::now();
            daemon.down();
            table.count("git server down for an outage", 1);
            while down_at.elapsed() < schedule.outage {
                watch(&server, &agents, &mut seen);
                std::thread::sleep(Duration::from_millis(150));
            }
            daemon.up();
            server_down.push((down_at, Instant::now()));
        }
        if last_chaos.elapsed() >= Duration::from_secs(1) {
            last_chaos = Instant::now();
            match rng.below(10) {
                0..=2 => {
                    let agent = &mut agents[rng.below(3) as usize];
                    agent.kill();
                    table.count("supervisor killed (kill -9)", 1);
                    std::thread::sleep(Duration::from_millis(rng.below(1500)));
                    agent.start();
                }
                3 => {
                    let down_at = Instant::now();
                    daemon.down();
                    table.count("git server killed, back at once", 1);
                    std::thread::sleep(Duration::from_millis(rng.below(500)));
                    daemon.up();
                    server_down.push((down_at, Instant::now()));
                }
                _ => {}
            }
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    // No more handoffs; every one published is taken, or the wait ends.
    more.store(false, Ordering::SeqCst);
    let quiet_since = Instant::now();
    let mut last_count = seen.published.len();
    let mut settled = Instant::now();
    loop {
        watch(&server, &agents, &mut seen);
        if seen.published.len() != last_count {
            last_count = seen.published.len();
            settled = Instant::now();
        }
        let all_taken = seen.published.keys().all(|k| seen.taken.contains_key(k));
        if all_taken && settled.elapsed() > FETCH_EVERY * 3 {
            break;
        }
        if quiet_since.elapsed() > Duration::from_secs(120) {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    for agent in &mut agents {
        agent.stop();
    }
    watch(&server, &agents, &mut seen);
    let latencies = judge(&mut table, &seen, &agents, &server_down);
    table.trials = seen.published.len();
    table.count("handoffs published", seen.published.len());
    table.count("handoffs taken", seen.taken.len());
    table.level("model calls", asked.load(Ordering::SeqCst));
    if std::env::var_os("KEEP_TRIAL").is_some() {
        eprintln!("kept: {}", root.path().display());
        std::mem::forget(root);
    }
    (table, latencies)
}

/// Counts what was lost, taken twice or late; returns the latencies.
fn judge(
    table: &mut Table,
    seen: &Seen,
    agents: &[Agent],
    server_down: &[(Instant, Instant)],
) -> Latencies {
    for key in seen.published.keys() {
        if !seen.taken.contains_key(key) {
            table.fail("lost (published, never taken)", format!("{key:?}"));
        }
    }
    for (key, n) in &seen.lines {
        if *n > 1 {
            table.fail("taken twice (ledger)", format!("{key:?}: {n} lines"));
        }
    }
    for agent in agents {
        let added = inbox_additions(&agent.home);
        table.count("inbox messages a take committed", added.values().sum());
        for (inbox, n) in added {
            if n > 1 {
                table.fail(
                    "taken twice (inbox commits)",
                    format!("{}: {inbox}", agent.name),
                );
            }
        }
    }
    let mut latencies = Latencies::default();
    for (key, published) in &seen.published {
        let Some(taken) = seen.taken.get(key) else {
            continue;
        };
        latencies
            .published
            .push(taken.saturating_duration_since(*published));
        let receiver = receiver_of(&key.1);
        let receiver_down = agents
            .iter()
            .find(|a| a.name == receiver)
            .map_or(&[][..], |a| &a.down[..]);
        let after = up_time(*published, *taken, server_down, receiver_down);
        latencies.fetchable.push(after);
        if after > FETCH_EVERY + TAKE_SLACK {
            table.fail(
                "late (over a fetch interval + 10 s of up-time after publishing)",
                format!("{key:?}: {after:?} of up-time"),
            );
        }
    }
    latencies.published.sort();
    latencies.fetchable.sort();
    latencies
}

/// How long of `from..to` the server served and the receiver ran: the
/// time a fetch could have brought the handoff (a fetch cut by an outage
/// starts over when it is back).
fn up_time(
    from: Instant,
    to: Instant,
    server_down: &[(Instant, Instant)],
    receiver_down: &[(Instant, Instant)],
) -> Duration {
    let mut windows: Vec<(Instant, Instant)> = server_down
        .iter()
        .chain(receiver_down)
        .map(|&(a, b)| (a.max(from), b.min(to)))
        .filter(|(a, b)| a < b)
        .collect();
    windows.sort();
    let mut down = Duration::ZERO;
    let mut reached = from;
    for (a, b) in windows {
        let a = a.max(reached);
        if a < b {
            down += b - a;
            reached = b;
        }
    }
    to.saturating_duration_since(from).saturating_sub(down)
}

/// The receiver an outbox file is addressed to (`…-to-NAME.md`).
fn receiver_of(file: &str) -> String {
    file.trim_end_matches(".md")
        .rsplit_once("-to-")
        .map(|(_, to)| to.to_string())
        .unwrap_or_default()
}

/// Reads the published repositories and each receiver's ledger.
fn watch(server: &Path, agents: &[Agent], seen: &mut Seen) {
    let now = Instant::now();
    for name in NAMES {
        let Ok(repo) = git2::Repository::open_bare(server.join(format!("{name}.git"))) else {
            continue;
        };
        let Some(tree) = repo
            .revparse_single("refs/heads/main:outbox")
            .ok()
            .and_then(|o| o.into_tree().ok())
        else {
            continue;
        };
        for entry in tree.iter() {
            let Some(file) = entry.name() else { continue };
            if file.contains("-handoff-") {
                seen.published
                    .entry((name.to_string(), file.to_string()))
                    .or_insert(now);
            }
        }
    }
    for agent in agents {
        let ledger =
            std::fs::read_to_string(agent.home.file("state/handoffs.jsonl")).unwrap_or_default();
        let mut lines: BTreeMap<Key, usize> = BTreeMap::new();
        for line in ledger.lines() {
            let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
                continue;
            };
            let key = (
                v["peer"].as_str().unwrap_or("").to_string(),
                v["file"].as_str().unwrap_or("").to_string(),
            );
            *lines.entry(key.clone()).or_default() += 1;
            seen.taken.entry(key).or_insert(now);
        }
        for (key, n) in lines {
            let slot = seen.lines.entry(key).or_default();
            *slot = (*slot).max(n);
        }
    }
}

/// How many commits of `home`'s history added each handoff inbox message.
fn inbox_additions(home: &TestHome) -> BTreeMap<String, usize> {
    let out = home.git(&[
        "log",
        "--diff-filter=A",
        "--name-only",
        "--format=",
        "--",
        "inbox/",
    ]);
    let out = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut added: BTreeMap<String, usize> = BTreeMap::new();
    for path in out.lines().filter(|l| l.contains("handoff-")) {
        let name = path.rsplit('/').next().unwrap_or(path).to_string();
        // A message archived by its tick is added again under archive/:
        // that is a move, not a second take.
        if path.starts_with("inbox/archive/") {
            continue;
        }
        *added.entry(name).or_default() += 1;
    }
    added
}

/// `name`'s home on its own host: publishing to `server/NAME.git`, its
/// peers by `git://` URL, ticking every second, its model handing off to
/// both peers on each scheduled tick while `more` holds.
fn agent(
    root: &Path,
    name: &'static str,
    daemon: &GitDaemon,
    more: &Arc<AtomicBool>,
    asked: &Arc<AtomicUsize>,
) -> Agent {
    let server = root.join("server");
    let bare = server.join(format!("{name}.git"));
    let init = std::process::Command::new("git")
        .args(["init", "-q", "--bare", "-b", "main"])
        .arg(&bare)
        .status()
        .unwrap();
    assert!(init.success());
    let peers: Vec<&'static str> = NAMES.into_iter().filter(|n| *n != name).collect();
    let model = ModelServer::start(vec![model(name, &peers, more, asked)]);
    let home = TestHome::at(&root.join(format!("host-{name}")).join(name));
    home.ok(&["init"]);
    let mut config = format!(
        "[model]\nprovider = \"anthropic\"\nmodel = \"claude-sonnet-4-5-20250929\"\n\
         base_url = \"{}\"\nmax_retries = 0\n\
         [tick]\ninterval_s = 1\n[healer]\nstreak = 1000000\n\
         [git]\npush = true\nremote = \"origin\"\n\
         [collaborations]\nmax_rounds = 100000\nfounding = \"open\"\n\
         [peers]\nfetch_every_s = {}\nfetch_timeout_s = 10\n",
        model.url,
        FETCH_EVERY.as_secs()
    );
    for peer in &peers {
        config.push_str(&format!("{peer} = \"{}\"\n", daemon.url(peer)));
    }
    std::fs::write(home.file("hearth.toml"), config).unwrap();
    home.git(&["remote", "add", "origin", &bare.display().to_string()]);
    home.git(&["commit", "-qam", "three hosts"]);
    // Found its two collaborations (one per peer it sends to) in one tick.
    home.ok(&["say", "Found the collaborations."]);
    let founded = home.keyed(&["run", "--ticks", "1"], KEY).output().unwrap();
    assert!(founded.status.success(), "{founded:?}");
    Agent {
        name,
        home,
        _model: model,
        run: None,
        down: Vec::new(),
        killed_at: None,
    }
}

/// The agent's model: on the operator's word it founds "NAME to PEER" for
/// each peer; on a scheduled tick (nothing in its turn but the time) it
/// hands off in both while `more` holds; a tick on handoffs just notes
/// them.
fn model(
    name: &'static str,
    peers: &[&'static str],
    more: &Arc<AtomicBool>,
    asked: &Arc<AtomicUsize>,
) -> Answer {
    let (peers, more, asked) = (peers.to_vec(), Arc::clone(more), Arc::clone(asked));
    Answer::Computed(Arc::new(move |body: &serde_json::Value| {
        let n = asked.fetch_add(1, Ordering::SeqCst);
        let last = body["messages"]
            .as_array()
            .and_then(|m| m.last())
            .map(|m| m.to_string())
            .unwrap_or_default();
        let calls: Vec<String> = if last.contains("tool_result") || last.contains("Handoff from") {
            Vec::new()
        } else if last.contains("Found the collaborations") {
            peers
                .iter()
                .map(|p| {
                    serde_json::json!({"to": p, "message": "Round one.",
                                       "name": format!("{name} to {p}")})
                    .to_string()
                })
                .collect()
        } else if more.load(Ordering::SeqCst) {
            peers
                .iter()
                .map(|p| {
                    serde_json::json!({"to": p, "message": format!("Trial handoff {n}."),
                                       "collaboration": format!("{name}-to-{p}")})
                    .to_string()
                })
                .collect()
        } else {
            Vec::new()
        };
        let ids: Vec<String> = (0..calls.len()).map(|i| format!("t{i}")).collect();
        let tools: Vec<(&str, &str, [&str; 1])> = calls
            .iter()
            .zip(&ids)
            .map(|(c, id)| (id.as_str(), "handoff", [c.as_str()]))
            .collect();
        let tools: Vec<(&str, &str, &[&str])> =
            tools.iter().map(|(i, t, a)| (*i, *t, &a[..])).collect();
        let events = anthropic::message("Noted.", &tools, 10, 1);
        Answer::Stream { events, hang: None }
    }))
}
