//! A simulated week of what a heal cannot fix (issue 49's trial): the
//! model API refusing the key for three hours, a day whose spend reaches
//! `[budget] daily_usd`, `hearth.toml` broken at a restart, and a full disk
//! for an hour, with messages arriving through all of them and `hearth
//! recall` reranking with the same paid model. What must hold is what the
//! operator reads: no heal for any of these causes, no message consumed
//! without an answer, every tick's commit subject true to its ledger line,
//! one flare per cause, and the ledger's spend equal to what the model
//! server billed, recall's calls included.
//!
//! `cargo test` runs three days (`tests/e2e/trials.rs`); `cargo bench
//! --bench trials` runs seven (WEEK_DAYS).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Child;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::Table;
use crate::common::model_server::{anthropic, Answer, ModelServer};
use crate::common::receiver::{Receiver, Request};
use crate::common::small_disk::SmallDisk;
use crate::common::{finish, signal, TestHome};

const KEY: &str = "sk-ant-week-DO-NOT-LEAK";
const WEBHOOK_SECRET: &str = "whsec-week-DO-NOT-LEAK";
const START: &str = "2026-03-02T00:00:00Z";
/// Sonnet 4.5's shipped price, dollars per million tokens.
const INPUT_PER_MTOK: f64 = 3.0;
const OUTPUT_PER_MTOK: f64 = 15.0;
const CONFIG: &str = "[budget]\ndaily_usd = 5.0\n[healer]\noutage_flare_min = 30\n";

fn start() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(START).unwrap().to_utc()
}

fn at(day: u32, hour: u32, minute: u32) -> DateTime<Utc> {
    start() + chrono::Duration::minutes(((day * 24 + hour) * 60 + minute) as i64)
}

fn now(clock: &Path) -> DateTime<Utc> {
    let text = std::fs::read_to_string(clock).unwrap_or_default();
    DateTime::parse_from_rfc3339(text.trim()).map_or_else(|_| start(), |t| t.to_utc())
}

/// What the model server billed: every answer it gave with usage, at the
/// shipped price, in order.
#[derive(Default)]
struct Bill {
    usd: f64,
    answers: usize,
    refused: usize,
}

/// The provider by simulated time: 401 (the key refused) on day 0 from
/// 02:00 to 05:00; answers of a million input tokens ($3 each) all of day
/// 1, so its $5 is spent by the second tick; otherwise a short answer that
/// names the time.
fn provider(clock: PathBuf, bill: Arc<Mutex<Bill>>) -> Answer {
    Answer::Computed(Arc::new(move |_body: &Value| {
        let t = now(&clock);
        let mut bill = bill.lock().unwrap();
        if t >= at(0, 2, 0) && t < at(0, 5, 0) {
            bill.refused += 1;
            return Answer::Status {
                status: 401,
                headers: vec![],
                body: anthropic::error_body("authentication_error", "invalid x-api-key"),
            };
        }
        let input = if t >= at(1, 0, 0) && t < at(2, 0, 0) {
            1_000_000
        } else {
            2_000
        };
        let output = 40;
        bill.usd += (input as f64 * INPUT_PER_MTOK + output as f64 * OUTPUT_PER_MTOK) / 1e6;
        bill.answers += 1;
        Answer::Stream {
            events: anthropic::message(
                &format!("Noted, at {}.", t.to_rfc3339()),
                &[],
                input,
                output,
            ),
            hang: None,
        }
    }))
}

fn spawn(home: &TestHome, clock: &Path) -> Child {
    let mut cmd = home.keyed(&["run"], KEY);
    cmd.env("HEARTH_SIM_CLOCK", clock)
        .env("HEARTH_NOW", START)
        .env("HEARTH_WEBHOOK_SECRET", WEBHOOK_SECRET)
        .env("RUST_LOG", "warn");
    home.spawn_with(cmd)
}

