//! `hearth recall` end to end: blocks found by BM25, cited by lines and
//! commit; the index under a running supervisor. What recall finds as a
//! library (never stale, one bad file never hiding the others, a corrupt
//! index rebuilt) is pinned in `scenario::recall`.

#![allow(clippy::disallowed_methods)] // fixtures, not state

use crate::common::TestHome;
use serde_json::Value;

fn recall(home: &TestHome, query: &str) -> Value {
    serde_json::from_str(&home.ok(&["recall", "--json", "-k", "5", query])).unwrap()
}

#[test]
fn citations_hold_the_excerpt_at_the_cited_lines_and_commit_with_provenance() {
    let home = TestHome::new();
    home.ok(&["init"]);
    std::fs::create_dir_all(home.file("memory/notes")).unwrap();
    std::fs::write(
        home.file("memory/notes/jazz.md"),
        "# Jazz\n\nJohn Coltrane played the tenor saxophone.\nHe recorded A Love Supreme in 1964.\n\n- Miles Davis\n- Bill Evans\n",
    )
    .unwrap();
    home.ok(&["run", "--ticks", "1"]); // commits the hand edit as the operator

    let found = recall(&home, "Coltrane saxophone");
    let top = &found["results"][0];
    assert_eq!(top["path"], "memory/notes/jazz.md");
    assert_eq!(
        (top["start"].as_u64(), top["end"].as_u64()),
        (Some(3), Some(4))
    );
    assert_eq!(top["by"], "operator");
    let commit = top["commit"].as_str().unwrap();
    assert_eq!(
        top["citation"],
        format!("memory/notes/jazz.md:3-4@{commit}")
    );
    let lines: Vec<String> = home
        .read("memory/notes/jazz.md")
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(
        lines[2..4].join("\n"),
        top["excerpt"].as_str().unwrap(),
        "the cited lines hold the excerpt"
    );
    let at_commit = home.git(&["show", &format!("{commit}:memory/notes/jazz.md")]);
    assert!(String::from_utf8_lossy(&at_commit.stdout).contains("tenor saxophone"));
    assert_eq!(found["order"], "lexical");

    let text = home.ok(&["recall", "Coltrane"]);
    assert!(text.starts_with("(lexical)"), "{text}");
}

#[test]
fn hearth_index_reports_what_it_holds_and_rebuild_starts_from_scratch() {
    let home = TestHome::new();
    home.ok(&["init"]);
    std::fs::write(
        home.file("memory/n.md"),
        "# Otters\n\notters hold hands\n\nthey sleep afloat\n",
    )
    .unwrap();
    home.ok(&["run", "--ticks", "1"]);
    let head = String::from_utf8(home.git(&["rev-parse", "HEAD"]).stdout).unwrap();
    let first: Value = serde_json::from_str(&home.ok(&["index", "--json"])).unwrap();
    // Built when the supervisor started, before tick 1 committed the hand
    // edit it had already indexed: a commit of HEAD's history.
    let history = String::from_utf8(home.git(&["rev-list", "HEAD"]).stdout).unwrap();
    let reflected = first["index"]["commit"].as_str().unwrap();
    assert!(
        history.lines().any(|c| c == reflected),
        "the commit it reflects: {first}"
    );
    let blocks = first["index"]["blocks"].as_u64().unwrap();
    assert!(blocks >= 2, "{first}");
    let again: Value = serde_json::from_str(&home.ok(&["index", "--json"])).unwrap();
    assert_eq!(
        again["updated"]["indexed"], 0,
        "nothing changed: nothing re-indexed"
    );

    std::fs::write(home.file(".hearth/index/meta.json"), "garbage").unwrap();
    let rebuilt: Value = serde_json::from_str(&home.ok(&["index", "--rebuild", "--json"])).unwrap();
    assert_eq!(rebuilt["index"]["blocks"].as_u64().unwrap(), blocks);
    assert_eq!(rebuilt["updated"]["indexed"], first["index"]["files"]);
    let text = home.ok(&["index"]);
    assert!(
        text.contains(&format!("reflects: commit {}", &head[..7])),
        "{text}"
    );
    assert_eq!(recall(&home, "otters")["results"][0]["path"], "memory/n.md");
}

