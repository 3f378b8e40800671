//! Who says a collaboration may start here: by default a peer's first
//! handoff of a collaboration new here waits as a request the operator
//! approves or declines (`hearth proposals`), at most one new request a
//! day from each peer; `[collaborations] founding = "open"` takes it at
//! once, as before.

#![allow(clippy::disallowed_methods)] // fixtures, not state

use serde_json::Value;

use super::*;
use crate::common::model_server::{anthropic, Answer, ModelServer};

/// Alice's model: "Start design x" (or y) founds it with bob.
fn founds(body: &Value) -> Answer {
    let last = body["messages"]
        .as_array()
        .and_then(|m| m.last())
        .map(|m| m.to_string())
        .unwrap_or_default();
    let events = match ["x", "y"]
        .iter()
        .find(|k| last.contains(&format!("Start design {k}")))
    {
        Some(k) if !last.contains("tool_result") => {
            let args = serde_json::json!({
                "to": "bob", "message": format!("Draft one of {k}."),
                "name": format!("Design {}", k.to_uppercase())
            })
            .to_string();
            anthropic::message("", &[("t1", "handoff", &[args.as_str()])], 10, 1)
        }
        _ => anthropic::message("Noted.", &[], 10, 1),
    };
    Answer::Stream { events, hang: None }
}

/// alice (founding open) and bob, whose operator is asked.
fn asked_pair(root: &std::path::Path) -> (ModelServer, ModelServer, TestHome, TestHome) {
    let alice_model = ModelServer::start(vec![Answer::Computed(std::sync::Arc::new(founds))]);
    let bob_model = ModelServer::start(vec![crate::e2e::injection::text("Noted.")]);
    let (alice, bob) = pair(root, &alice_model.url, &bob_model.url);
    let config = bob.read("hearth.toml").replace("founding = \"open\"\n", "");
    std::fs::write(bob.file("hearth.toml"), config).unwrap();
    bob.git(&["commit", "-qam", "founding: ask, the default"]);
    (alice_model, bob_model, alice, bob)
}

fn requests(home: &TestHome) -> Vec<Value> {
    serde_json::from_str::<Value>(&home.ok(&["proposals", "requests", "--json"]))
        .unwrap()
        .as_array()
        .cloned()
        .unwrap_or_default()
}

fn took_handoff(home: &TestHome, slug: &str) -> bool {
    home.ticks().iter().any(|t| {
        t["inbox"]
            .to_string()
            .contains(&format!("handoff-{slug}-1"))
    })
}

#[test]
fn a_collaboration_a_peer_founds_waits_for_the_operators_word() {
    let root = tempfile::tempdir().unwrap();
    let (_a, bob_model, alice, bob) = asked_pair(root.path());
    alice.ok(&["say", "Start design x with bob."]);
    tick(&alice);
    tick(&bob);
    tick(&bob);
    assert!(!took_handoff(&bob, "design-x"), "{:?}", bob.ticks());
    assert!(
        !bob_model
            .received()
            .iter()
            .any(|r| r.body.to_string().contains("Draft one")),
        "no model call was paid on the peer's word"
    );
    let asked = requests(&bob);
    assert_eq!(asked.len(), 1, "one request, not one a look: {asked:#?}");
    let request = &asked[0];
    assert_eq!(request["kind"], "founding", "{request}");
    assert_eq!(request["arguments"]["collaboration"], "design-x");
    assert_eq!(request["by"], "peer alice");
    let n = request["n"].as_u64().unwrap().to_string();
    let flare = bob
        .list("outbox")
        .into_iter()
        .find(|f| f.contains("-flare-request"))
        .map(|f| bob.read(&format!("outbox/{f}")))
        .expect("a request flare");
    assert!(
        flare.contains("found the collaboration design-x with alice"),
        "{flare}"
    );
    let status = bob.ok(&["status"]);
    assert!(
        status.contains("founds the collaboration design-x here"),
        "{status}"
    );
    assert!(status.contains("founding:   ask"), "{status}");
    let listed = bob.ok(&["proposals", "requests"]);
    assert!(listed.contains("takes the handoff"), "{listed}");

    let approved = bob.ok(&["proposals", "approve", &n]);
    assert!(approved.contains("approved"), "{approved}");
    let by = bob.git(&["log", "-1", "--format=%an %s"]);
    assert!(
        String::from_utf8_lossy(&by.stdout).contains(&format!("request {n} approved")),
        "the operator's commit"
    );
    tick(&bob);
    assert!(
        took_handoff(&bob, "design-x"),
        "taken once approved: {:?}",
        bob.ticks()
    );
}

#[test]
fn a_declined_founding_is_never_taken_and_a_peer_asks_once_a_day() {
    let root = tempfile::tempdir().unwrap();
    let (_a, _b, alice, bob) = asked_pair(root.path());
    alice.ok(&["say", "Start design x with bob."]);
    tick(&alice);
    alice.ok(&["say", "Start design y with bob."]);
    tick(&alice);
    tick(&bob);
    let asked = requests(&bob);
    assert_eq!(
        asked.len(),
        1,
        "one new request a day from a peer: {asked:#?}"
    );
    let first = asked[0]["arguments"]["collaboration"]
        .as_str()
        .unwrap()
        .to_string();
    let n = asked[0]["n"].as_u64().unwrap().to_string();
    bob.ok(&["proposals", "decline", &n, "--reason", "not now"]);
    let status = bob.ok(&["status"]);
    assert!(status.contains("which you declined"), "{status}");
    // The next day the other is asked about; the declined one never.
    let tomorrow = "2026-11-25T10:00:00Z";
    let out = bob
        .keyed(&["run", "--ticks", "1"], KEY)
        .env("HEARTH_NOW", tomorrow)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let asked = requests(&bob);
    assert_eq!(asked.len(), 2, "{asked:#?}");
    assert_ne!(asked[1]["arguments"]["collaboration"], first.as_str());
    assert!(!took_handoff(&bob, &first), "{:?}", bob.ticks());
}

#[test]
fn with_founding_open_a_peers_collaboration_is_taken_at_once() {
    let root = tempfile::tempdir().unwrap();
    let (_a, _b, alice, bob) = asked_pair(root.path());
    let config = bob.read("hearth.toml").replace(
        "[collaborations]\n",
        "[collaborations]\nfounding = \"open\"\n",
    );
    std::fs::write(bob.file("hearth.toml"), config).unwrap();
    alice.ok(&["say", "Start design x with bob."]);
    tick(&alice);
    tick(&bob);
    assert!(took_handoff(&bob, "design-x"), "{:?}", bob.ticks());
    assert!(requests(&bob).is_empty());
    assert!(bob.ok(&["status"]).contains("founding:   open"));
}