/// Runs `days` simulated days (at least three: the faults are on days 0–2)
/// and returns what held and what did not.
pub fn week(days: u32) -> Table {
    let days = days.max(3);
    let wall = Instant::now();
    let mut table = Table::new("a simulated week of causes a heal cannot fix");
    let clock_dir = tempfile::tempdir().unwrap();
    let clock = clock_dir.path().join("now");
    let bill = Arc::new(Mutex::new(Bill::default()));
    let server = ModelServer::start_unrecorded(vec![provider(clock.clone(), bill.clone())]);
    let home = TestHome::new();
    let disk = SmallDisk::mount_or_why(&home, 160);
    home.ok(&["init"]);
    // The operator's phone (ntfy), a webhook that is down for a day, and
    // a dead-man ping receiver.
    let ntfy = Receiver::start();
    let hook = Receiver::start();
    let ping = Receiver::start();
    let config = format!(
        "[model]\nprovider = \"anthropic\"\nmodel = \"claude-sonnet-4-5-20250929\"\n\
         base_url = \"{}\"\ntimeout_s = 5\nmax_retries = 0\nretry_base_ms = 10\n{CONFIG}\
         [notify]\nntfy = \"{}/phone\"\nwebhook = \"{}/hook\"\nping = \"{}/dead-man\"\n\
         retry_ms = 60000\n",
        server.url, ntfy.url, hook.url, ping.url
    );
    std::fs::write(home.file("hearth.toml"), &config).unwrap();

    let mut schedule: Vec<(DateTime<Utc>, &'static str)> = vec![
        (at(0, 1, 0), "webhook down"),
        (at(1, 12, 0), "webhook back"),
        (at(0, 3, 0), "messages while the key is refused"),
        (at(1, 10, 0), "messages while the budget is spent"),
        (at(2, 13, 0), "broken config at a restart"),
    ];
    match &disk {
        Ok(_) => {
            schedule.push((at(2, 16, 0), "full disk (1 h)"));
            schedule.push((at(2, 17, 0), "room again"));
        }
        Err(why) => table.fail("not run", format!("full disk: {why}")),
    }
    for d in 0..days {
        schedule.push((at(d, 8, 0), "messages"));
        schedule.push((at(d, 12, 0), "recall"));
        schedule.push((at(d, 20, 0), "recall"));
    }
    schedule.sort();

    let mut supervisor = spawn(&home, &clock);
    let mut sent = 0usize;
    let mut next = 0;
    let end = at(days, 0, 0);
    while now(&clock) < end {
        let t = now(&clock);
        if let Ok(Some(status)) = supervisor.try_wait() {
            table.fail(
                "the supervisor exited on its own",
                format!("{status} at {t}"),
            );
            supervisor = spawn(&home, &clock);
        }
        while next < schedule.len() && schedule[next].0 <= t {
            let (when, what) = schedule[next];
            next += 1;
            table.count(what, 1);
            match what {
                "messages"
                | "messages while the key is refused"
                | "messages while the budget is spent" => {
                    for n in 0..3 {
                        let name = format!("{}-{n}.md", when.format("%Y%m%d%H%M"));
                        let text = format!("Message {n} of {when}: what is the tide doing?\n");
                        std::fs::write(home.file(&format!("inbox/{name}")), text).unwrap();
                        sent += 1;
                    }
                }
                "recall" => {
                    let out = home
                        .keyed(&["recall", "tide"], KEY)
                        .env("HEARTH_SIM_CLOCK", &clock)
                        .output()
                        .unwrap();
                    if !out.status.success() {
                        table.fail(
                            "recall failed",
                            String::from_utf8_lossy(&out.stderr).into_owned(),
                        );
                    }
                }
                "broken config at a restart" => {
                    signal(&supervisor, libc::SIGTERM);
                    let status = finish(supervisor, Duration::from_secs(60));
                    if !status.success() {
                        table.fail("SIGTERM", format!("exit {status}"));
                    }
                    std::fs::write(
                        home.file("hearth.toml"),
                        config.replace("[budget]", "[tick]\ninterval_s = \"30s\"\n[budget]"),
                    )
                    .unwrap();
                    supervisor = spawn(&home, &clock);
                    // The simulated clock stands while the supervisor
                    // waits for the fix: the wait is in real time.
                    let flared = wait(Duration::from_secs(30), || {
                        flares(&home).get("config").copied().unwrap_or(0) > 0
                    });
                    if !flared {
                        table.fail("no config flare", "within 30 s of the restart".into());
                    }
                    if let Ok(Some(status)) = supervisor.try_wait() {
                        table.fail("died on a broken config", format!("{status}"));
                        supervisor = spawn(&home, &clock);
                    }
                    std::fs::write(home.file("hearth.toml"), &config).unwrap();
                }
                "webhook down" => hook.answer(500),
                "webhook back" => hook.answer(200),
                "full disk (1 h)" => disk.as_ref().unwrap().fill(),
                "room again" => disk.as_ref().unwrap().free(),
                _ => {}
            }
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    signal(&supervisor, libc::SIGTERM);
    let status = finish(supervisor, Duration::from_secs(60));
    if !status.success() {
        table.fail("the last stop", format!("exit {status}"));
    }
    table.trials = days as usize;
    check(&home, &bill.lock().unwrap(), sent, &mut table);
    check_notices(&home, &ntfy, &hook, &ping, &mut table);
    table.count("wall seconds", wall.elapsed().as_secs() as usize);
    drop(disk);
    table
}

fn wait(within: Duration, done: impl Fn() -> bool) -> bool {
    let deadline = Instant::now() + within;
    while Instant::now() < deadline {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    done()
}

/// Flares in the outbox by kind.
fn flares(home: &TestHome) -> BTreeMap<String, usize> {
    let mut kinds = BTreeMap::new();
    for name in home.list("outbox") {
        if let Some(kind) = name
            .split_once("-flare-")
            .map(|(_, k)| k.trim_end_matches(".md"))
        {
            let kind = kind.trim_end_matches(|c: char| c.is_ascii_digit() || c == '-');
            *kinds.entry(kind.to_string()).or_default() += 1;
        }
    }
    kinds
}

/// Every line of the tick ledger, rotated segments included, by number.
fn ledger(home: &TestHome) -> BTreeMap<u64, Value> {
    let mut ticks = BTreeMap::new();
    for name in home.list("state") {
        if name.starts_with("ticks") && name.ends_with(".jsonl") {
            for line in home.read(&format!("state/{name}")).lines() {
                if let Ok(v) = serde_json::from_str::<Value>(line) {
                    ticks.insert(v["tick"].as_u64().unwrap(), v);
                }
            }
        }
    }
    ticks
}

/// What reached the operator: at the phone and at the webhook (after its
/// day down), one notice per incident opened and one per incident
/// resolved, nothing twice, every webhook body signed; the dead-man ping
/// for every tick.
fn check_notices(
    home: &TestHome,
    ntfy: &Receiver,
    hook: &Receiver,
    ping: &Receiver,
    table: &mut Table,
) {
    let of = |requests: Vec<Request>, state: &dyn Fn(&Value) -> String| {
        let mut seen: BTreeMap<(String, String), usize> = BTreeMap::new();
        for r in &requests {
            let body = r.json();
            let key = (
                body["incident"].as_str().unwrap_or("").to_string(),
                state(&body),
            );
            *seen.entry(key).or_default() += 1;
        }
        seen
    };
    // ntfy's body names the state in its tags, the incident in its text.
    let phone = ntfy.taken();
    let hooked = hook.taken();
    let by_hook = of(hooked.clone(), &|b| {
        b["state"].as_str().unwrap_or("").to_string()
    });
    table.count("notices at the phone", phone.len());
    table.count("notices at the webhook", hooked.len());
    table.count(
        "webhook answers of 500 (down)",
        hook.received().iter().filter(|r| r.answered == 500).count(),
    );
    // Nothing twice: each notice (its id) arrives once; a cause that
    // comes back after it cleared is a new incident, counted apart.
    let mut ids: BTreeMap<String, usize> = BTreeMap::new();
    for r in &hooked {
        *ids.entry(r.json()["id"].as_str().unwrap_or("").to_string())
            .or_default() += 1;
    }
    for (id, n) in ids.iter().filter(|(_, n)| **n > 1) {
        table.fail("a notice twice", format!("{id}: {n} times"));
    }
    let again: usize = by_hook.values().map(|n| n.saturating_sub(1)).sum();
    table.count("incidents opened again after they cleared", again);
    // A day's budget warning stands until the next day's first tick, not
    // resolved by the tick that said it.
    let day_of = |state: &str| {
        hooked
            .iter()
            .map(|r| r.json())
            .find(|b| {
                b["incident"]
                    .as_str()
                    .is_some_and(|i| i.contains("will run out"))
                    && b["state"] == state
            })
            .and_then(|b| b["time"].as_str().map(|t| t[..10].to_string()))
    };
    if let (Some(opened), Some(resolved)) = (day_of("opened"), day_of("resolved")) {
        if opened == resolved {
            table.fail("a budget warning resolved the day it was said", opened);
        }
    }
    // Nothing lost: every incident that was resolved was opened too.
    for (incident, _) in by_hook.keys().filter(|(_, s)| s == "resolved") {
        if !by_hook.contains_key(&(incident.clone(), "opened".to_string())) {
            table.fail(
                "a notice lost",
                format!("{incident} resolved, never opened"),
            );
        }
    }
    let opened = by_hook.keys().filter(|(_, s)| s == "opened").count();
    let resolved = by_hook.keys().filter(|(_, s)| s == "resolved").count();
    table.count("incidents opened", opened);
    table.count("incidents resolved", resolved);
    for kind in ["model:", "config:", "budget:"] {
        let open = by_hook
            .keys()
            .any(|(i, s)| i.starts_with(kind) && s == "opened");
        let closed = by_hook
            .keys()
            .any(|(i, s)| i.starts_with(kind) && s == "resolved");
        if !(open && closed) {
            table.fail(
                "an incident not opened and resolved",
                format!("{kind} {by_hook:?}"),
            );
        }
    }
    if phone.len() != hooked.len() {
        table.fail(
            "the phone and the webhook differ",
            format!("{} vs {}", phone.len(), hooked.len()),
        );
    }
    let secret_header = hooked
        .iter()
        .filter(|r| r.header("X-Hearth-Signature").is_none())
        .count();
    if secret_header > 0 || hooked.is_empty() {
        table.fail(
            "unsigned webhook bodies",
            format!("{secret_header} of {}", hooked.len()),
        );
    }
    // The ping: a start for every tick, and its end.
    let paths: Vec<String> = ping.received().into_iter().map(|r| r.path).collect();
    let starts = paths.iter().filter(|p| p.ends_with("/start")).count();
    let fails = paths.iter().filter(|p| p.ends_with("/fail")).count();
    let oks = paths.iter().filter(|p| p.as_str() == "/dead-man").count();
    let ticks = ledger(home).len();
    table.count("pings: start", starts);
    table.count("pings: success", oks);
    table.count("pings: fail", fails);
    // A ping in flight when a supervisor is stopped may be cut: at most
    // one a restart.
    if starts + 2 < ticks || oks + fails + 2 < ticks {
        table.fail(
            "ticks without their ping",
            format!("{ticks} ticks, {starts} starts, {oks}+{fails} ends"),
        );
    }
}

fn check(home: &TestHome, bill: &Bill, sent: usize, table: &mut Table) {
    let ticks = ledger(home);
    table.count("ticks", ticks.len());
    table.count("model requests refused (401)", bill.refused);
    let mut consumed = 0;
    for (n, t) in &ticks {
        let class = t["class"].as_str().unwrap_or("?");
        let inbox = t["inbox"].as_array().map_or(0, Vec::len);
        if class != "ok" && inbox > 0 {
            table.fail(
                "a message consumed by a failed tick",
                format!("tick {n} ({class}) took {inbox}"),
            );
        }
        consumed += inbox;
    }
    table.count("messages sent", sent);
    table.count("messages answered", consumed);
    let waiting = home.list("inbox").len();
    if consumed + waiting != sent {
        table.fail(
            "messages unaccounted for",
            format!("{sent} sent, {consumed} answered, {waiting} waiting"),
        );
    }

    // Each tick's commit subject against its ledger line.
    let log = home.git(&["log", "--format=%s"]);
    let mut subjects = 0;
    for subject in String::from_utf8_lossy(&log.stdout).lines() {
        let Some(n) = subject
            .strip_prefix("tick ")
            .and_then(|s| s.split(':').next())
            .and_then(|n| n.parse::<u64>().ok())
        else {
            continue;
        };
        subjects += 1;
        let Some(t) = ticks.get(&n) else {
            continue; // a heal's or a crash's subject has no line of its own
        };
        let class = t["class"].as_str().unwrap_or("?");
        let inbox = t["inbox"].as_array().map_or(0, Vec::len);
        let untrue = (subject.contains("answered")
            && !subject.contains("answered none")
            && (class != "ok" || inbox == 0))
            || (class == "skipped") != subject.contains("skipped")
            || (class != "ok" && class != "skipped" && !subject.contains("exit"));
        if untrue {
            table.fail(
                "a subject untrue to its ledger line",
                format!("{subject:?} vs {t}"),
            );
        }
    }
    table.count("tick subjects checked", subjects);

    let healer: Value = serde_json::from_str(&home.read("state/healer.json")).unwrap_or_default();
    let heals = healer["heals"].as_array().map_or(0, Vec::len);
    let flared = flares(home);
    table.count("heals", heals);
    if heals > 0 || flared.contains_key("healer") || flared.contains_key("panic") {
        table.fail("a heal for a cause it cannot fix", format!("{flared:?}"));
    }
    for (kind, want) in [("model", 1), ("config", 1)] {
        if flared.get(kind).copied().unwrap_or(0) != want {
            table.fail("flares", format!("want {want} {kind}: {flared:?}"));
        }
    }
    let stops = home
        .list("outbox")
        .iter()
        .filter(|n| n.contains("-flare-budget"))
        .filter(|n| {
            home.read(&format!("outbox/{n}"))
                .contains("the daily budget is spent")
        })
        .count();
    if stops != 1 {
        table.fail("flares", format!("want 1 budget stop, got {stops}"));
    }
    for (kind, n) in &flared {
        // A handful of kinds, named once for the table.
        let name: &'static str = Box::leak(format!("flare: {kind}").into_boxed_str());
        table.count(name, *n);
    }

    // The ledger's money against the server's bill.
    let budget: Value = serde_json::from_str(&home.read("state/budget.json")).unwrap();
    let ticks_usd: f64 = budget["days"]
        .as_object()
        .map_or(0.0, |d| d.values().filter_map(Value::as_f64).sum());
    let calls: Vec<Value> = std::fs::read_to_string(home.file("state/calls.jsonl"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let calls_usd: f64 = calls.iter().filter_map(|c| c["cost_usd"].as_f64()).sum();
    table.count("recall rerank calls on the ledger", calls.len());
    table.count(
        "ledger cents",
        ((ticks_usd + calls_usd) * 100.0).round() as usize,
    );
    table.count("billed cents", (bill.usd * 100.0).round() as usize);
    if (ticks_usd + calls_usd - bill.usd).abs() > 1e-6 {
        table.fail(
            "the ledger's spend is not the bill",
            format!(
                "ticks ${ticks_usd:.6} + recall ${calls_usd:.6} vs billed ${:.6} over {} answers",
                bill.usd, bill.answers
            ),
        );
    }
}
