//! The reliability suite of issue 11, short form (CI): kill -9 and SIGTERM
//! at random points, bad inputs, the sandbox, concurrent recalls. The long
//! form with the README's figures: `cargo bench --bench trials`.

#![allow(clippy::disallowed_methods)] // fixtures, not state

use super::reliability as trials;

fn passes(table: trials::Table) {
    println!("{}", table.render());
    assert_eq!(table.total_failures(), 0, "{}", table.render());
}

#[test]
fn crash_trials_kill_9_at_random_points_lose_nothing() {
    let table = trials::crash(20, 0x5eed);
    assert_eq!(table.trials, 20);
    passes(table);
}

#[test]
fn sigterm_trials_stop_cleanly_with_nothing_lost() {
    passes(trials::sigterm(10, 0xfeed));
}

#[test]
fn bad_inputs_are_handled_or_named_and_lose_nothing() {
    let table = trials::bad_inputs::run(8);
    assert!(table.trials >= 41, "{} kinds", table.trials);
    passes(table);
}

#[test]
fn sandbox_escapes_all_fail_and_the_key_is_nowhere() {
    let table = trials::sandbox::run();
    assert!(table.trials >= 39);
    passes(table);
}

#[test]
fn concurrent_recalls_while_it_ticks_and_rebuilds_never_fail() {
    let (table, lags) = trials::concurrency(8, 15);
    println!("freshness lag: {lags:?}");
    passes(table);
}

#[test]
fn asks_cut_short_at_random_moments_keep_their_writes_their_own() {
    let table = trials::asks::interrupted(24, 4, 0xa5c5);
    assert_eq!(table.trials, 24);
    passes(table);
}

#[test]
fn an_accept_killed_at_random_moments_leaves_main_whole_or_untouched() {
    let table = trials::decisions::accept_killed(24, 0xacce_9741);
    assert_eq!(table.trials, 24);
    // The kills landed where they matter: some before the commit.
    assert!(
        table
            .counts
            .get("cut before its commit: undone")
            .is_some_and(|n| *n > 0),
        "{}",
        table.render()
    );
    passes(table);
}

#[test]
fn handoffs_across_hosts_survive_kills_and_an_outage_taken_once_each() {
    let schedule = trials::remote::Schedule {
        total: 24,
        outages: 1,
        outage: std::time::Duration::from_secs(4),
        seed: 0x4242,
    };
    let (table, latencies) = trials::remote::across_hosts(&schedule);
    println!("latencies: {latencies:?}");
    // The outage held some back, and they came once it was over.
    assert!(
        latencies.published.last() > Some(&std::time::Duration::from_secs(2)),
        "{latencies:?}"
    );
    assert!(table.trials >= 24, "{}", table.render());
    passes(table);
}

#[test]
fn a_flood_from_a_hostile_peer_neither_stalls_the_agent_nor_starves_a_legitimate_backlog() {
    let table = trials::flood::flood(&trials::flood::Flood {
        hostile: 400,
        legit: 40,
        outage: std::time::Duration::from_secs(2),
        take_within: std::time::Duration::from_secs(60),
        max_rss_mb: 200,
    });
    assert!(table.trials >= 3, "the operator spoke: {}", table.render());
    passes(table);
}

#[test]
#[ignore = "needs root to mount a tmpfs for its full disk; .ci/run runs it as root (cargo test -- --ignored)"]
fn three_simulated_days_of_causes_a_heal_cannot_fix_heal_nothing_and_lose_nothing() {
    // Every fault runs, the full disk included: a disk that cannot be
    // mounted is a failure ("not run"), never a pass.
    let table = trials::week::week(3);
    assert!(table.counts["ticks"] >= 150, "{}", table.render());
    assert!(
        table.counts["model requests refused (401)"] > 0,
        "{}",
        table.render()
    );
    assert!(
        table.counts["recall rerank calls on the ledger"] >= 4,
        "{}",
        table.render()
    );
    passes(table);
}

#[test]
fn a_planted_payload_neither_reaches_identity_nor_acts_over_a_run_of_the_operators_work() {
    // Twice round the operator's twelve kinds of turn; the bench runs 200.
    let table = trials::planted::planted(24);
    assert!(
        table.counts["requests made instead of running"] >= 1,
        "{}",
        table.render()
    );
    assert_eq!(
        table.counts["posts the operator asked for that ran"],
        2,
        "{}",
        table.render()
    );
    passes(table);
}
