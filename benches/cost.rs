//! What a month of ticks costs, in dollars, at four intervals, against a
//! model API on 127.0.0.1 that bills by Anthropic's documented prompt-cache
//! rules (`tests/common/billing.rs`), on the soak's simulated clock. For
//! each interval, side by side in one run: what hearth recorded, what the
//! server billed, what the same requests cost with no `cache_control`, and
//! the floor an informed client reaches under the same rules (everything
//! sent in the last hour read from the cache, the rest at the input price).
//!
//! Then the news work of a month: an hourly job whose check finds news
//! twice a day, beside the same work done by hourly interval ticks.
//!
//! `cargo bench --bench cost` (COST_DAYS=N for a shorter run, scaled to 30
//! days; COST_INTERVALS=4,15 to pick intervals in minutes; COST_NEWS=0 to
//! leave the news work out).

#![allow(clippy::disallowed_methods)] // fixtures, not state

#[path = "../tests/common/mod.rs"]
mod common;

use std::time::Duration;

fn main() {
    let days: u32 = std::env::var("COST_DAYS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(30);
    let intervals: Vec<u64> = std::env::var("COST_INTERVALS")
        .ok()
        .map(|v| v.split(',').filter_map(|n| n.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![4, 15, 55, 120]);
    let runs: Vec<(u64, bool)> = intervals
        .iter()
        .flat_map(|&m| {
            // Just past the hour, the cache-aware schedule is shown beside
            // the plain one.
            if m > 59 && m <= 90 {
                vec![(m, false), (m, true)]
            } else {
                vec![(m, true)]
            }
        })
        .collect();
    // Two at a time: the machine has two cores, and the runs share nothing.
    let mut months = Vec::new();
    for pair in runs.chunks(2) {
        let handles: Vec<_> = pair
            .iter()
            .map(|&(m, aware)| {
                std::thread::spawn(move || {
                    common::cost::month(Duration::from_secs(m * 60), days, aware)
                })
            })
            .collect();
        for (h, &(_, aware)) in handles.into_iter().zip(pair) {
            months.push((h.join().unwrap(), aware));
        }
    }
    println!(
        "A month ({days} simulated day(s), scaled to 30) of Claude Sonnet 4.5 ticks, \
         3-6 inbox messages a day, a core memory edited daily:\n"
    );
    println!(
        "| interval | ticks | hearth recorded | server billed | no cache_control | floor | hearth ÷ floor | hearth ÷ no caching | first requests read from cache | wall |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    let mut failed = false;
    for (m, aware) in &months {
        let minutes = m.interval.as_secs() / 60;
        let label = if minutes > 59 && minutes <= 90 {
            format!("{minutes} min (cache_aware = {aware})")
        } else {
            format!("{minutes} min")
        };
        println!(
            "| {label} | {} | ${:.2} | ${:.2} | ${:.2} | ${:.2} | {:.2}× | {:.2}× | {:.0}% | {:.0} s |",
            m.ticks,
            m.per_month(m.recorded_usd),
            m.per_month(m.billed()),
            m.per_month(m.without_caching()),
            m.per_month(m.floor()),
            m.billed() / m.floor(),
            m.billed() / m.without_caching(),
            100.0 * m.first_request_hit_ratio(),
            m.wall.as_secs_f64(),
        );
        if !m.mismatches.is_empty() {
            failed = true;
            println!(
                "  recorded spend differs from the bill at {} time(s), e.g. {}",
                m.mismatches.len(),
                m.mismatches[0]
            );
        }
    }
    println!("\nA tick's first request at steady state (median of the last quarter):\n");
    println!("| interval | sent | uncached | cache read | 5-min write | 1-hour write | output |");
    println!("|---|---|---|---|---|---|---|");
    for (m, _) in &months {
        if let Some(b) = m.steady_first_request() {
            println!(
                "| {} min | {} | {} | {} | {} | {} | {} |",
                m.interval.as_secs() / 60,
                b.sent(),
                b.uncached,
                b.read,
                b.write_5m,
                b.write_1h,
                b.output
            );
        }
    }
    // The same months' tokens at other Claude models' prices (the same
    // rules; Opus 4.5 and Haiku 4.5 cache only from 4,096 tokens, which a
    // conversation passes within its first ticks).
    println!("\nThe same months re-priced for other Claude models (dollars a month):\n");
    println!("| interval | claude-haiku-4-5 | claude-sonnet-4-5 | claude-opus-4-5 |");
    println!("|---|---|---|---|");
    for (m, aware) in &months {
        let priced = |input: f64, output: f64| {
            let per = |t: u64, r: f64| t as f64 * r / 1e6;
            m.per_month(
                m.bills
                    .iter()
                    .map(|b| {
                        per(b.uncached, input)
                            + per(b.read, input * 0.1)
                            + per(b.write_5m, input * 1.25)
                            + per(b.write_1h, input * 2.0)
                            + per(b.output, output)
                    })
                    .sum(),
            )
        };
        let minutes = m.interval.as_secs() / 60;
        if minutes > 59 && minutes <= 90 && !aware {
            continue;
        }
        println!(
            "| {minutes} min | ${:.2} | ${:.2} | ${:.2} |",
            priced(1.0, 5.0),
            priced(3.0, 15.0),
            priced(5.0, 25.0)
        );
    }
    if std::env::var("COST_NEWS").map_or(true, |v| v != "0") {
        news(days);
    }
    if failed {
        std::process::exit(1);
    }
}

/// An hourly job whose check finds news twice a day, beside the same work
/// done by hourly interval ticks: what the check saves, in dollars.
fn news(days: u32) {
    use common::cost::{news_month, NewsBy};
    let runs: Vec<_> = [NewsBy::JobWithCheck, NewsBy::IntervalTicks]
        .into_iter()
        .map(|by| std::thread::spawn(move || news_month(by, days)))
        .collect();
    let months: Vec<_> = runs.into_iter().map(|h| h.join().unwrap()).collect();
    println!(
        "\nHourly news work for a month ({days} simulated day(s), scaled to 30), news twice a \
         day, Claude Sonnet 4.5:\n"
    );
    println!("| done by | ticks | job runs done | skipped by the check | model requests | hearth recorded | server billed | wall |");
    println!("|---|---|---|---|---|---|---|---|");
    for m in &months {
        let by = match m.by {
            NewsBy::JobWithCheck => "a job at :00 with a check (interval 24 h)",
            NewsBy::IntervalTicks => "interval ticks every hour",
        };
        println!(
            "| {by} | {} | {} | {} | {} | ${:.2} | ${:.2} | {:.0} s |",
            m.ticks,
            m.done,
            m.skipped,
            m.requests,
            m.per_month(m.recorded_usd),
            m.per_month(m.billed_usd),
            m.wall.as_secs_f64()
        );
    }
    if let [job, ticks] = &months[..] {
        println!(
            "\nThe job costs {:.2}× what the interval ticks cost ({:.1}× fewer requests).",
            job.billed_usd / ticks.billed_usd.max(1e-9),
            ticks.requests as f64 / job.requests.max(1) as f64
        );
    }
}
