//! What the tool sandbox costs a call. The same trivial tool command
//! (`/bin/echo`, its output read to the end as a tool's is) started three
//! ways, side by side in one run, each 200 times, alternating:
//!
//! - unsandboxed, as `sandbox = "none"` runs it;
//! - in hearth's jail: bubblewrap with the arguments hearth gives it for a
//!   home (the same `bwrap` Codex and Flatpak run commands in, so this is
//!   also the Docker-free rivals' way);
//! - in `unshare -Urmpf --mount-proc` (util-linux): namespaces alone, no
//!   view of the system built, the floor a namespace sandbox can reach.
//!
//! Prints each way's median and 90th percentile and what the jail adds
//! at the median (the bound: 10 ms). `cargo bench --bench jail`.

#![allow(clippy::disallowed_methods)] // fixtures, not state

mod common;

use std::process::{Command, Stdio};
use std::time::Duration;

use common::{ms, percentile};

const RUNS: usize = 200;

fn main() {
    let home = tempfile::tempdir().unwrap();
    for dir in [".git", ".hearth", "tools", "memory"] {
        std::fs::create_dir_all(home.path().join(dir)).unwrap();
    }
    std::fs::write(home.path().join("hearth.toml"), "").unwrap();
    if let Err(e) = hearth::jail::available() {
        eprintln!("{e}; {}", e.hint());
        std::process::exit(1);
    }
    let argv = vec!["/bin/echo".to_string(), "sunny".to_string()];
    let confinement = hearth::jail::Confinement::from_keys(
        home.path(),
        "tool-bench",
        &hearth::jail::Keys::default(),
    )
    .unwrap();
    let jailed = confinement.argv(&argv, home.path()).unwrap();
    let ways: Vec<(&str, Vec<std::ffi::OsString>)> = vec![
        ("unsandboxed", argv.iter().map(Into::into).collect()),
        ("hearth's jail (bwrap)", jailed),
        (
            "unshare -Urmpf",
            ["unshare", "-Urmpf", "--mount-proc", "/bin/echo", "sunny"]
                .iter()
                .map(Into::into)
                .collect(),
        ),
    ];
    let mut times: Vec<Vec<Duration>> = vec![Vec::new(); ways.len()];
    for _ in 0..RUNS {
        for (i, (_, argv)) in ways.iter().enumerate() {
            let start = std::time::Instant::now();
            let out = Command::new(&argv[0])
                .args(&argv[1..])
                .env_clear()
                .current_dir(home.path())
                .stdin(Stdio::null())
                .stderr(Stdio::null())
                .output()
                .unwrap();
            times[i].push(start.elapsed());
            assert!(
                out.status.success() && out.stdout == b"sunny\n",
                "{:?}",
                ways[i].0
            );
        }
    }
    println!("a trivial tool call, {RUNS} runs each, alternating:");
    let mut medians = Vec::new();
    for (i, (name, _)) in ways.iter().enumerate() {
        times[i].sort();
        let median = percentile(&times[i], 50);
        medians.push(median);
        println!(
            "  {name:<24} median {:>7.2} ms   p90 {:>7.2} ms",
            ms(median),
            ms(percentile(&times[i], 90))
        );
    }
    let added = ms(medians[1]) - ms(medians[0]);
    println!(
        "the jail adds {added:.2} ms at the median ({:.1}× the bare call; bound: 10 ms); \
         unshare alone adds {:.2} ms",
        ms(medians[1]) / ms(medians[0]),
        ms(medians[2]) - ms(medians[0])
    );
}
