//! A simulated month unattended: `hearth run` on a simulated clock at the
//! default 15-minute interval for 30 days (SOAK_DAYS=N to change), with the
//! fault schedule of `tests/common/soak.rs` (provider outages of hours,
//! bursts of 400s, days over budget, hand edits, inbox bursts, corrupt
//! `state/messages.json`, an hour of full disk (a tmpfs; needs root),
//! SIGTERM and `kill -9` restarts). Prints the
//! table the README shows, and fails if anything was lost.
//!
//! `cargo bench --bench soak`

#![allow(clippy::disallowed_methods)] // fixtures, not state

#[path = "../tests/common/mod.rs"]
mod common;

fn main() {
    let days: u32 = std::env::var("SOAK_DAYS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(30);
    let report = common::soak::soak(days);
    println!("| what | figure |\n|---|---|\n{}", report.table());
    for problem in &report.problems {
        println!("PROBLEM: {problem}");
    }
    let lost = report.messages_lost.len() + report.edits_lost.len();
    if lost > 0 || !report.problems.is_empty() || report.manual_steps > 0 {
        eprintln!(
            "the soak lost {lost} things and found {} problems",
            report.problems.len()
        );
        std::process::exit(1);
    }
}
