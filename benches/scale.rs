//! Does the home stay fast as it grows? The same measurements on a small
//! home (100 memory files, 1,000 commits) and a large one (10,000 files,
//! 100,000 commits, the history written by `git fast-import` in seconds),
//! side by side, so growth shows:
//!
//! - the supervisor's work per tick (`hearth run --ticks N` back to back
//!   with the offline model: the cycle from one tick's start to the next,
//!   less a process start, which `hearth --version` measures);
//! - boot (the system blocks a tick assembles), with no supervisor (a walk
//!   of every memory file) and with one running (its watcher's claims);
//! - `hearth recall --no-rerank` with the supervisor running, beside `rg`
//!   over the same files;
//! - the last good commit, beside `git rev-parse`.
//!
//! `cargo bench --bench scale` (SCALE_LARGE=0 runs only the small home).

#![allow(clippy::disallowed_methods)] // fixtures, not state

mod common;

use std::io::Write;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{ms, percentile, samples};
use hearth::config::Config;
use hearth::home::Home;

const HEARTH: &str = env!("CARGO_BIN_EXE_hearth");
const TICKS: usize = 40;
const RUNS: usize = 21;
const QUERIES: [&str; 7] = [
    "heron river",
    "lighthouse keeper",
    "winter harbour log",
    "kestrel",
    "tide tables march",
    "copper kettle",
    "north ridge trail",
];

/// One home's figures, in milliseconds (p50 unless said).
#[derive(Default)]
struct Figures {
    build_s: f64,
    index_s: f64,
    origins_s: f64,
    git_bytes: u64,
    process_start: f64,
    cycle: f64,
    cycle_p90: f64,
    child: f64,
    between: f64,
    boot_walk: f64,
    boot_watched: f64,
    recall: f64,
    rg: f64,
    last_good: f64,
    git_rev_parse: f64,
}

fn main() {
    common::ensure_tool("rg", "ripgrep");
    let mut sizes = vec![(100, 1_000)];
    if std::env::var("SCALE_LARGE").as_deref() != Ok("0") {
        sizes.push((10_000, 100_000));
    }
    let figures: Vec<((usize, usize), Figures)> = sizes
        .into_iter()
        .map(|(files, commits)| {
            println!("== {files} memory files, {commits} commits ==");
            let f = measure(files, commits);
            ((files, commits), f)
        })
        .collect();
    print_table(&figures);
}

fn measure(files: usize, commits: usize) -> Figures {
    let dir = tempfile::tempdir().unwrap();
    let figures = measure_in(dir.path(), files, commits);
    if std::env::var_os("SCALE_KEEP").is_some() {
        println!("home kept: {}", dir.keep().join("home").display());
    }
    figures
}

