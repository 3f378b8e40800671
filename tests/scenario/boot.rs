//! The boot and its audit through the library: what loads in full, as a
//! title or not at all, and what the audit calls drift
//! (`hearth::boot::boot`, `hearth::boot::drift::audit`). The binary's side
//! (`hearth context`, `audit --strict`'s exit, the tick's ledger and log)
//! stays in `e2e::boot`.

use hearth::boot::drift::{audit, DriftKind};
use hearth::config::BootConfig;
use hearth::home::Home;

use super::home;

fn memory(home: &Home, rel: &str, front: &str, body: &str) {
    let path = home.path(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, format!("---\n{front}\n---\n{body}")).unwrap();
}

/// The identity layer's block, as every tick sends it.
fn identity_block(home: &Home, config: &BootConfig) -> String {
    let boot = hearth::boot::boot(home, config);
    assert_eq!(boot.system.len(), 2);
    assert_eq!(boot.system[0].source, "memory/prompt.md");
    assert_eq!(boot.system[1].source, "memory/identity.md");
    boot.system[1].text.clone()
}

#[test]
fn thirty_identity_memories_load_in_full_and_two_near_misses_are_drift() {
    let dir = tempfile::tempdir().unwrap();
    let home = home(&dir);
    let config = BootConfig::default();
    // Removed on purpose (a removal only on the disk is drift: `Missing`).
    for args in [
        &["rm", "-q", "memory/core/values.md"][..],
        &[
            "-c",
            "user.name=op",
            "-c",
            "user.email=op@x",
            "commit",
            "-qm",
            "no values",
        ],
    ] {
        let git = std::process::Command::new("git")
            .arg("-C")
            .arg(home.root())
            .args(args)
            .status()
            .unwrap();
        assert!(git.success());
    }
    let mut tags = vec!["facet:identity"; 21];
    tags.extend(["identity"; 8]);
    tags.push("IDENTITY");
    for (i, tag) in tags.iter().enumerate() {
        memory(
            &home,
            &format!("memory/core/rule-{i:02}.md"),
            &format!("title: Rule {i}\ntags: [{tag}]"),
            &format!("# Rule {i}\n\nRULE-BODY-{i:02}: always do thing {i}.\n"),
        );
    }
    memory(
        &home,
        "memory/core/kit.md",
        "title: Kit rules\ntags: [kit-identity]",
        "KIT-BODY: never skip the kit.\n",
    );
    memory(
        &home,
        "memory/core/typo.md",
        "title: Typo rules\ntags: facet:identiy, style",
        "TYPO-BODY: mind the typo.\n",
    );

    let identity = identity_block(&home, &config);
    for i in 0..30 {
        assert!(
            identity.contains(&format!("RULE-BODY-{i:02}: always do thing {i}.")),
            "rule {i} in full"
        );
    }
    assert!(
        !identity.contains("KIT-BODY"),
        "a near-miss is not loaded in full"
    );
    assert!(!identity.contains("TYPO-BODY"));
    assert!(
        identity.contains("- Kit rules — memory/core/kit.md"),
        "{identity}"
    );
    assert!(
        identity.contains("- Typo rules — memory/core/typo.md"),
        "{identity}"
    );

    let found = audit(&home, &config);
    assert_eq!(found.rendered_full, 30);
    assert_eq!(found.rendered_as_titles, 2);
    let paths: Vec<&str> = found.drift.iter().map(|d| d.path.as_str()).collect();
    assert_eq!(paths, ["memory/core/kit.md", "memory/core/typo.md"]);
    assert!(found.drift.iter().all(|d| d.kind == DriftKind::NearMiss));
    assert!(found.drift[0].detail.contains("kit-identity"));

    // Fixed tags: no drift, and both load in full.
    memory(
        &home,
        "memory/core/kit.md",
        "title: Kit rules\ntags: [facet:identity]",
        "KIT-BODY: never skip the kit.\n",
    );
    memory(
        &home,
        "memory/core/typo.md",
        "title: Typo rules\ntags: Identity",
        "TYPO-BODY: mind the typo.\n",
    );
    assert!(audit(&home, &config).drift.is_empty());
    let identity = identity_block(&home, &config);
    assert!(identity.contains("KIT-BODY") && identity.contains("TYPO-BODY"));
}

#[test]
fn the_cap_marks_truncation_and_the_audit_calls_it_drift() {
    let dir = tempfile::tempdir().unwrap();
    let home = home(&dir);
    let config = BootConfig::default();
    let long = "x".repeat(6000);
    memory(
        &home,
        "memory/core/long.md",
        "tags: [identity]",
        &format!("START{long}END\n"),
    );
    let identity = identity_block(&home, &config);
    assert!(identity.contains("START"));
    assert!(!identity.contains("END"), "cut at 5000 characters");
    assert!(
        identity.contains("[… truncated: memory/core/long.md has 6008 characters and only the first 5000 are shown"),
        "{identity}"
    );
    let found = audit(&home, &config);
    assert_eq!(found.truncated, 1);
    assert_eq!(found.drift[0].kind, DriftKind::Truncated);
}

#[test]
fn over_budget_identity_memories_become_required_reads_and_the_foot_warns() {
    let dir = tempfile::tempdir().unwrap();
    let home = home(&dir);
    let config = BootConfig {
        identity_budget_chars: 1500,
        ..BootConfig::default()
    };
    std::fs::remove_file(home.path("memory/core/values.md")).unwrap();
    for name in ["a", "b", "c"] {
        memory(
            &home,
            &format!("memory/core/{name}.md"),
            "tags: [identity]",
            &format!("{}\n", name.repeat(450)),
        );
    }
    let boot = hearth::boot::boot(&home, &config);
    let identity = &boot.system[1].text;
    assert!(identity.contains(&"a".repeat(450)) && identity.contains(&"b".repeat(450)));
    assert!(!identity.contains(&"c".repeat(450)));
    assert!(
        identity.contains("memory/core/c.md (required read: it did not fit the identity budget)"),
        "{identity}"
    );
    let last = identity.trim_end().lines().last().unwrap();
    assert!(
        last.starts_with("Warning: the identity layer uses ")
            && last.contains("run `hearth audit`"),
        "{last}"
    );
    assert_eq!(boot.required_reads, ["memory/core/c.md"]);
    let found = audit(&home, &config);
    assert_eq!(found.required_reads, ["memory/core/c.md"]);
    assert_eq!(found.drift[0].kind, DriftKind::OverBudget);
}

#[test]
fn one_malformed_memory_among_a_hundred_is_named_and_the_rest_load() {
    let dir = tempfile::tempdir().unwrap();
    let home = home(&dir);
    let config = BootConfig::default();
    for i in 0..100 {
        let front = if i == 42 {
            "title: Broken\ntags: [identity\ncore: true".to_string()
        } else {
            format!("tags: [identity]\ntitle: M{i}")
        };
        memory(
            &home,
            &format!("memory/core/m{i:03}.md"),
            &front,
            &format!("BODY-{i:03}\n"),
        );
    }
    let identity = identity_block(&home, &config);
    let loaded = (0..100)
        .filter(|i| identity.contains(&format!("BODY-{i:03}")))
        .count();
    assert_eq!(loaded, 99);
    assert!(
        identity.contains("memory/core/m042.md (its front matter is broken at line"),
        "{identity}"
    );
    let found = audit(&home, &config);
    assert_eq!(found.problems[0].path, "memory/core/m042.md");
    assert!(
        (3..=5).contains(&found.problems[0].line),
        "{:?}",
        found.problems[0]
    );
    assert_eq!(found.drift[0].kind, DriftKind::Malformed);
}
