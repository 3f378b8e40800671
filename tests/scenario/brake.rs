//! The brake's decisions over a conversation, on a real home: a write
//! waits for the read of what is required *as it is now*, the decision is
//! logged, and the operator's override opens the gate for a counted
//! number of ticks (`hearth::brake::gate`).

use serde_json::json;

use hearth::brake::gate::Gate;
use hearth::brake::Ruling;
use hearth::config::{BrakeMode, Config};
use hearth::conversation::{Block, Message, Role};
use hearth::home::Home;
use hearth::tools::{self, ToolContext};

use super::{home, now};

const RULES: &str =
    "---\ntitle: House rules\nmust_read: true\n---\n# House rules\n\nNever delete the journal.\n";
const REQUIRED: &str = "memory/core/rules.md";

fn setup() -> (tempfile::TempDir, Home) {
    let dir = tempfile::tempdir().unwrap();
    let home = home(&dir);
    std::fs::write(home.path(REQUIRED), RULES).unwrap();
    (dir, home)
}

/// The turns of a `read` of `path` as the agent's own tool answers it now.
fn read_turns(home: &Home, path: &str) -> Vec<Message> {
    let config = Config::default();
    let mut ctx = ToolContext::new(home, &config, 1, now(), Vec::new(), Default::default());
    let returned = tools::dispatch(&mut ctx, "read", &json!({"path": path})).unwrap();
    vec![
        Message {
            outside: hearth::outside::Outside::none(),
            role: Role::Assistant,
            content: vec![Block::ToolUse {
                id: "r1".into(),
                name: "read".into(),
                input: json!({"path": path}),
            }],
        },
        Message {
            outside: hearth::outside::Outside::none(),
            role: Role::User,
            content: vec![Block::ToolResult {
                tool_use_id: "r1".into(),
                content: returned,
                is_error: false,
            }],
        },
    ]
}

fn same(p: &str) -> Option<String> {
    Some(p.trim_start_matches("./").to_string())
}

fn decisions(home: &Home) -> Vec<String> {
    hearth::brake::log::read(home)
        .0
        .into_iter()
        .map(|l| format!("{} {}", l.decision, l.tool))
        .collect()
}

#[test]
fn a_write_waits_for_the_read_of_the_file_as_it_is_now() {
    let (_d, home) = setup();
    let gate = Gate::open_for(&home, BrakeMode::Enforce, vec![REQUIRED.into()], 1, now());
    let denied = gate.check(&home, "write", "memory/note.md", true, &[], same);
    assert!(
        matches!(denied, Ruling::Deny(ref w) if w[0].path == REQUIRED),
        "{denied:?}"
    );
    assert_eq!(
        gate.check(&home, "read", REQUIRED, false, &[], same),
        Ruling::Pass,
        "reading is never braked"
    );

    let mut convo = read_turns(&home, REQUIRED);
    assert_eq!(
        gate.check(&home, "write", "memory/note.md", true, &convo, same),
        Ruling::Allow
    );

    // The operator edits the rules: the old read no longer counts.
    std::fs::write(
        home.path(REQUIRED),
        format!("{RULES}Also: water the plants.\n"),
    )
    .unwrap();
    assert!(matches!(
        gate.check(&home, "write", "memory/note.md", true, &convo, same),
        Ruling::Deny(_)
    ));
    convo.extend(read_turns(&home, REQUIRED));
    assert_eq!(
        gate.check(&home, "edit", "memory/note.md", true, &convo, same),
        Ruling::Allow
    );
    assert_eq!(
        decisions(&home),
        ["deny write", "allow write", "deny write", "allow edit"]
    );
}

#[test]
fn warn_logs_what_it_would_refuse_and_a_missing_file_is_named_as_missing() {
    let (_d, home) = setup();
    let gate = Gate::open_for(
        &home,
        BrakeMode::Warn,
        vec![REQUIRED.into(), "memory/core/gone.md".into()],
        1,
        now(),
    );
    let convo = read_turns(&home, REQUIRED);
    let Ruling::WouldDeny(waiting) = gate.check(&home, "append", "memory/x.md", true, &convo, same)
    else {
        panic!("warn runs the call and logs it");
    };
    assert_eq!(waiting.len(), 1);
    assert_eq!(waiting[0].path, "memory/core/gone.md");
    assert!(waiting[0].missing);
    assert_eq!(decisions(&home), ["would-deny append"]);
    let off = Gate::open_for(&home, BrakeMode::Off, vec![REQUIRED.into()], 1, now());
    assert_eq!(
        off.check(&home, "write", "memory/x.md", true, &[], same),
        Ruling::Pass
    );
}

#[test]
fn the_operators_override_opens_the_gate_for_the_ticks_it_was_given() {
    let (_d, home) = setup();
    hearth::brake::status::grant_override(&home, 1, "the rules file is being rewritten", now())
        .unwrap();
    let first = Gate::open_for(&home, BrakeMode::Enforce, vec![REQUIRED.into()], 1, now());
    assert!(matches!(
        first.check(&home, "write", "memory/note.md", true, &[], same),
        Ruling::Override(_)
    ));
    let second = Gate::open_for(&home, BrakeMode::Enforce, vec![REQUIRED.into()], 2, now());
    assert!(
        matches!(
            second.check(&home, "write", "memory/note.md", true, &[], same),
            Ruling::Deny(_)
        ),
        "one tick of override, used up"
    );
    // An ask neither uses one up nor passes through one.
    hearth::brake::status::grant_override(&home, 1, "again", now()).unwrap();
    let ask = Gate::without_override(BrakeMode::Enforce, vec![REQUIRED.into()], 0, now());
    assert!(matches!(
        ask.check(&home, "write", "memory/note.md", true, &[], same),
        Ruling::Deny(_)
    ));
    let tick = Gate::open_for(&home, BrakeMode::Enforce, vec![REQUIRED.into()], 3, now());
    assert!(matches!(
        tick.check(&home, "write", "memory/note.md", true, &[], same),
        Ruling::Override(_)
    ));
}
