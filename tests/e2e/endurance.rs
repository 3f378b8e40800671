//! Months unattended: the history is packed as it grows and stays whole.

use crate::common::TestHome;

/// `git count-objects -v` as numbers.
fn count_objects(home: &TestHome) -> std::collections::HashMap<String, u64> {
    let out = home.git(&["count-objects", "-v"]);
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let (k, v) = l.split_once(": ")?;
            Some((k.to_string(), v.trim().parse().ok()?))
        })
        .collect()
}

#[test]
fn the_history_is_packed_as_it_grows_and_nothing_is_lost() {
    let home = TestHome::with_config("[git]\npack_loose = 40\npack_max_packs = 3\n");
    home.ok(&["init"]);
    let mut log = String::new();
    for n in 0..6 {
        std::fs::write(home.file(&format!("inbox/{n}.md")), format!("note {n}\n")).unwrap();
        std::fs::write(
            home.file("memory/journal.md"),
            format!("# Journal\n\nentry {n}\n"),
        )
        .unwrap();
        let out = home.ok_with_env(&["run", "--ticks", "15"], &[]);
        log.push_str(&String::from_utf8_lossy(&out.stderr));
    }
    assert!(log.contains("packed the history"), "{log}");
    assert!(log.contains("one full pack"), "past 3 packs, one: {log}");
    let counts = count_objects(&home);
    assert!(
        counts["count"] < 40 + 20,
        "loose objects are packed once 40 pile up: {counts:?}"
    );
    assert!(counts["packs"] <= 3, "{counts:?}");
    let fsck = home.git(&["fsck", "--strict", "--no-dangling"]);
    assert!(
        fsck.status.success(),
        "{}",
        String::from_utf8_lossy(&fsck.stderr)
    );
    // Every tick and every hand edit is still in the history, readable.
    assert_eq!(home.ticks().len(), 90);
    let commits = home.history();
    assert_eq!(
        commits
            .iter()
            .filter(|c| c.summary.starts_with("tick "))
            .count(),
        90
    );
    assert_eq!(
        commits
            .iter()
            .filter(|c| c.author == "operator" && c.files.iter().any(|f| f == "memory/journal.md"))
            .count(),
        6
    );
    let first = home.git(&["log", "--reverse", "--format=%H", "--", "memory/journal.md"]);
    let first = String::from_utf8_lossy(&first.stdout)
        .lines()
        .next()
        .unwrap()
        .to_string();
    let show = home.git(&["show", &format!("{first}:memory/journal.md")]);
    assert_eq!(
        String::from_utf8_lossy(&show.stdout),
        "# Journal\n\nentry 0\n"
    );
    assert!(home.git(&["status", "--porcelain"]).stdout.is_empty());
}

#[test]
fn a_clone_of_the_home_continues_with_the_next_tick_and_answers_nothing_twice() {
    let home = TestHome::with_config("");
    std::fs::write(
        home.file("memory/harbour.md"),
        "# Harbour\n\nThe harbour master is Ines.\n",
    )
    .unwrap();
    home.ok(&["say", "who runs the harbour?"]);
    home.ok(&["say", "and the lighthouse?"]);
    home.ok(&["run", "--ticks", "3"]);
    let answered = home.list("outbox").len();
    assert!(answered >= 1, "the first home answered");

    // Restore is one command: clone the history, run hearth on it.
    let copy = home.path.with_file_name("restored");
    let clone = std::process::Command::new("git")
        .args(["clone", "--quiet"])
        .arg(&home.path)
        .arg(&copy)
        .output()
        .unwrap();
    assert!(clone.status.success(), "{clone:?}");
    let restored = TestHome::at(&copy);
    restored.ok(&["run", "--ticks", "1"]);
    let ticks = restored.ticks();
    assert_eq!(ticks.last().unwrap()["tick"], 4, "numbering continues");
    assert!(
        ticks.last().unwrap().get("inbox").is_none(),
        "old messages are not answered again: {}",
        ticks.last().unwrap()
    );
    assert_eq!(restored.list("outbox").len(), answered, "no second answer");
    let found = restored.ok(&["recall", "--no-rerank", "harbour master"]);
    assert!(
        found.contains("memory/harbour.md:3"),
        "index rebuilt: {found}"
    );
    assert!(restored.git(&["status", "--porcelain"]).stdout.is_empty());
}
