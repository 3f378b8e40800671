//! The provider's prompt cache between ticks, against a model API that
//! bills by Anthropic's caching rules (`tests/common/billing.rs`) on a
//! simulated clock: a day of ticks at the default interval reads the
//! conversation from the cache, pays within a quarter of the floor, and
//! records what it was billed; ticks two hours apart pay no premium for
//! writes nothing will read.

use std::time::Duration;

use crate::common::cost::month;

#[test]
fn a_day_at_the_default_interval_reads_the_conversation_from_the_cache() {
    let day = month(Duration::from_secs(15 * 60), 1, true);
    assert!(day.ticks >= 96, "{} ticks", day.ticks);
    assert!(
        day.mismatches.is_empty(),
        "{:?}",
        &day.mismatches[..day.mismatches.len().min(3)]
    );
    assert!((day.recorded_usd - day.billed()).abs() < 1e-6);
    let hit = day.first_request_hit_ratio();
    assert!(
        hit > 0.85,
        "only {:.0}% of the first requests' input was read",
        100.0 * hit
    );
    // Every tick after the first read the prefix the one before wrote.
    let firsts: Vec<_> = day.bills.iter().filter(|b| b.first).collect();
    let unread = firsts[1..].iter().filter(|b| b.read == 0).count();
    assert!(
        unread <= 1,
        "{unread} ticks read nothing (a core memory edit may cost one)"
    );
    let (billed, floor) = (day.billed(), day.floor());
    assert!(
        billed <= 1.25 * floor,
        "billed ${billed:.4}, floor ${floor:.4}"
    );
    assert!(billed < 0.5 * day.without_caching());
}

#[test]
fn ticks_two_hours_apart_write_nothing_to_the_cache_that_dies_unread() {
    let day = month(Duration::from_secs(120 * 60), 1, true);
    assert!(day.mismatches.is_empty(), "{:?}", day.mismatches);
    let firsts: Vec<_> = day.bills.iter().filter(|b| b.first).collect();
    assert!(firsts.len() >= 12, "{} ticks", firsts.len());
    assert!(
        firsts.iter().all(|b| b.write_1h == 0 && b.write_5m == 0),
        "a first request wrote to the cache: {:?}",
        firsts.iter().find(|b| b.write_1h + b.write_5m > 0)
    );
    let (billed, uncached) = (day.billed(), day.without_caching());
    assert!(
        billed <= 1.02 * uncached,
        "billed ${billed:.4}, uncached ${uncached:.4}"
    );
}

#[test]
fn a_cache_aware_supervisor_pulls_ticks_just_past_the_hour_into_the_cache() {
    let aware = month(Duration::from_secs(75 * 60), 1, true);
    assert!(aware.mismatches.is_empty(), "{:?}", aware.mismatches);
    assert!(
        aware.first_request_hit_ratio() > 0.8,
        "{}",
        aware.first_request_hit_ratio()
    );
    let plain = month(Duration::from_secs(75 * 60), 1, false);
    assert!(
        plain.first_request_hit_ratio() < 0.05,
        "{}",
        plain.first_request_hit_ratio()
    );
    assert!(
        aware.ticks > plain.ticks,
        "{} vs {} ticks",
        aware.ticks,
        plain.ticks
    );
    assert!(
        aware.billed() < plain.billed(),
        "pulled ${:.4}, plain ${:.4}",
        aware.billed(),
        plain.billed()
    );
}
