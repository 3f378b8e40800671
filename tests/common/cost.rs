//! A month of ticks priced: `hearth run` on a simulated clock against the
//! billing server of [`super::billing`], with Claude Sonnet 4.5's prices,
//! the default `[context]`, inbox traffic of 3–6 messages a day and a hand
//! edit of a core memory once a day. Shared by the cost test (a day) and
//! `cargo bench --bench cost` (a month at four intervals).

#![allow(dead_code)]

use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};

use super::billing::{self, Bill};
use super::TestHome;

const START: &str = "2026-03-02T00:00:00Z";

/// What a priced run found.
#[derive(Debug, Default)]
pub struct Month {
    pub interval: Duration,
    pub days: u32,
    pub ticks: usize,
    pub bills: Vec<Bill>,
    /// What hearth's ledger recorded, in dollars.
    pub recorded_usd: f64,
    /// Simulated times whose bills and ledger lines disagree.
    pub mismatches: Vec<String>,
    pub wall: Duration,
}

impl Month {
    pub fn billed(&self) -> f64 {
        self.bills.iter().map(|b| b.usd).sum()
    }
    pub fn without_caching(&self) -> f64 {
        self.bills.iter().map(|b| b.uncached_usd).sum()
    }
    pub fn floor(&self) -> f64 {
        self.bills.iter().map(|b| b.floor_usd).sum()
    }
    /// Scaled to 30 days, for runs of fewer.
    pub fn per_month(&self, usd: f64) -> f64 {
        usd * 30.0 / self.days.max(1) as f64
    }
    /// Of the input the ticks' first requests sent, the part read from
    /// the cache.
    pub fn first_request_hit_ratio(&self) -> f64 {
        let firsts = self.bills.iter().filter(|b| b.first);
        let (read, sent) = firsts.fold((0, 0), |(r, s), b| (r + b.read, s + b.sent()));
        read as f64 / sent.max(1) as f64
    }
    /// The median input a tick's first request sent in the last quarter of
    /// the run (the steady state), and how it was priced.
    pub fn steady_first_request(&self) -> Option<Bill> {
        let firsts: Vec<&Bill> = self.bills.iter().filter(|b| b.first).collect();
        let mut tail: Vec<&Bill> = firsts[firsts.len() * 3 / 4..].to_vec();
        tail.sort_by_key(|b| b.sent());
        tail.get(tail.len() / 2).map(|b| (*b).clone())
    }
}

fn now(clock: &std::path::Path) -> DateTime<Utc> {
    let text = std::fs::read_to_string(clock).unwrap_or_default();
    DateTime::parse_from_rfc3339(text.trim())
        .map(|t| t.with_timezone(&Utc))
        .unwrap_or_else(|_| start())
}

fn start() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(START)
        .unwrap()
        .with_timezone(&Utc)
}

/// A core memory of the size real ones grow to (about 2,000 tokens).
fn core_memory(edition: u32) -> String {
    let mut text = String::from(
        "---\ntitle: Projects\ntags: [identity]\ncore: true\n---\n# Projects I keep\n\n",
    );
    for n in 0..40 {
        text.push_str(&format!(
            "- Project {n}: the harbour survey, part {n}; what I learned there about \
             tides, boats and the people who sail them stays with me.\n"
        ));
    }
    text.push_str(&format!("\nRevised by my operator, edition {edition}.\n"));
    text
}

/// `hearth run` on `home` (or the build `HEARTH_BIN` names, for a "before"
/// run) on the simulated clock in `clock`, with the billing server's key.
fn supervise(home: &TestHome, clock: &std::path::Path) -> std::process::Child {
    let binary = std::env::var("HEARTH_BIN").unwrap_or_else(|_| super::HEARTH.to_string());
    let mut cmd = home.cmd_of(&binary, &["run"]);
    cmd.env("ANTHROPIC_API_KEY", "sk-ant-cost")
        .env("HEARTH_SIM_CLOCK", clock)
        .env("HEARTH_NOW", START)
        .env("RUST_LOG", "warn");
    home.spawn_with(cmd)
}