#[test]
fn conversation_archives_are_recalled_by_turn() {
    let home = TestHome::with_config("[context]\nhistory_tokens = 1000\n");
    for i in 0..12 {
        home.ok(&["say", &format!("note {i}: the capybara count is {}", i * 7)]);
        home.ok(&["run", "--ticks", "1"]);
    }
    let found = recall(&home, "capybara count");
    let paths: Vec<&str> = found["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["path"].as_str().unwrap())
        .collect();
    assert!(
        paths
            .iter()
            .any(|p| p.starts_with("state/archive/messages-") && p.contains("#turn-")),
        "{paths:?}"
    );
}

mod rerank;

#[test]
fn eight_concurrent_recalls_while_the_supervisor_ticks_all_succeed() {
    let home = TestHome::with_config("[tick]\ninterval_s = 3600\n");
    for i in 0..50 {
        std::fs::write(
            home.file(&format!("memory/n{i}.md")),
            format!("note {i} about the tern colony\n"),
        )
        .unwrap();
    }
    let supervisor = home.spawn(&["run"]);
    home.wait_for(std::time::Duration::from_secs(10), "tick 1", || {
        home.ticks().len() == 1
    });
    let writer = {
        let root = home.path.clone();
        std::thread::spawn(move || {
            for i in 0..40 {
                std::fs::write(
                    root.join(format!("memory/w{i}.md")),
                    format!("fresh tern sighting {i}\n"),
                )
                .unwrap();
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
        })
    };
    let children: Vec<_> = (0..8)
        .map(|_| {
            home.cmd(&["recall", "--json", "tern"])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let found: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert!(!found["results"].as_array().unwrap().is_empty());
    }
    writer.join().unwrap();
    home.ok(&["say", "tick again"]);
    home.wait_for(std::time::Duration::from_secs(10), "tick 2", || {
        home.ticks().len() == 2
    });
    assert!(crate::common::finish_after_term(supervisor).success());
}

#[test]
fn with_the_supervisor_up_edits_reach_the_index_within_a_second() {
    use std::time::{Duration, Instant};
    let home = TestHome::with_config("[tick]\ninterval_s = 3600\n");
    let supervisor = home.spawn(&["run"]);
    home.wait_for(Duration::from_secs(10), "tick 1", || {
        home.ticks().len() == 1
    });
    let indexed = |rel: &str| {
        std::fs::read_to_string(home.file(".hearth/index/files.json"))
            .is_ok_and(|m| m.contains(rel))
    };
    let within_a_second = |what: &str, check: &dyn Fn() -> bool| {
        let start = Instant::now();
        while !check() {
            assert!(
                start.elapsed() < Duration::from_secs(1),
                "{what} not indexed within 1 s\n{}",
                home.log()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    };

    // Written in place.
    std::fs::write(home.file("memory/fresh.md"), "the ibis returns\n").unwrap();
    within_a_second("an in-place write", &|| indexed("memory/fresh.md"));
    // Saved the way vim does: a new file renamed over the old one. (Only
    // the manifest is read: a `hearth recall` would catch up by itself.)
    let entry = |rel: &str| -> Value {
        let manifest: Value = serde_json::from_str(&home.read(".hearth/index/files.json")).unwrap();
        manifest["files"][rel].clone()
    };
    let before = entry("memory/fresh.md");
    std::fs::write(home.file("memory/.fresh.md.swp"), "the ibis leaves\n").unwrap();
    std::fs::rename(
        home.file("memory/.fresh.md.swp"),
        home.file("memory/fresh.md"),
    )
    .unwrap();
    within_a_second("a rename-save", &|| {
        let now = entry("memory/fresh.md");
        !now.is_null() && now["hash"] != before["hash"]
    });
    // Moved, its directory moved, then deleted.
    std::fs::create_dir_all(home.file("memory/birds")).unwrap();
    std::fs::rename(
        home.file("memory/fresh.md"),
        home.file("memory/birds/ibis.md"),
    )
    .unwrap();
    within_a_second("a move", &|| {
        indexed("memory/birds/ibis.md") && !indexed("memory/fresh.md")
    });
    std::fs::rename(home.file("memory/birds"), home.file("memory/fowl")).unwrap();
    within_a_second("a directory move", &|| {
        indexed("memory/fowl/ibis.md") && !indexed("memory/birds/ibis.md")
    });
    std::fs::remove_file(home.file("memory/fowl/ibis.md")).unwrap();
    within_a_second("a delete", &|| !indexed("memory/fowl/ibis.md"));
    let found = recall(&home, "ibis");
    assert!(found["results"].as_array().unwrap().is_empty(), "{found}");

    assert!(crate::common::finish_after_term(supervisor).success());
}

/// With a supervisor up, `hearth recall` takes the watcher's word that the
/// index is current instead of walking the memory — and is never stale for
/// it: each edit is found, and so is one made while no supervisor ran.
#[test]
fn recall_trusting_the_supervisors_watcher_still_finds_every_edit() {
    use std::time::Duration;
    let home = TestHome::with_config("[tick]\ninterval_s = 3600\n");
    let start = |home: &TestHome| {
        let supervisor = home.spawn(&["run"]);
        home.wait_for(Duration::from_secs(10), "the index marked current", || {
            home.file(".hearth/index/current.json").exists()
        });
        supervisor
    };
    let finds = |home: &TestHome, word: &str, rel: &str| {
        home.wait_for(Duration::from_secs(5), word, || {
            recall(home, word)["results"]
                .as_array()
                .unwrap()
                .iter()
                .any(|r| r["citation"].as_str().unwrap().starts_with(rel))
        });
    };
    let supervisor = start(&home);
    std::fs::write(home.file("memory/kite.md"), "the red kite circles\n").unwrap();
    finds(&home, "kite", "memory/kite.md");
    std::fs::create_dir_all(home.file("memory/raptors")).unwrap();
    std::fs::rename(
        home.file("memory/kite.md"),
        home.file("memory/raptors/kite.md"),
    )
    .unwrap();
    finds(&home, "kite", "memory/raptors/kite.md");
    assert!(crate::common::finish_after_term(supervisor).success());

    // Edited while nothing watched: the next supervisor vouches for
    // nothing until it has looked at everything.
    std::fs::write(home.file("memory/raptors/osprey.md"), "an osprey dives\n").unwrap();
    std::fs::remove_file(home.file("memory/raptors/kite.md")).unwrap();
    let supervisor = start(&home);
    finds(&home, "osprey", "memory/raptors/osprey.md");
    let kite = recall(&home, "kite");
    assert!(kite["results"].as_array().unwrap().is_empty(), "{kite}");
    assert!(crate::common::finish_after_term(supervisor).success());
}
