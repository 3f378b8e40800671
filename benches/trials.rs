//! The reliability suite of issue 11, long form: ≥ 500 kill -9 trials,
//! SIGTERM trials, every bad input with 100 MB files, the sandbox, and
//! concurrent recalls. Prints the tables the README's "Reliability"
//! section shows.
//!
//! `cargo bench --bench trials` (CRASH_TRIALS=N, ACCEPT_TRIALS=N to change
//! the counts; the accept series kills `hearth proposals accept` ≥ 500 times;
//! the series across hosts publishes REMOTE_HANDOFFS (1000) handoffs among
//! three homes with REMOTE_OUTAGES (3) git-server outages of REMOTE_OUTAGE_S
//! (120) seconds each; TRIALS=remote runs that series alone; the flood
//! trial publishes FLOOD_HOSTILE (10,000) handoffs from a hostile peer
//! beside FLOOD_LEGIT (240) of a legitimate one after a FLOOD_OUTAGE_S (75)
//! second outage; TRIALS=flood runs it alone; the week trial runs
//! WEEK_DAYS (7) simulated days through a refused key, a spent budget, a
//! broken config at a restart and a full disk; TRIALS=week runs it alone;
//! the planted trial runs one stranger's payload through PLANTED_TURNS
//! (200) turns of the operator's work and a trigger; TRIALS=planted runs
//! it alone)

#![allow(clippy::disallowed_methods)] // fixtures, not state

#[path = "../tests/common/mod.rs"]
mod common;
#[path = "../tests/e2e/reliability/mod.rs"]
mod reliability;

use std::time::Instant;

fn main() {
    let crash_trials: usize = std::env::var("CRASH_TRIALS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(500);
    let accept_trials: usize = std::env::var("ACCEPT_TRIALS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(500);
    let number = |var: &str, default: u64| {
        std::env::var(var)
            .ok()
            .and_then(|n| n.parse().ok())
            .unwrap_or(default)
    };
    let started = Instant::now();
    let planted = reliability::planted::planted(number("PLANTED_TURNS", 200) as usize);
    println!("{}\n", planted.render());
    if std::env::var("TRIALS").as_deref() == Ok("planted") {
        std::process::exit(if planted.total_failures() > 0 { 1 } else { 0 });
    }
    let week = reliability::week::week(number("WEEK_DAYS", 7) as u32);
    println!("{}\n", week.render());
    if std::env::var("TRIALS").as_deref() == Ok("week") {
        std::process::exit(if week.total_failures() > 0 { 1 } else { 0 });
    }
    let flood = reliability::flood::flood(&reliability::flood::Flood {
        hostile: number("FLOOD_HOSTILE", 10_000) as usize,
        legit: number("FLOOD_LEGIT", 240) as usize,
        outage: std::time::Duration::from_secs(number("FLOOD_OUTAGE_S", 75)),
        take_within: std::time::Duration::from_secs(number("FLOOD_TAKE_WITHIN_S", 120)),
        max_rss_mb: 200,
    });
    println!("{}\n", flood.render());
    if std::env::var("TRIALS").as_deref() == Ok("flood") {
        std::process::exit(if flood.total_failures() > 0 { 1 } else { 0 });
    }
    let schedule = reliability::remote::Schedule {
        total: number("REMOTE_HANDOFFS", 1000) as usize,
        outages: number("REMOTE_OUTAGES", 3) as usize,
        outage: std::time::Duration::from_secs(number("REMOTE_OUTAGE_S", 120)),
        seed: 0x4242_2026,
    };
    let (remote, latencies) = reliability::remote::across_hosts(&schedule);
    println!(
        "{}
",
        remote.render()
    );
    for (what, sorted) in [
        ("published → taken", &latencies.published),
        ("published → taken, up-time only", &latencies.fetchable),
    ] {
        println!(
            "delivery latency ({what}) over {} handoffs: median {:?}, p95 {:?}, max {:?}",
            sorted.len(),
            quantile(sorted, 0.5),
            quantile(sorted, 0.95),
            sorted.last().copied().unwrap_or_default()
        );
    }
    println!();
    if std::env::var("TRIALS").as_deref() == Ok("remote") {
        std::process::exit(if remote.total_failures() > 0 { 1 } else { 0 });
    }
    let tables = [
        reliability::crash(crash_trials, 0x5eed_2026),
        reliability::sigterm(100, 0xfeed_2026),
        reliability::bad_inputs::run(100),
        reliability::sandbox::run(),
        reliability::asks::interrupted(400, 8, 0xa5c5_2026),
        reliability::decisions::accept_killed(accept_trials, 0xacce_2026),
    ];
    let (concurrency, lags) = reliability::concurrency(8, 100);
    let mut failures = remote.total_failures()
        + flood.total_failures()
        + week.total_failures()
        + planted.total_failures();
    for table in tables.iter().chain([&concurrency]) {
        println!("{}\n", table.render());
        failures += table.total_failures();
    }
    let pick = |q: f64| {
        lags.get(((lags.len() as f64 - 1.0) * q) as usize)
            .copied()
            .unwrap_or_default()
    };
    println!(
        "freshness lag (save → recallable): p50 {:?}, max {:?} over {} saves",
        pick(0.5),
        lags.last().copied().unwrap_or_default(),
        lags.len()
    );
    println!(
        "\n{failures} failures in all; {:.0} s",
        started.elapsed().as_secs_f64()
    );
    if failures > 0 {
        std::process::exit(1);
    }
}

/// The `q` quantile of sorted durations.
fn quantile(sorted: &[std::time::Duration], q: f64) -> std::time::Duration {
    sorted
        .get(((sorted.len() as f64 - 1.0) * q).round() as usize)
        .copied()
        .unwrap_or_default()
}
