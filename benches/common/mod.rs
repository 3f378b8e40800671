//! What the benchmarks share: timing samples, percentiles, and the LoCoMo
//! development data beside the repository.

#![allow(dead_code)] // each bench uses the part it needs

use std::time::{Duration, Instant};

/// Times `runs` calls of `f`, sorted fastest first.
pub fn samples(runs: usize, mut f: impl FnMut()) -> Vec<Duration> {
    let mut samples: Vec<Duration> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed()
        })
        .collect();
    samples.sort();
    samples
}

/// The `p`-th percentile (0–100) of sorted samples.
pub fn percentile(sorted: &[Duration], p: usize) -> Duration {
    sorted[(sorted.len() * p / 100).min(sorted.len() - 1)]
}

/// The median of unsorted durations.
pub fn median(samples: impl Iterator<Item = Duration>) -> Duration {
    let mut v: Vec<Duration> = samples.collect();
    v.sort();
    percentile(&v, 50)
}

pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// `../shared/bench/locomo/locomo-dev.json`, or `None` (with a line saying
/// the bench is skipped) when it is not beside the repository.
pub fn locomo() -> Option<Vec<serde_json::Value>> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/bench/locomo/locomo-dev.json"
    );
    let Ok(bytes) = std::fs::read(path) else {
        println!("skipped: {path} not found");
        return None;
    };
    Some(serde_json::from_slice(&bytes).expect("the LoCoMo file parses"))
}

/// Installs a peer's command-line tool with apt when it is missing (the
/// benches compare against what a user would otherwise run). A peer that
/// still cannot run is reported as skipped by its bench.
#[allow(dead_code)] // not every bench has peers
pub fn ensure_tool(command: &str, apt_package: &str) {
    let present = |c: &str| {
        std::process::Command::new(c)
            .arg("--version")
            .output()
            .is_ok()
    };
    if present(command) {
        return;
    }
    println!("installing {apt_package} for the side-by-side run…");
    let quiet = || std::process::Stdio::null();
    let install = vec!["install", "-y", "-qq", apt_package];
    for args in [install.clone(), vec!["update", "-qq"], install] {
        let _ = std::process::Command::new("apt-get")
            .args(&args)
            .env("DEBIAN_FRONTEND", "noninteractive")
            .stdout(quiet())
            .stderr(quiet())
            .status();
        if present(command) {
            return;
        }
    }
}