fn measure_in(root: &Path, files: usize, commits: usize) -> Figures {
    let mut f = Figures::default();
    let started = Instant::now();
    let home = build(root, files, commits);
    f.build_s = started.elapsed().as_secs_f64();
    f.git_bytes = dir_bytes(&home.root().join(".git"));
    println!(
        "built in {:.1} s; .git {:.1} MB",
        f.build_s,
        f.git_bytes as f64 / 1e6
    );
    let t = Instant::now();
    assert!(hearth(&home, &["index"]).status.success());
    f.index_s = t.elapsed().as_secs_f64();
    // What a supervisor replays once, in the background, for recall's
    // line origins (after that, each tick's commit alone).
    let t = Instant::now();
    let replayed = hearth::repo::Repo::open(home.root())
        .unwrap()
        .update_line_origins(&["memory", "state/archive", "state/sessions.jsonl"])
        .unwrap();
    f.origins_s = t.elapsed().as_secs_f64();
    println!(
        "recall index built in {:.1} s; line origins of {replayed} commits replayed in {:.1} s",
        f.index_s, f.origins_s
    );

    // The last good commit: refs/hearth/good, beside git's CLI.
    let good = hearth::repo::Repo::open(home.root())
        .unwrap()
        .last_good()
        .unwrap()
        .expect("the history has a good tick");
    f.last_good = p50(|| {
        let repo = hearth::repo::Repo::open(home.root()).unwrap();
        assert_eq!(repo.last_good().unwrap().as_deref(), Some(good.as_str()));
    });
    f.git_rev_parse = p50(|| {
        let out = Command::new("git")
            .arg("-C")
            .arg(home.root())
            .args(["rev-parse", "refs/hearth/good"])
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), good);
    });

    // Boot with nobody watching: a walk of every memory file (its cache warm).
    let config = Config::default();
    let expected_core = hearth::boot::boot(&home, &config.boot).core.len();
    f.boot_walk = p50(|| {
        assert_eq!(
            hearth::boot::boot(&home, &config.boot).core.len(),
            expected_core
        );
    });

    // Ticks back to back: the cycle from one start to the next.
    f.process_start = p50(|| {
        let out = Command::new(HEARTH).arg("--version").output().unwrap();
        assert!(out.status.success());
    });
    let before = ledger_records(&home).len();
    let out = hearth(&home, &["run", "--ticks", &TICKS.to_string()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let records = ledger_records(&home);
    let records = &records[before..];
    // The first ticks pay once for what a start-up does (the full look
    // at memory/ for the index, the watcher's first scan).
    let steady = &records[5..];
    let mut cycles: Vec<Duration> = steady.windows(2).map(|w| w[1].0 - w[0].0).collect();
    let mut children: Vec<Duration> = steady.iter().map(|r| r.1 - r.0).collect();
    let mut between: Vec<Duration> = steady.windows(2).map(|w| w[1].0 - w[0].1).collect();
    cycles.sort();
    children.sort();
    between.sort();
    f.cycle = ms(percentile(&cycles, 50));
    f.cycle_p90 = ms(percentile(&cycles, 90));
    f.child = ms(percentile(&children, 50));
    f.between = ms(percentile(&between, 50));

    // A supervisor up and waiting: boot from its claims, recall on its word.
    let _ = std::fs::remove_file(home.root().join(".hearth/index/current.json"));
    let supervisor = Supervisor::start(&home);
    f.boot_watched = p50(|| {
        assert_eq!(
            hearth::boot::boot(&home, &config.boot).core.len(),
            expected_core
        );
    });
    let mut q = 0;
    f.recall = p50(|| {
        q += 1;
        let out = hearth(
            &home,
            &[
                "recall",
                "--no-rerank",
                "--json",
                QUERIES[q % QUERIES.len()],
            ],
        );
        assert!(out.status.success());
    });
    let mut q = 0;
    f.rg = p50(|| {
        q += 1;
        let mut cmd = Command::new("rg");
        cmd.args(["-i", "-c", "--no-messages"]);
        for w in QUERIES[q % QUERIES.len()].split(' ') {
            cmd.args(["-e", w]);
        }
        let _ = cmd.arg(home.memory_dir()).stdout(Stdio::null()).status();
    });
    drop(supervisor);
    f
}

/// `hearth init`, `files` memory files, and a first-parent history of
/// `commits` tick commits through `git fast-import` (one pack, as
/// hearth's own packing would leave it), checked out.
fn build(root: &Path, files: usize, commits: usize) -> Home {
    let home = hearth::home::init(&root.join("home"), hearth::clock::Clock::System.now())
        .unwrap()
        .home;
    let head = git(home.root(), &["rev-parse", "HEAD"]);
    let mut import = Command::new("git")
        .arg("-C")
        .arg(home.root())
        .args(["fast-import", "--quiet"])
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    let mut w = std::io::BufWriter::new(import.stdin.take().unwrap());
    let when = 1_700_000_000u64;
    let msg = "operator: a memory of many notes\n";
    write!(
        w,
        "commit refs/heads/main\ncommitter operator <operator@localhost> {when} +0000\ndata {}\n{msg}from {head}\n",
        msg.len()
    )
    .unwrap();
    for (path, text) in memories(files) {
        write!(w, "M 100644 inline {path}\ndata {}\n{text}\n", text.len()).unwrap();
    }
    for n in 1..=commits as u64 {
        let msg = format!(
            "tick {n}: exit 0 (ok)\n\nHearth-Tick: {n}\nHearth-Exit: 0\nHearth-Class: ok\n"
        );
        let journal = format!("# Journal\n\nTick {n}: the harbour was quiet.\n");
        write!(
            w,
            "commit refs/heads/main\ncommitter hearth <hearth@localhost> {} +0000\ndata {}\n{msg}M 100644 inline memory/journal.md\ndata {}\n{journal}\n",
            when + n * 900,
            msg.len(),
            journal.len()
        )
        .unwrap();
    }
    drop(w);
    assert!(import.wait().unwrap().success());
    git(home.root(), &["reset", "-q", "--hard", "main"]);
    git(home.root(), &["update-ref", "refs/hearth/good", "main"]);
    // Old files, as a real home's are (fresh mtimes are "racy" and reread).
    let old = hearth::clock::file_time_now() - Duration::from_secs(3600);
    for entry in walkdir::WalkDir::new(home.memory_dir())
        .into_iter()
        .flatten()
    {
        if entry.file_type().is_file() {
            let file = std::fs::File::options()
                .write(true)
                .open(entry.path())
                .unwrap();
            file.set_modified(old).unwrap();
        }
    }
    home
}

/// 1% under `memory/core/` (half identity), one in fifty of the rest with
/// `core: true`, one in five with other front matter; a few hundred words
/// each from a small vocabulary, so queries have something to find.
fn memories(files: usize) -> Vec<(String, String)> {
    const WORDS: [&str; 24] = [
        "heron",
        "river",
        "lighthouse",
        "keeper",
        "winter",
        "harbour",
        "log",
        "kestrel",
        "tide",
        "tables",
        "march",
        "copper",
        "kettle",
        "north",
        "ridge",
        "trail",
        "gull",
        "ferry",
        "lantern",
        "moss",
        "granite",
        "orchard",
        "spindle",
        "barley",
    ];
    let core = (files / 100).max(1);
    (0..files)
        .map(|i| {
            let body: Vec<&str> = (0..120)
                .map(|k| WORDS[(i * 7 + k * k * 13 + k) % WORDS.len()])
                .collect();
            let body = format!("# Note {i}\n\n{}\n", body.join(" "));
            if i < core {
                let tag = if i % 2 == 0 { "identity" } else { "style" };
                let text = format!("---\ntitle: Core {i}\ntags: [{tag}]\n---\n{body}");
                (format!("memory/core/c{i:05}.md"), text)
            } else {
                let text = if i % 50 == 0 {
                    format!("---\ntitle: Pinned {i}\ncore: true\n---\n{body}")
                } else if i % 5 == 0 {
                    format!("---\ntitle: Note {i}\ntags: [notes]\n---\n{body}")
                } else {
                    body
                };
                (format!("memory/notes/d{:02}/n{i:05}.md", i % 100), text)
            }
        })
        .collect()
}

/// A `hearth run` waiting between ticks (an hour apart), stopped on drop.
struct Supervisor(Child);

impl Supervisor {
    fn start(home: &Home) -> Supervisor {
        let child = Command::new(HEARTH)
            .arg("--home")
            .arg(home.root())
            .args(["run", "--interval", "3600"])
            .env("RUST_LOG", "error")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // Up once its watcher has published and the index is marked current.
        let deadline = Instant::now() + Duration::from_secs(600);
        while !(home.root().join(".hearth/memory-seq").exists()
            && home.root().join(".hearth/index/current.json").exists())
        {
            assert!(Instant::now() < deadline, "the supervisor did not settle");
            std::thread::sleep(Duration::from_millis(50));
        }
        std::thread::sleep(Duration::from_millis(500));
        Supervisor(child)
    }
}

impl Drop for Supervisor {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.0.id().to_string()])
            .status();
        let _ = self.0.wait();
    }
}

