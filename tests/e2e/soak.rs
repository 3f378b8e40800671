//! Three simulated days with every fault of the month's schedule
//! (`cargo bench --bench soak` runs thirty).

use crate::common::soak;

#[test]
fn three_simulated_days_of_faults_lose_nothing_and_flare_as_the_policy_says() {
    let report = soak::soak(3);
    println!("{}", report.table());
    assert!(report.problems.is_empty(), "{:#?}", report.problems);
    assert!(
        report.messages_lost.is_empty(),
        "{:?}",
        report.messages_lost
    );
    assert!(report.edits_lost.is_empty(), "{:?}", report.edits_lost);
    assert_eq!(report.manual_steps, 0);
    // Every fault ran where it can: in CI, as root, the full disk too;
    // elsewhere the report says which did not, and why (the full-disk
    // behaviour itself is `tests/e2e/disk.rs`'s, `#[ignore]`d and run as
    // root), so nothing is counted as run that was not.
    let root = std::process::Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0");
    if root && std::env::var_os("CI").is_some() {
        assert!(report.not_run.is_empty(), "{}", report.table());
    } else {
        eprintln!("{}", report.not_run.join("\n"));
    }
    // One message in ten is a stranger's standing order, obeyed: none of
    // the operator's identity writes needed review, all of the stranger's
    // did, and none reached main.
    assert_eq!(report.own_proposed, 0, "{}", report.table());
    assert!(report.own_writes > 0, "{}", report.table());
    assert_eq!(
        report.strangers_proposed,
        report.strangers_writes,
        "{}",
        report.table()
    );
    assert!(!report.planted_on_main, "{}", report.table());
    assert!(report.ticks >= 250, "{}", report.table());
    let flares = |kind: &str| report.flares.get(kind).copied().unwrap_or(0);
    assert_eq!(
        flares("outage"),
        report.faults["provider outage (3 h)"],
        "one per outage: {}",
        report.table()
    );
    // A day over budget: at most a warning while there is time, and the
    // stop once.
    assert!(
        (report.faults["day over budget"]..=2 * report.faults["day over budget"])
            .contains(&flares("budget")),
        "a warning and a stop on each day over: {}",
        report.table()
    );
    assert_eq!(
        flares("state"),
        report.faults["corrupt messages.json"],
        "one per broken state file: {}",
        report.table()
    );
    assert_eq!(flares("quiet-failure"), 0, "{}", report.table());
    assert_eq!(flares("panic"), 0, "{}", report.table());
    assert_eq!(flares("healer") as u64, report.heals, "{}", report.table());
    assert_eq!(
        flares("disk"),
        report.faults.get("full disk (1 h)").copied().unwrap_or(0),
        "one per full disk: {}",
        report.table()
    );
    assert!(
        report.messages_json_bytes < 2_000_000,
        "bounded by [context] history_tokens: {}",
        report.table()
    );
}
