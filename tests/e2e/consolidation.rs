//! Consolidation as a proposal, through real ticks: `hearth consolidate`,
//! an idle tick's consolidation exchange with a scripted model, the gates,
//! and the operator's review.

#![allow(clippy::disallowed_methods)] // fixtures, not state

use serde_json::{json, Value};

use crate::common::model_server::{anthropic, Answer, ModelServer};
use crate::common::TestHome;

const KEY: &str = "sk-ant-consolidation";

const IDENTITY: &str = "# Who I am\n\nI keep the Skerry lighthouse log.\nI answer in plain words.\n\
I work for Ada, who runs the station.\nI write one journal entry a day.\nI never guess at the weather.\n\
I ask before I delete anything.\nI keep a list of ships seen.\nI note the lamp's hours.\n";

fn calls(list: &[(&str, Value)]) -> Answer {
    let ids: Vec<String> = (0..list.len()).map(|i| format!("c{i}")).collect();
    let args: Vec<String> = list.iter().map(|(_, v)| v.to_string()).collect();
    let arg_refs: Vec<[&str; 1]> = args.iter().map(|a| [a.as_str()]).collect();
    let tools: Vec<(&str, &str, &[&str])> = list
        .iter()
        .enumerate()
        .map(|(i, (name, _))| (ids[i].as_str(), *name, &arg_refs[i][..]))
        .collect();
    Answer::Stream {
        events: anthropic::message("", &tools, 10, 1),
        hang: None,
    }
}

fn text(t: &str) -> Answer {
    Answer::Stream {
        events: anthropic::message(t, &[], 10, 1),
        hang: None,
    }
}

/// A home whose identity the operator wrote and whose two core memories
/// the agent wrote in tick 1; `then` is the model's script after that.
fn home_with(then: Vec<Answer>, extra: &str) -> (ModelServer, TestHome) {
    let mut script = vec![
        calls(&[
            (
                "write",
                json!({"path": "memory/core/tea.md", "content": "# Tea\n\nTea at four.\n"}),
            ),
            (
                "write",
                json!({"path": "memory/core/tea-time.md", "content": "# Tea time\n\nTea at four, always with Ada.\n"}),
            ),
        ]),
        text("Noted."),
    ];
    script.extend(then);
    let server = ModelServer::start(script);
    let home = TestHome::with_config(&format!(
        "[model]\nprovider = \"anthropic\"\nmodel = \"claude-test\"\nbase_url = \"{}\"\n\
         max_retries = 0\n[budget]\ndaily_usd = 0\n{extra}",
        server.url
    ));
    std::fs::write(home.file("memory/identity.md"), IDENTITY).unwrap();
    home.git(&["add", "-A"]);
    home.git(&["commit", "-qm", "the operator's identity"]);
    home.ok(&["say", "Remember tea."]);
    tick(&home);
    assert!(home.read("memory/core/tea.md").contains("Tea at four."));
    home.ok(&["consolidate"]);
    (server, home)
}

fn tick(home: &TestHome) {
    home.run_here(1, Some(KEY));
}

fn on_main(home: &TestHome, rel: &str) -> Option<String> {
    let out = home.git(&["show", &format!("HEAD:{rel}")]);
    out.status
        .success()
        .then(|| String::from_utf8(out.stdout).unwrap())
}

#[test]
fn a_merge_of_two_agent_memories_is_offered_shown_and_accepted() {
    let (server, home) = home_with(
        vec![
            calls(&[
                (
                    "write",
                    json!({"path": "memory/core/tea.md", "content": "# Tea\n\nTea at four, always with Ada.\n"}),
                ),
                (
                    "write",
                    json!({"path": "memory/core/tea-time.md", "content": ""}),
                ),
                (
                    "removed",
                    json!({"path": "memory/core/tea-time.md", "where": "merged into memory/core/tea.md"}),
                ),
                (
                    "removed",
                    json!({"path": "memory/core/tea.md", "where": "the line now says it all"}),
                ),
            ]),
            text("Merged the two tea memories into one."),
        ],
        "",
    );
    let head = home.git(&["rev-parse", "HEAD"]).stdout;
    tick(&home);
    let record = home.ticks().pop().unwrap();
    assert_eq!(record["consolidation"], "proposed 1", "{record}");
    assert_eq!(record["class"], "ok");
    // The model saw the operator's lines marked, and tools that only stage.
    let asked = server.received()[2].body.to_string();
    assert!(
        asked.contains("[operator] I keep the Skerry lighthouse log."),
        "{asked}"
    );
    assert!(
        !asked.contains("[operator] Tea at four."),
        "the agent's lines are not marked"
    );
    let tools = &server.received()[2].body["tools"];
    let names: Vec<&str> = tools
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["read", "write", "append", "edit", "removed"]);
    // Nothing on main moved but the tick's own commit.
    assert_eq!(
        home.read("memory/core/tea-time.md"),
        "# Tea time\n\nTea at four, always with Ada.\n"
    );
    assert_ne!(home.git(&["rev-parse", "HEAD"]).stdout, head);
    assert!(on_main(&home, "memory/core/tea-time.md").is_some());

    let shown = home.ok(&["proposals", "show", "1"]);
    assert!(shown.contains("memory/core/tea-time.md  +0 -3"), "{shown}");
    assert!(
        shown.contains("tick 1 in"),
        "removed lines name the tick that wrote them:\n{shown}"
    );
    assert!(shown.contains("merged into memory/core/tea.md"), "{shown}");

    home.ok(&["proposals", "accept", "1"]);
    assert_eq!(
        on_main(&home, "memory/core/tea.md").unwrap(),
        "# Tea\n\nTea at four, always with Ada.\n"
    );
    assert!(on_main(&home, "memory/core/tea-time.md").is_none());
    assert!(!home.file("memory/core/tea-time.md").exists());
    let log = String::from_utf8(home.git(&["log", "--all", "--format=%s"]).stdout).unwrap();
    assert!(
        log.contains("proposal 1: consolidate identity memory"),
        "{log}"
    );
    assert!(
        log.contains("proposal 1 accepted: consolidate identity memory"),
        "{log}"
    );
}

