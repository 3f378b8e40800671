//! Boot at 10,000 memory files: how long assembling the boot context takes
//! warm (p50 of 50 runs; goal ≤ 20 ms), beside the naive alternative of
//! reading every memory file to find the core ones.
//!
//! `cargo bench --bench boot`

#![allow(clippy::disallowed_methods)] // fixtures, not state

mod common;

use std::time::Duration;

use common::{ms, percentile, samples};
use hearth::config::Config;
use hearth::home::Home;

const FILES: usize = 10_000;
const CORE: usize = 100;
const RUNS: usize = 50;

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let report =
        hearth::home::init(&dir.path().join("home"), hearth::clock::Clock::System.now()).unwrap();
    let home = report.home;
    populate(&home);
    let config = Config::default();

    for _ in 0..3 {
        hearth::boot::boot(&home, &config.boot);
    }
    let boot = time(|| {
        let boot = hearth::boot::boot(&home, &config.boot);
        assert_eq!(boot.core.len(), CORE + 1 + (FILES - CORE) / 50);
    });
    let naive = time(|| {
        let mut core = 0;
        for entry in walkdir::WalkDir::new(home.memory_dir()) {
            let entry = entry.unwrap();
            if entry.file_type().is_file() {
                let text = std::fs::read_to_string(entry.path()).unwrap();
                core += usize::from(text.contains("core: true"));
            }
        }
        assert!(core > 0);
    });
    let walk = time(|| {
        let mut n = 0;
        for entry in walkdir::WalkDir::new(home.memory_dir()).sort_by_file_name() {
            let entry = entry.unwrap();
            if entry.file_type().is_file() {
                n += entry.metadata().unwrap().len() as usize;
            }
        }
        assert!(n > 0);
    });
    println!("boot context, {FILES} memory files ({CORE} in core/), {RUNS} warm runs:");
    println!(
        "  hearth boot:               p50 {:>8.2} ms  p90 {:>8.2} ms",
        ms(boot.0),
        ms(boot.1)
    );
    println!(
        "  read every file (naive):   p50 {:>8.2} ms  p90 {:>8.2} ms",
        ms(naive.0),
        ms(naive.1)
    );
    println!(
        "  walk + stat only (floor):  p50 {:>8.2} ms  p90 {:>8.2} ms",
        ms(walk.0),
        ms(walk.1)
    );
    println!(
        "  ratio naive/hearth (p50):  {:.2}x",
        naive.0.as_secs_f64() / boot.0.as_secs_f64()
    );
}

/// 100 core memories (half identity-class), and 9,900 others of which one
/// in fifty claims `core: true` and one in five has other front matter.
fn populate(home: &Home) {
    let mem = home.memory_dir();
    for i in 0..CORE {
        let tag = if i % 2 == 0 { "identity" } else { "style" };
        let path = mem.join(format!("core/c{i:03}.md"));
        std::fs::write(
            path,
            format!(
                "---\ntitle: Core {i}\ntags: [{tag}]\n---\n{}\n",
                "A rule worth keeping. ".repeat(15)
            ),
        )
        .unwrap();
    }
    for i in 0..FILES - CORE {
        let dir = mem.join(format!("notes/d{:02}", i % 100));
        std::fs::create_dir_all(&dir).unwrap();
        let body = format!(
            "# Note {i}\n\n{}\n",
            "Some remembered detail about the world. ".repeat(25)
        );
        let text = if i % 50 == 0 {
            format!("---\ntitle: Pinned {i}\ncore: true\n---\n{body}")
        } else if i % 5 == 0 {
            format!("---\ntitle: Note {i}\ntags: [notes]\n---\n{body}")
        } else {
            body
        };
        let path = dir.join(format!("n{i:05}.md"));
        std::fs::write(&path, text).unwrap();
        // A real home's notes were not all written this second.
        let old = hearth::clock::file_time_now() - Duration::from_secs(3600);
        std::fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(old)
            .unwrap();
    }
}

/// p50 and p90 of `RUNS` calls.
fn time(f: impl FnMut()) -> (Duration, Duration) {
    let sorted = samples(RUNS, f);
    (percentile(&sorted, 50), percentile(&sorted, 90))
}