/// (start, end) of every tick in the ledger, oldest first.
fn ledger_records(home: &Home) -> Vec<(Duration, Duration)> {
    let ledger =
        hearth::exchange::ledger::Ledger::read_all(&home.path("state/ticks.jsonl")).unwrap();
    let at = |t: chrono::DateTime<chrono::Utc>| {
        Duration::from_nanos(t.timestamp_nanos_opt().unwrap() as u64)
    };
    ledger
        .records
        .iter()
        .map(|r| (at(r.start), at(r.end)))
        .collect()
}

fn hearth(home: &Home, args: &[&str]) -> std::process::Output {
    Command::new(HEARTH)
        .arg("--home")
        .arg(home.root())
        .args(args)
        .env("RUST_LOG", "error")
        .output()
        .unwrap()
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn dir_bytes(dir: &Path) -> u64 {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .flatten()
        .filter(|e| e.file_type().is_file())
        .map(|e| e.metadata().map(|m| m.len()).unwrap_or(0))
        .sum()
}

/// The median of `RUNS` calls, in milliseconds.
fn p50(f: impl FnMut()) -> f64 {
    ms(percentile(&samples(RUNS, f), 50))
}

fn print_table(figures: &[((usize, usize), Figures)]) {
    let head: Vec<String> = figures
        .iter()
        .map(|((files, commits), _)| format!("{files} files, {commits} commits"))
        .collect();
    println!("\n| p50, ms | {} | goal |", head.join(" | "));
    println!("|---|{}---|", "---:|".repeat(figures.len()));
    let row = |name: &str, goal: &str, value: &dyn Fn(&Figures) -> String| {
        let cells: Vec<String> = figures.iter().map(|(_, f)| value(f)).collect();
        println!("| {name} | {} | {goal} |", cells.join(" | "));
    };
    row(
        "supervisor work per tick (cycle − process start)",
        "≤ 50",
        &|f| format!("{:.1}", f.cycle - f.process_start),
    );
    row("  tick cycle, start to start (p90)", "", &|f| {
        format!("{:.1} ({:.1})", f.cycle, f.cycle_p90)
    });
    row("  of which the tick's child process", "", &|f| {
        format!("{:.1}", f.child)
    });
    row("  of which the supervisor between ticks", "", &|f| {
        format!("{:.1}", f.between)
    });
    row("  a process start (`hearth --version`)", "", &|f| {
        format!("{:.1}", f.process_start)
    });
    row(
        "boot, supervisor running (watcher's claims)",
        "≤ 20",
        &|f| format!("{:.2}", f.boot_watched),
    );
    row("boot, no supervisor (walk, cache warm)", "", &|f| {
        format!("{:.2}", f.boot_walk)
    });
    row(
        "`hearth recall --no-rerank`, supervisor running",
        "",
        &|f| format!("{:.1}", f.recall),
    );
    row("`rg` over the same memory files", "", &|f| {
        format!("{:.1}", f.rg)
    });
    row("recall ÷ rg", "≤ 0.5×", &|f| {
        format!("{:.2}×", f.recall / f.rg)
    });
    row("last good commit (refs/hearth/good)", "≤ 5", &|f| {
        format!("{:.2}", f.last_good)
    });
    row("`git rev-parse refs/hearth/good`", "", &|f| {
        format!("{:.2}", f.git_rev_parse)
    });
    row("first replay of line origins, s", "", &|f| {
        format!("{:.1}", f.origins_s)
    });
    row(".git size, MB", "", &|f| {
        format!("{:.1}", f.git_bytes as f64 / 1e6)
    });
}