#[test]
fn a_consolidation_that_deletes_an_operators_line_is_refused_at_the_gate() {
    let (_server, home) = home_with(
        vec![
            calls(&[
                (
                    "edit",
                    json!({"path": "memory/identity.md", "old_string": "I never guess at the weather.\n", "new_string": ""}),
                ),
                (
                    "removed",
                    json!({"path": "memory/identity.md", "where": "obvious"}),
                ),
            ]),
            text("Dropped a redundant line."),
        ],
        "",
    );
    tick(&home);
    let record = home.ticks().pop().unwrap();
    let outcome = record["consolidation"].as_str().unwrap();
    assert!(
        outcome.starts_with("refused:") && outcome.contains("\"I never guess at the weather.\""),
        "{outcome}"
    );
    assert_eq!(on_main(&home, "memory/identity.md").unwrap(), IDENTITY);
    assert!(home.ok(&["proposals"]).contains("no proposals"));
    let flare = home
        .list("outbox")
        .into_iter()
        .find(|f| f.contains("flare-consolidation"))
        .expect("a consolidation flare");
    assert!(home
        .read(&format!("outbox/{flare}"))
        .contains("the operator's line"));
    // It was asked for once: the next idle tick is an ordinary one.
    tick(&home);
    assert!(home.ticks().pop().unwrap().get("consolidation").is_none());
}

#[test]
fn nothing_to_change_is_recorded_and_an_additions_only_move_is_accepted_when_allowed() {
    let (_server, home) = home_with(vec![text("All of it is needed; nothing to change.")], "");
    tick(&home);
    assert_eq!(
        home.ticks().pop().unwrap()["consolidation"],
        "nothing to change"
    );
    assert!(home
        .ok(&["proposals", "--all"])
        .contains("none were ever made"));

    let (_server, home) = home_with(
        vec![
            calls(&[
                (
                    "write",
                    json!({"path": "memory/core/tea.md", "content": "# Tea\n"}),
                ),
                (
                    "write",
                    json!({"path": "memory/notes/tea.md", "content": "Tea at four.\n"}),
                ),
                (
                    "removed",
                    json!({"path": "memory/core/tea.md", "where": "memory/notes/tea.md"}),
                ),
            ]),
            text("Moved the tea detail out of the core."),
        ],
        "[consolidation]\nauto_accept = \"additions\"\n",
    );
    tick(&home);
    let outcome = home.ticks().pop().unwrap()["consolidation"].clone();
    assert!(
        outcome
            .as_str()
            .unwrap()
            .starts_with("proposed 1 and accepted it"),
        "{outcome}"
    );
    assert_eq!(on_main(&home, "memory/core/tea.md").unwrap(), "# Tea\n");
    assert_eq!(
        on_main(&home, "memory/notes/tea.md").unwrap(),
        "Tea at four.\n"
    );
}

#[test]
fn accepting_after_main_moved_re_applies_and_a_conflicting_one_needs_review() {
    let merge = |content: &str| {
        calls(&[
            (
                "write",
                json!({"path": "memory/core/tea.md", "content": content}),
            ),
            (
                "removed",
                json!({"path": "memory/core/tea.md", "where": "reworded in place"}),
            ),
        ])
    };
    let (_server, home) = home_with(
        vec![
            merge("# Tea\n\nTea at four sharp.\n"),
            text("Tightened the tea memory."),
            merge("# Tea\n\nTea at half past four.\n"),
            text("Moved tea time."),
        ],
        "",
    );
    tick(&home);
    assert_eq!(home.ticks().pop().unwrap()["consolidation"], "proposed 1");
    // The operator changes main meanwhile, elsewhere.
    std::fs::write(
        home.file("memory/identity.md"),
        IDENTITY.replace(
            "I note the lamp's hours.",
            "I note the lamp's hours and its oil.",
        ),
    )
    .unwrap();
    home.git(&["commit", "-qam", "lamp oil"]);
    let said = home.ok(&["proposals", "accept", "1"]);
    assert!(said.starts_with("proposal 1 accepted"), "{said}");
    assert!(on_main(&home, "memory/core/tea.md")
        .unwrap()
        .contains("four sharp"));
    assert!(on_main(&home, "memory/identity.md")
        .unwrap()
        .contains("and its oil"));

    // A second consolidation; the operator edits the same line before
    // accepting it.
    home.ok(&["consolidate"]);
    tick(&home);
    assert_eq!(home.ticks().pop().unwrap()["consolidation"], "proposed 2");
    std::fs::write(home.file("memory/core/tea.md"), "# Tea\n\nTea at five.\n").unwrap();
    home.git(&["commit", "-qam", "tea at five"]);
    let out = home.output(&["proposals", "accept", "2"]);
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(
        said.contains("needs review") && said.contains("memory/core/tea.md"),
        "{said}"
    );
    assert_eq!(
        on_main(&home, "memory/core/tea.md").unwrap(),
        "# Tea\n\nTea at five.\n"
    );
    assert!(home.ok(&["proposals"]).contains("needs-review"));
}
