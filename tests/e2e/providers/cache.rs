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

#[test]
fn status_and_audit_say_what_the_cache_does_at_the_interval() {
    use crate::common::{billing, TestHome};
    let clock_dir = tempfile::tempdir().unwrap();
    let clock = clock_dir.path().join("now");
    let start = "2026-03-02T09:00:00Z";
    std::fs::write(&clock, start).unwrap();
    let (server, _books) = billing::serve(clock.clone(), billing::agent);
    let config = |interval: u64| {
        format!(
            "[model]\nprovider = \"anthropic\"\nmodel = \"claude-sonnet-4-5\"\nbase_url = \"{}\"\n\
             timeout_s = 5\n[tick]\ninterval_s = {interval}\n",
            server.url
        )
    };
    let home = TestHome::with_config(&config(900));
    std::fs::write(
        home.file("memory/notes.md"),
        "# Notes\n\n".to_string() + &"The tide is high. ".repeat(400),
    )
    .unwrap();
    home.ok(&["say", "read my notes, please"]);
    let out = home
        .keyed(&["run", "--ticks", "3"], "sk-ant-test")
        .env("HEARTH_SIM_CLOCK", &clock)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let status = home.ok_with_env(&["status"], &[("HEARTH_NOW", start)]);
    let status = String::from_utf8(status.stdout).unwrap();
    let line = status
        .lines()
        .find(|l| l.starts_with("last 24 h:"))
        .unwrap_or_else(|| panic!("{status}"));
    assert!(line.contains("over 3 ticks"), "{line}");
    assert!(
        line.contains("read from the cache") && !line.contains(" 0% of"),
        "{line}"
    );
    assert!(!status.contains("CACHE:"), "{status}");
    let audit = home.ok(&["audit"]);
    assert!(audit.contains("1-hour lifetime"), "{audit}");

    std::fs::write(home.file("hearth.toml"), config(7200)).unwrap();
    let status = String::from_utf8(
        home.ok_with_env(&["status"], &[("HEARTH_NOW", start)])
            .stdout,
    )
    .unwrap();
    let warning = status
        .lines()
        .find(|l| l.starts_with("CACHE:"))
        .unwrap_or_else(|| panic!("{status}"));
    assert!(
        warning.contains("pays nothing") && warning.contains("59 min or less"),
        "{warning}"
    );
    let audit = home.ok(&["audit"]);
    assert!(
        audit.contains("CACHE:") && audit.contains("pays nothing"),
        "{audit}"
    );
}
