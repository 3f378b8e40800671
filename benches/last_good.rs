//! Finding the last good commit on a 100,000-commit home: through
//! `refs/hearth/good` (O(1); goal ≤ 5 ms) and through the fallback walk of
//! tick trailers, beside git's CLI doing the same two lookups.
//!
//! `cargo bench --bench last_good`

mod common;

use std::process::Command;
use std::time::{Duration, Instant};

use common::ms;
use hearth::repo::Repo;

const COMMITS: usize = 100_000;
const RUNS: usize = 21;

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let built = Instant::now();
    let good = build(root);
    println!(
        "built {COMMITS} commits in {:.1} s",
        built.elapsed().as_secs_f64()
    );

    let by_ref = time(|| {
        let repo = Repo::open(root).unwrap();
        assert_eq!(repo.last_good().unwrap().as_deref(), Some(good.as_str()));
    });
    let git_ref = time(|| {
        let out = Command::new("git")
            .args([
                "-C",
                root.to_str().unwrap(),
                "rev-parse",
                "refs/hearth/good",
            ])
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), good);
    });
    // The fallback: no ref, and the good tick is the oldest commit.
    Command::new("git")
        .args([
            "-C",
            root.to_str().unwrap(),
            "update-ref",
            "-d",
            "refs/hearth/good",
        ])
        .status()
        .unwrap();
    let by_walk = time(|| {
        let repo = Repo::open(root).unwrap();
        assert_eq!(repo.last_good().unwrap().as_deref(), Some(good.as_str()));
    });
    let git_walk = time(|| {
        let out = Command::new("git")
            .args([
                "-C",
                root.to_str().unwrap(),
                "log",
                "-1",
                "--first-parent",
                "--format=%H",
                "--grep=^Hearth-Exit: 0$",
            ])
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), good);
    });
    println!("last good commit on a {COMMITS}-commit home (median of {RUNS}):");
    println!("  hearth, refs/hearth/good:       {:>9.3} ms", ms(by_ref));
    println!(
        "  git rev-parse (process):        {:>9.3} ms   ratio git/hearth {:.1}x",
        ms(git_ref),
        git_ref.as_secs_f64() / by_ref.as_secs_f64()
    );
    println!("  hearth, walk of trailers:       {:>9.3} ms", ms(by_walk));
    println!(
        "  git log --grep (process):       {:>9.3} ms   ratio git/hearth {:.1}x",
        ms(git_walk),
        git_walk.as_secs_f64() / by_walk.as_secs_f64()
    );
    println!(
        "  ref vs walk:                    {:.0}x faster",
        by_walk.as_secs_f64() / by_ref.as_secs_f64()
    );
}

/// A first-parent chain: the oldest tick exited 0, the other 99,999 failed.
fn build(root: &std::path::Path) -> String {
    let repo = git2::Repository::init(root).unwrap();
    let sig = git2::Signature::new(
        "hearth",
        "hearth@localhost",
        &git2::Time::new(1_700_000_000, 0),
    )
    .unwrap();
    let mut builder = repo.treebuilder(None).unwrap();
    let blob = repo.blob(b"{}\n").unwrap();
    builder.insert("ticks.jsonl", blob, 0o100644).unwrap();
    let tree = repo.find_tree(builder.write().unwrap()).unwrap();
    let mut parent: Option<git2::Oid> = None;
    let mut good = String::new();
    for n in 1..=COMMITS {
        let (exit, class) = if n == 1 { (0, "ok") } else { (137, "crash") };
        let message = format!(
            "tick {n}: exit {exit} ({class})\n\nHearth-Tick: {n}\nHearth-Exit: {exit}\nHearth-Class: {class}\n"
        );
        let parents: Vec<git2::Commit> = parent
            .iter()
            .map(|p| repo.find_commit(*p).unwrap())
            .collect();
        let refs: Vec<&git2::Commit> = parents.iter().collect();
        let oid = repo
            .commit(None, &sig, &sig, &message, &tree, &refs)
            .unwrap();
        if n == 1 {
            good = oid.to_string();
        }
        parent = Some(oid);
    }
    repo.reference("refs/heads/main", parent.unwrap(), true, "bench")
        .unwrap();
    repo.set_head("refs/heads/main").unwrap();
    repo.reference(
        "refs/hearth/good",
        git2::Oid::from_str(&good).unwrap(),
        true,
        "bench",
    )
    .unwrap();
    good
}

/// The median of `RUNS` calls.
fn time(f: impl FnMut()) -> Duration {
    common::percentile(&common::samples(RUNS, f), 50)
}
