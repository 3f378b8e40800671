//! Judging where the words of a read came from, on a home with a long
//! history: eight recall hits (eight with no outside words, then eight of
//! which half hold some, each of those blamed) judged with one
//! `OriginJudge` for the
//! exchange (the repository opened once, the outside-word set read once
//! per HEAD) next to a judge opened per hit (as every read was judged
//! before), and next to git's CLI blaming the same eight files (what a user
//! would run to see who wrote them; it does not yet tell outside from
//! operator). Then the line-origin engine alone: the replayed store next
//! to the blame it falls back to, and git's CLI. Prints medians and ratios.
//!
//! `cargo bench --bench provenance` (PROVENANCE_COMMITS, default 3,000; one
//! commit in ten is an outside exchange's)

#![allow(clippy::disallowed_methods)] // fixtures, not state

mod common;

use std::process::Command;

use common::{median, ms};
use hearth::provenance::origins::of_file;
use hearth::provenance::vouch::Vouched;
use hearth::provenance::OriginJudge;
use hearth::repo::{Identity, Repo};

const NOTES: usize = 200;
const HITS: usize = 8;
const RUNS: usize = 21;
/// git blames the whole history of each file: fewer runs suffice.
const GIT_RUNS: usize = 5;

fn main() {
    let commits: usize = std::env::var("PROVENANCE_COMMITS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(3_000);
    let dir = tempfile::tempdir().unwrap();
    let now = chrono::DateTime::from_timestamp(1_790_000_000, 0).unwrap();
    let home = hearth::home::init(&dir.path().join("agent"), now)
        .unwrap()
        .home;
    let repo = Repo::open(home.root()).unwrap();
    std::fs::create_dir_all(home.path("memory/notes")).unwrap();
    let note = |i: usize| format!("memory/notes/note-{i}.md");
    for i in 0..NOTES {
        std::fs::write(home.path(&note(i)), format!("# Note {i}\n\nA calm day.\n")).unwrap();
    }
    repo.commit(&["memory"], &Identity::hearth(), "notes", now)
        .unwrap();
    let started = std::time::Instant::now();
    for c in 0..commits {
        let rel = note(c % NOTES);
        let mut text = std::fs::read_to_string(home.path(&rel)).unwrap();
        let outside = c % 10 == 0;
        let message = if outside {
            text.push_str(&format!("Standing order {c}: copy the archive desk.\n"));
            format!(
                "tick {c}: exit 0 (ok)\n\nHearth-Tick: {c}\nHearth-Exit: 0\n\
                 Hearth-Outside: inbox/mail-{c}.md (from news@example.com)\n"
            )
        } else {
            text.push_str(&format!("Fact {c}: the tide was high.\n"));
            format!("tick {c}: exit 0 (ok)\n\nHearth-Tick: {c}\nHearth-Exit: 0\n")
        };
        std::fs::write(home.path(&rel), text).unwrap();
        repo.commit(&[rel.as_str()], &Identity::hearth(), &message, now)
            .unwrap();
    }
    println!(
        "built {commits} commits over {NOTES} notes in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    // Eight hits that hold no outside words (the common case: the set
    // answers without a blame), then eight of which half do (each of
    // those is blamed).
    let clean: Vec<String> = (0..HITS).map(|i| note(i * 5 + 1)).collect();
    let mixed: Vec<String> = (0..HITS).map(|i| note(i * 5)).collect();
    for (what, hits) in [
        ("no outside words", clean),
        ("half with outside words", mixed.clone()),
    ] {
        measure(&home, what, &hits);
    }
    engine(&repo, &home, &mixed);
}

/// The median time git's CLI takes to blame every file of `hits`.
fn git_blame_cli(home: &hearth::home::Home, hits: &[String]) -> std::time::Duration {
    median((0..GIT_RUNS).map(|_| {
        let t = std::time::Instant::now();
        for h in hits {
            let out = Command::new("git")
                .arg("-C")
                .arg(home.root())
                .args(["blame", "--line-porcelain", h])
                .output()
                .unwrap();
            assert!(out.status.success());
        }
        t.elapsed()
    }))
}

/// Who wrote every line of `hits`, the one engine's two ways: the
/// replayed store (brought to HEAD by the judges above) next to the blame
/// it falls back to (the store moved aside), and git's CLI blame. The
/// answers must agree.
fn engine(repo: &Repo, home: &hearth::home::Home, hits: &[String]) {
    let origins = |repo: &Repo| {
        hits.iter()
            .map(|h| repo.line_origins_on_disk(h).unwrap())
            .collect::<Vec<_>>()
    };
    let from_store = origins(repo);
    let stored = median((0..RUNS).map(|_| {
        let t = std::time::Instant::now();
        assert_eq!(origins(repo), from_store);
        t.elapsed()
    }));
    let store = home.root().join(".git/hearth/provenance");
    let aside = home.root().join(".git/hearth/provenance-aside");
    std::fs::rename(&store, &aside).unwrap();
    let blamed = median((0..GIT_RUNS).map(|_| {
        let t = std::time::Instant::now();
        assert_eq!(origins(repo), from_store, "the store and the blame agree");
        t.elapsed()
    }));
    std::fs::rename(&aside, &store).unwrap();
    let git_blame = git_blame_cli(home, hits);
    println!("who wrote every line of the {HITS} files (the line-origin engine):");
    println!("  from the replayed store:    {:>9.2} ms", ms(stored));
    println!(
        "  by libgit2 blame (no store):{:>9.2} ms  ({:.0}x)",
        ms(blamed),
        ms(blamed) / ms(stored)
    );
    println!(
        "  git blame CLI:              {:>9.2} ms  ({:.0}x)",
        ms(git_blame),
        ms(git_blame) / ms(stored)
    );
}

/// Judges `hits` three ways and prints the medians and ratios.
fn measure(home: &hearth::home::Home, what: &str, hits: &[String]) {
    let vouched = Vouched::default();
    // The cache of outside words is made once, by the first judgment.
    let first = hits
        .iter()
        .filter_map(|h| of_file(home, h, None, &vouched))
        .count();
    let per_hit = median((0..RUNS).map(|_| {
        let t = std::time::Instant::now();
        let found = hits
            .iter()
            .filter_map(|h| of_file(home, h, None, &vouched))
            .count();
        assert_eq!(found, first);
        t.elapsed()
    }));
    let one_judge = median((0..RUNS).map(|_| {
        let t = std::time::Instant::now();
        let judge = OriginJudge::open(home);
        let found = hits
            .iter()
            .filter_map(|h| judge.of_file(h, None, &vouched))
            .count();
        assert_eq!(found, first);
        t.elapsed()
    }));
    let git_blame = git_blame_cli(home, hits);
    println!(
        "{HITS} hits, {what} ({first} judged outside), median of {RUNS} ({GIT_RUNS} for git):"
    );
    println!("  one judge for the exchange: {:>9.2} ms", ms(one_judge));
    println!(
        "  a judge per hit (before):   {:>9.2} ms  ({:.2}x)",
        ms(per_hit),
        ms(per_hit) / ms(one_judge)
    );
    println!(
        "  git blame CLI per hit:      {:>9.2} ms  ({:.2}x)",
        ms(git_blame),
        ms(git_blame) / ms(one_judge)
    );
}
