//! Tests of `tools/builtins.rs`.

#![allow(clippy::disallowed_methods)] // fixtures, not state

use super::*;
use crate::home::Home;
use crate::tools::Effects;
use chrono::DateTime;

/// A built-in's result as the model gets it: through the boundary.
fn dispatch(ctx: &mut ToolContext<'_>, name: &str, input: &Value) -> Result<String, ToolError> {
    crate::tools::dispatch(ctx, name, input)
}

fn setup() -> (tempfile::TempDir, Home) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("memory")).unwrap();
    std::fs::write(dir.path().join("hearth.toml"), "").unwrap();
    let home = Home::open(dir.path()).unwrap();
    (dir, home)
}

fn ctx(home: &Home) -> ToolContext<'_> {
    ToolContext {
        home,
        tick: 3,
        now: DateTime::from_timestamp(1_700_000_000, 0).unwrap(),
        max_sleep_h: 2,
        recall_results: 3,
        max_write_bytes: 1000,
        effects: Effects::default(),
        operator: Vec::new(),
        trust: Default::default(),
        environment: Default::default(),
        peering: Default::default(),
        workdir: Default::default(),
        write_ahead: None,
        mcp: Default::default(),
        taint: Default::default(),
        origins: crate::provenance::OriginJudge::open(home),
    }
}

#[test]
fn writes_past_max_write_bytes_are_refused_and_leave_nothing() {
    let (_d, home) = setup();
    let mut c = ctx(&home);
    let big = "x".repeat(1001);
    let err = dispatch(
        &mut c,
        "write",
        &json!({"path": "memory/big.md", "content": big}),
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("max_write_bytes"), "{err}");
    assert!(!home.root().join("memory/big.md").exists());
    let half = "y".repeat(600);
    dispatch(
        &mut c,
        "write",
        &json!({"path": "memory/a.md", "content": half}),
    )
    .unwrap();
    let err = dispatch(
        &mut c,
        "append",
        &json!({"path": "memory/a.md", "content": half}),
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("1200 bytes"), "the size it would reach: {err}");
    assert_eq!(
        std::fs::read_to_string(home.root().join("memory/a.md"))
            .unwrap()
            .len(),
        600
    );
}

#[test]
fn recall_finds_what_was_just_written_with_its_lines() {
    let (_d, home) = setup();
    let mut c = ctx(&home);
    let none = dispatch(&mut c, "recall", &json!({"query": "pelican"})).unwrap();
    assert!(none.starts_with("nothing relevant in memory for"), "{none}");
    dispatch(
        &mut c,
        "write",
        &json!({"path": "memory/birds.md", "content": "# Birds\n\nThe crow is clever.\n\nA pelican\nstole my sandwich.\n"}),
    )
    .unwrap();
    let out = dispatch(
        &mut c,
        "recall",
        &json!({"query": "pelicans sandwich", "k": 1}),
    )
    .unwrap();
    // As `hearth recall --no-rerank` prints it: the same citation.
    assert!(
        out.starts_with(
            "(lexical) 1 result(s) for \"pelicans sandwich\"\n\
             1. memory/birds.md:5-6@uncommitted  by uncommitted\n   A pelican\n   stole my sandwich."
        ),
        "{out}"
    );
    assert!(!out.contains("crow"), "k = 1 returns one block: {out}");
    let bad = dispatch(&mut c, "recall", &json!({"q": "x"})).unwrap_err();
    assert!(matches!(bad, ToolError::BadInput { .. }), "{bad:?}");
}

#[test]
fn write_append_edit_read_round_trip() {
    let (_d, home) = setup();
    let mut c = ctx(&home);
    dispatch(
        &mut c,
        "write",
        &json!({"path": "memory/a.md", "content": "one\n"}),
    )
    .unwrap();
    dispatch(
        &mut c,
        "append",
        &json!({"path": "memory/a.md", "content": "two\n"}),
    )
    .unwrap();
    dispatch(
        &mut c,
        "edit",
        &json!({"path": "memory/a.md", "old_string": "two", "new_string": "2"}),
    )
    .unwrap();
    let text = dispatch(&mut c, "read", &json!({"path": "memory/a.md"})).unwrap();
    assert_eq!(text, "one\n2\n");
    assert_eq!(c.effects.touched, vec!["memory/a.md".to_string()]);
}

#[test]
fn edit_needs_a_unique_match() {
    let (_d, home) = setup();
    let mut c = ctx(&home);
    dispatch(
        &mut c,
        "write",
        &json!({"path": "memory/a.md", "content": "x x"}),
    )
    .unwrap();
    let err = dispatch(
        &mut c,
        "edit",
        &json!({"path": "memory/a.md", "old_string": "x", "new_string": "y"}),
    )
    .unwrap_err();
    assert!(err.to_string().contains("2 times"), "{err}");
}

#[test]
fn unknown_tools_and_bad_arguments_are_told_apart() {
    let (_d, home) = setup();
    let mut c = ctx(&home);
    assert!(matches!(
        dispatch(&mut c, "rm", &json!({})),
        Err(ToolError::Unknown(_))
    ));
    assert!(matches!(
        dispatch(&mut c, "write", &json!({"path": 3})),
        Err(ToolError::BadInput { .. })
    ));
    assert!(matches!(
        dispatch(
            &mut c,
            "write",
            &json!({"path": "hearth.toml", "content": ""})
        ),
        Err(ToolError::Refused { .. })
    ));
}

#[test]
fn journal_and_send_and_sleep() {
    let (_d, home) = setup();
    let mut c = ctx(&home);
    dispatch(&mut c, "journal", &json!({"text": "learned a thing"})).unwrap();
    let day = std::fs::read_to_string(home.root().join("memory/journal/2023-11-14.md")).unwrap();
    assert!(day.starts_with("# 2023-11-14\n"));
    assert!(day.contains("tick 3\n\nlearned a thing\n"));
    let sent = dispatch(&mut c, "send", &json!({"subject": "hi", "body": "hello"})).unwrap();
    assert!(sent.starts_with("sent outbox/"));
    let out = dispatch(&mut c, "sleep", &json!({"minutes": 10_000})).unwrap();
    assert!(out.contains("capped"));
    assert_eq!(c.effects.sleep_until, Some(c.now + Duration::hours(2)));
}