/// Runs `days` simulated days at `interval`, priced.
pub fn month(interval: Duration, days: u32, cache_aware: bool) -> Month {
    let wall = Instant::now();
    let clock_dir = tempfile::tempdir().unwrap();
    let clock = clock_dir.path().join("now");
    let (server, biller) = billing::serve(clock.clone(), billing::agent);
    let home = TestHome::new();
    home.ok(&["init"]);
    std::fs::write(
        home.file("hearth.toml"),
        format!(
            "[model]\nprovider = \"anthropic\"\nmodel = \"claude-sonnet-4-5-20250929\"\n\
             base_url = \"{}\"\ntimeout_s = 10\nmax_retries = 0\n\
             [tick]\ninterval_s = {}\n{}\
             [budget]\ndaily_usd = 0\n",
            server.url,
            interval.as_secs(),
            // Said only when not the default, so a build from before the
            // key existed can be measured too (HEARTH_BIN).
            if cache_aware {
                ""
            } else {
                "cache_aware = false\n"
            },
        ),
    )
    .unwrap();
    std::fs::write(home.file("memory/core/projects.md"), core_memory(0)).unwrap();
    let supervisor = supervise(&home, &clock);

    // (minute of the run, what): 3–6 messages a day at spread-out times,
    // and the core memory edited at 12:34.
    let mut schedule: Vec<(i64, u32)> = Vec::new();
    for d in 0..days as i64 {
        let n = 3 + (d * 7 % 4);
        for k in 0..n {
            let minute = (7 * 60 + 13 + k * (14 * 60) / n + d * 37 % 90) % (24 * 60);
            schedule.push((d * 24 * 60 + minute, 0));
        }
        schedule.push((d * 24 * 60 + 12 * 60 + 34, 1));
    }
    schedule.sort();
    let end = start() + chrono::Duration::days(days as i64);
    let mut next = 0;
    let mut edition = 0;
    while now(&clock) < end {
        let minutes = (now(&clock) - start()).num_minutes();
        while next < schedule.len() && schedule[next].0 <= minutes {
            let (at, what) = schedule[next];
            next += 1;
            if what == 0 {
                std::fs::write(
                    home.file(&format!("inbox/m{at:07}.md")),
                    format!(
                        "Note from your operator (minute {at}): the boat is in at pier {}.\n",
                        at % 13
                    ),
                )
                .unwrap();
            } else {
                edition += 1;
                std::fs::write(home.file("memory/core/projects.md"), core_memory(edition)).unwrap();
            }
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    super::signal(&supervisor, libc::SIGTERM);
    super::finish(supervisor, Duration::from_secs(60));

    let bills = biller.lock().unwrap().bills.clone();
    let ticks = home.ticks();
    let recorded_usd = ticks
        .iter()
        .map(|t| t["cost_usd"].as_f64().unwrap_or(0.0))
        .sum();
    // The simulated clock stands still in a tick: its requests share its
    // start time. Ticks at one time (a message answered at once) are
    // compared together.
    let mut by_time: std::collections::BTreeMap<String, (f64, f64)> = Default::default();
    for b in &bills {
        let at =
            b.at.unwrap()
                .to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
        by_time.entry(at).or_default().0 += b.usd;
    }
    for t in &ticks {
        let at: DateTime<Utc> = serde_json::from_value(t["start"].clone()).unwrap();
        let at = at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
        by_time.entry(at).or_default().1 += t["cost_usd"].as_f64().unwrap_or(0.0);
    }
    let mismatches = by_time
        .iter()
        .filter(|(_, (billed, recorded))| (billed - recorded).abs() > 1e-9)
        .map(|(at, (billed, recorded))| {
            format!("{at}: billed ${billed:.6}, recorded ${recorded:.6}")
        })
        .collect();
    Month {
        interval,
        days,
        ticks: ticks.len(),
        bills,
        recorded_usd,
        mismatches,
        wall: wall.elapsed(),
    }
}

/// How the hourly news work is done in [`news_month`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NewsBy {
    /// A job at every hour whose check asks the model only when news came.
    JobWithCheck,
    /// Hourly interval ticks, the news in the inbox when some came.
    IntervalTicks,
}

/// What a month of the news work cost.
#[derive(Debug)]
pub struct NewsMonth {
    pub by: NewsBy,
    pub days: u32,
    pub ticks: usize,
    /// Model requests the billing server answered.
    pub requests: usize,
    /// Job runs its check skipped (no request).
    pub skipped: usize,
    /// Job runs that were done.
    pub done: usize,
    pub recorded_usd: f64,
    pub billed_usd: f64,
    pub wall: Duration,
}

impl NewsMonth {
    pub fn per_month(&self, usd: f64) -> f64 {
        usd * 30.0 / self.days.max(1) as f64
    }
}

/// The agent of the news work: news in its turn (a check's output or an
/// inbox message) is digested into `memory/news/` with `write`; a turn
/// without news is looked over and left.
pub fn news_agent(body: &serde_json::Value) -> billing::Reply {
    let Some(text) = billing::last_turn_text(body) else {
        return ("Digested; nothing else needs me now.".into(), vec![]);
    };
    let header = text.lines().next().unwrap_or("").to_string();
    if let Some(at) = text.find("NEWS ") {
        let item: String = text[at..].lines().next().unwrap_or("").to_string();
        let stamp: String = header.chars().filter(char::is_ascii_digit).collect();
        return (
            format!("{header} News came in; I am writing it down."),
            vec![(
                "write".to_string(),
                serde_json::json!({
                    "path": format!("memory/news/{stamp}.md"),
                    "content": format!("# {header}\n\n{item}\n\nWhat it means for the harbour: little, yet.\n"),
                }),
            )],
        );
    }
    (
        format!("{header} No news since the last look; nothing needs my operator."),
        vec![],
    )
}

/// `days` simulated days of news that comes twice a day (08:10 and 17:40),
/// handled `by` a job with a check or by hourly interval ticks, priced by
/// the billing server (Sonnet 4.5, Anthropic's cache rules).
pub fn news_month(by: NewsBy, days: u32) -> NewsMonth {
    let wall = Instant::now();
    let clock_dir = tempfile::tempdir().unwrap();
    let clock = clock_dir.path().join("now");
    let (server, biller) = billing::serve(clock.clone(), news_agent);
    let home = TestHome::new();
    home.ok(&["init"]);
    let feed = clock_dir.path().join("feed.txt");
    let interval = match by {
        NewsBy::JobWithCheck => 86_400,
        NewsBy::IntervalTicks => 3_600,
    };
    std::fs::write(
        home.file("hearth.toml"),
        format!(
            "[model]\nprovider = \"anthropic\"\nmodel = \"claude-sonnet-4-5-20250929\"\n\
             base_url = \"{}\"\ntimeout_s = 10\nmax_retries = 0\n\
             [tick]\ninterval_s = {interval}\n[budget]\ndaily_usd = 0\n",
            server.url
        ),
    )
    .unwrap();
    std::fs::write(home.file("memory/core/projects.md"), core_memory(0)).unwrap();
    if by == NewsBy::JobWithCheck {
        std::fs::create_dir_all(home.file("jobs")).unwrap();
        std::fs::write(
            home.file("jobs/news.toml"),
            format!(
                "schedule = \"0 * * * *\"\ntimezone = \"UTC\"\n\
                 prompt = \"Digest the news below into memory/news/.\"\n\
                 check = [\"sh\", \"-c\", \"[ -e {0} ] || exit 1; cat {0}; rm {0}\"]\n\
                 [expect]\nwrote = \"memory/news/\"\n",
                feed.display()
            ),
        )
        .unwrap();
        home.ok(&["trust"]);
    }
    let supervisor = supervise(&home, &clock);
    let mut schedule: Vec<i64> = Vec::new();
    for d in 0..days as i64 {
        schedule.push(d * 24 * 60 + 8 * 60 + 10);
        schedule.push(d * 24 * 60 + 17 * 60 + 40);
    }
    let end = start() + chrono::Duration::days(days as i64);
    let mut next = 0;
    while now(&clock) < end {
        let minutes = (now(&clock) - start()).num_minutes();
        while next < schedule.len() && schedule[next] <= minutes {
            let at = schedule[next];
            next += 1;
            let item = format!("NEWS {at}: the ferry to the island runs late today.\n");
            match by {
                NewsBy::JobWithCheck => std::fs::write(&feed, item).unwrap(),
                NewsBy::IntervalTicks => {
                    std::fs::write(home.file(&format!("inbox/news{at:07}.md")), item).unwrap()
                }
            }
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    super::signal(&supervisor, libc::SIGTERM);
    super::finish(supervisor, Duration::from_secs(60));
    let bills = biller.lock().unwrap().bills.clone();
    let ticks = home.ticks();
    let runs: Vec<serde_json::Value> = std::fs::read_to_string(home.file("state/jobs.jsonl"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let count = |outcome: &str| runs.iter().filter(|r| r["outcome"] == outcome).count();
    NewsMonth {
        by,
        days,
        ticks: ticks.len(),
        requests: bills.len(),
        skipped: count("skipped"),
        done: count("done"),
        recorded_usd: ticks
            .iter()
            .map(|t| t["cost_usd"].as_f64().unwrap_or(0.0))
            .sum(),
        billed_usd: bills.iter().map(|b| b.usd).sum(),
        wall: wall.elapsed(),
    }
}
