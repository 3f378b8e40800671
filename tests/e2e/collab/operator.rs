//! The operator's side: founding, listing, moving a collaboration through
//! its lifecycle, what is refused, a record broken by hand, recall.

#![allow(clippy::disallowed_methods)] // fixtures, not state

use super::*;

#[test]
fn the_operator_founds_lists_and_moves_a_collaboration_through_its_lifecycle() {
    let w1 = tempfile::tempdir().unwrap();
    let home = home_with_peers(w1.path());
    let w1 = w1.path().to_str().unwrap();

    let out = home.ok(&[
        "collab",
        "new",
        "Design X",
        "--workdir",
        w1,
        "--with",
        "bob",
        "--founded-by",
        "memory/identity.md",
    ]);
    assert_eq!(out.trim(), "collaborations/design-x.md");
    let last = &home.history()[0];
    assert_eq!(last.summary, "collab: new design-x (Design X)");
    assert_eq!(last.author, "operator");
    assert_eq!(last.files, vec!["collaborations/design-x.md".to_string()]);

    let listed = json(&home, &["collab", "list", "--json"]);
    assert_eq!(listed.as_array().unwrap().len(), 1, "{listed}");
    assert_eq!(listed[0]["slug"], "design-x");
    assert_eq!(listed[0]["status"], "active");
    assert_eq!(listed[0]["rounds"], 0);
    assert_eq!(listed[0]["workdir"], w1);
    assert_eq!(
        listed[0]["participants"],
        serde_json::json!(["agent", "bob"])
    );

    home.ok(&[
        "collab",
        "pause",
        "design-x",
        "--reason",
        "waiting for legal",
    ]);
    let paused = json(&home, &["collab", "list", "--status", "paused", "--json"]);
    assert_eq!(paused[0]["slug"], "design-x");
    assert!(
        json(&home, &["collab", "list", "--status", "active", "--json"])
            .as_array()
            .unwrap()
            .is_empty()
    );
    let again = home.output(&["collab", "pause", "design-x"]);
    assert_eq!(again.status.code(), Some(2));
    let err = String::from_utf8_lossy(&again.stderr);
    assert!(
        err.contains("design-x is paused: it cannot be paused"),
        "{err}"
    );

    home.ok(&["collab", "rename", "design-x", "Design X, final"]);
    home.ok(&["collab", "complete", "design-x"]);
    home.ok(&["collab", "reopen", "design-x"]);
    home.ok(&["collab", "abandon", "design-x", "--reason", "superseded"]);
    let shown = json(&home, &["collab", "show", "design-x", "--json"]);
    assert_eq!(shown["name"], "Design X, final");
    assert_eq!(shown["status"], "abandoned");
    assert_eq!(shown["founded_by"], "memory/identity.md");
    let events: Vec<(String, String)> = shown["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["what"].as_str().unwrap().to_string(),
                e["note"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    assert_eq!(
        events,
        [
            ("new", ""),
            ("pause", "waiting for legal"),
            ("rename", "Design X → Design X, final"),
            ("complete", ""),
            ("reopen", ""),
            ("abandon", "superseded"),
        ]
        .map(|(a, b)| (a.to_string(), b.to_string()))
    );
    // Each change is a commit of its own, and the record reads for a person.
    let summaries: Vec<String> = home.history().iter().map(|c| c.summary.clone()).collect();
    assert_eq!(
        summaries[..6],
        [
            "collab: abandon (design-x)",
            "collab: reopen (design-x)",
            "collab: complete (design-x)",
            "collab: rename to Design X, final (design-x)",
            "collab: pause (design-x)",
            "collab: new design-x (Design X)",
        ]
    );
    let text = home.read("collaborations/design-x.md");
    assert!(text.contains("# Design X, final\n"), "{text}");
    assert!(text.contains("operator: abandon (superseded)"), "{text}");
    let human = home.ok(&["collab", "show", "design-x"]);
    assert!(human.contains("status:       abandoned"), "{human}");
    assert!(home
        .git(&["status", "--porcelain", "collaborations"])
        .stdout
        .is_empty());
}

#[test]
fn what_the_operator_may_not_do_is_refused_with_the_fix() {
    let w1 = tempfile::tempdir().unwrap();
    let home = home_with_peers(w1.path());
    let refused = |args: &[&str], says: &str| {
        let out = home.output(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        assert!(err.contains(says), "{args:?}: {err}");
    };
    refused(
        &["collab", "new", "X", "--workdir", "/srv/elsewhere"],
        "is not one of [collaborations] workdirs",
    );
    refused(
        &["collab", "new", "X", "--with", "carol"],
        "\"carol\" is not one of this home's [peers]",
    );
    refused(
        &["collab", "new", "X", "--founded-by", "hearth.toml"],
        "no such memory in this home",
    );
    refused(
        &["collab", "new", "X", "--slug", "Bad Slug"],
        "not a collaboration slug",
    );
    refused(&["collab", "show", "nope"], "no collaboration \"nope\"");
    refused(&["collab", "list", "--status", "open"], "is not a status");
    home.ok(&["collab", "new", "X"]);
    refused(&["collab", "new", "X"], "exists already");
    assert_eq!(home.list("collaborations"), vec!["x.md"]);

    // A hearth.toml broken meanwhile does not hide the records.
    std::fs::write(
        home.file("hearth.toml"),
        format!(
            "{}\n[tick]\ninterval_s = \"soon\"\n",
            home.read("hearth.toml")
        ),
    )
    .unwrap();
    let out = home.output(&["collab", "show", "x"]);
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("hearth.toml") && err.contains("not looked up"),
        "{err}"
    );
}

#[test]
fn a_record_broken_by_hand_is_named_and_the_others_still_list() {
    let w1 = tempfile::tempdir().unwrap();
    let home = home_with_peers(w1.path());
    home.ok(&["collab", "new", "Alpha"]);
    home.ok(&["collab", "new", "Beta"]);
    std::fs::write(home.file("collaborations/beta.md"), "---\nslug: [\n---\n").unwrap();
    let out = home.output(&["collab", "list", "--json"]);
    assert!(out.status.success());
    let listed: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(listed.as_array().unwrap().len(), 1, "{listed}");
    assert_eq!(listed[0]["slug"], "alpha");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("collaborations/beta.md") && err.contains("not YAML"),
        "{err}"
    );
    let status = home.ok(&["status"]);
    assert!(
        status.contains("problem:    ") && status.contains("collaborations/beta.md"),
        "{status}"
    );
    let out = home.output(&["collab", "show", "beta"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("collaborations/beta.md:3: ")
            && err.contains("hint: ")
            && err.contains("collaborations checkout -- beta.md`"),
        "{err}"
    );
}

#[test]
fn recall_finds_collaboration_records_with_or_without_a_supervisor() {
    use std::time::Duration;
    let w1 = tempfile::tempdir().unwrap();
    let home = home_with_peers(w1.path());
    home.ok(&["collab", "new", "Lighthouse rota", "--with", "bob"]);
    let found = cited(&home, "lighthouse rota");
    assert!(
        found
            .iter()
            .any(|c| c.starts_with("collaborations/lighthouse-rota.md:")),
        "{found:?}"
    );

    // A supervisor vouches for the index only while its watcher sees every
    // change: a record made while it runs must be found too.
    hourly(&home);
    let supervisor = home.spawn(&["run"]);
    home.wait_for(Duration::from_secs(10), "the index marked current", || {
        home.file(".hearth/index/current.json").exists()
    });
    home.ok(&["collab", "new", "Tide tables", "--with", "bob"]);
    home.wait_for(Duration::from_secs(5), "the new record in recall", || {
        cited(&home, "tide tables")
            .iter()
            .any(|c| c.starts_with("collaborations/tide-tables.md:"))
    });
    assert!(crate::common::finish_after_term(supervisor).success());
}
