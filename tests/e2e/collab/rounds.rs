//! The end of rounds: completion, max rounds, a ping-pong, a receiver
//! killed mid-take, the operator's pause.

#![allow(clippy::disallowed_methods)] // fixtures, not state

use super::*;

#[test]
fn a_closes_memory_completes_the_collaboration_on_both_sides() {
    use crate::common::model_server::ModelServer;
    let root = tempfile::tempdir().unwrap();
    let alice_model = ModelServer::start(vec![founds_design_x()]);
    let bob_model = ModelServer::start(vec![model_calling_on(
        "Handoff from alice",
        "write",
        || serde_json::json!({"path": "memory/design-x-decision.md", "content": "---\ntitle: Design X, decided\ncloses: design-x\n---\nOne keeper.\n"}),
    )]);
    let (alice, bob) = pair(root.path(), &alice_model.url, &bob_model.url);
    alice.ok(&["say", "Start design x with bob."]);
    tick(&alice);
    tick(&bob);
    let bobs = json(&bob, &["collab", "show", "design-x", "--json"]);
    assert_eq!(bobs["status"], "complete", "{bobs}");
    let last = bobs["events"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["by"], "bob");
    assert_eq!(last["note"], "closes: memory/design-x-decision.md");
    assert!(bob
        .list("outbox")
        .iter()
        .any(|n| n.ends_with("-notice-design-x-complete-to-alice.md")));

    // Alice learns it from the notice, in her record and her inbox.
    tick(&alice);
    let alices = json(&alice, &["collab", "show", "design-x", "--json"]);
    assert_eq!(alices["status"], "complete", "{alices}");
    let told = alice_model
        .received()
        .iter()
        .map(|r| r.body.to_string())
        .any(|b| b.contains("Notice from bob") && b.contains("now complete"));
    assert!(told, "alice's model was told");
    assert_eq!(
        json(
            &alice,
            &["collab", "list", "--status", "complete", "--json"]
        )[0]["slug"],
        "design-x"
    );
}

#[test]
fn max_rounds_stops_a_ping_pong_with_one_flare_for_each_operator() {
    use crate::common::model_server::ModelServer;
    use std::sync::atomic::{AtomicU32, Ordering};
    let root = tempfile::tempdir().unwrap();
    let turn = |to: &'static str| {
        let n = AtomicU32::new(0);
        move || {
            let n = n.fetch_add(1, Ordering::SeqCst);
            serde_json::json!({"to": to, "message": format!("{to}, version {n} of the plan."), "collaboration": "ping"})
        }
    };
    let alice_model = ModelServer::start(vec![model_calling_on(
        "Start ping",
        "handoff",
        || serde_json::json!({"to": "bob", "message": "Version A.", "name": "Ping"}),
    )]);
    let alice_again = ModelServer::start(vec![model_calling_on(
        "Handoff from bob",
        "handoff",
        turn("bob"),
    )]);
    let bob_model = ModelServer::start(vec![model_calling_on(
        "Handoff from alice",
        "handoff",
        turn("alice"),
    )]);
    let (alice, bob) = pair(root.path(), &alice_model.url, &bob_model.url);
    alice.ok(&["say", "Start ping with bob."]);
    tick(&alice); // round 1
                  // From here alice answers bob's handoffs.
    let config = alice
        .read("hearth.toml")
        .replace(&alice_model.url, &alice_again.url);
    std::fs::write(alice.file("hearth.toml"), config).unwrap();
    tick(&bob); // round 2
    tick(&alice); // round 3 = max_rounds
    tick(&bob); // round 4: refused, flared, alice told
    tick(&alice); // takes the notice
    let flares = |home: &TestHome| {
        home.list("outbox")
            .into_iter()
            .filter(|n| n.ends_with("-flare-collab.md"))
            .count()
    };
    assert_eq!(flares(&bob), 1, "{:?}", bob.list("outbox"));
    assert_eq!(flares(&alice), 1, "{:?}", alice.list("outbox"));
    let rounds = json(&alice, &["collab", "show", "ping", "--json"])["rounds"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(rounds, 3);
    let refused = bob_model
        .received()
        .iter()
        .map(|r| r.body.to_string())
        .any(|b| b.contains("has had its 3 rounds"));
    assert!(refused, "bob's model was told why");
}

#[test]
fn two_agents_handing_the_same_text_back_and_forth_is_a_quiet_failure() {
    use crate::common::model_server::ModelServer;
    let root = tempfile::tempdir().unwrap();
    let alice_model = ModelServer::start(vec![model_calling_on(
        "Start echo",
        "handoff",
        || serde_json::json!({"to": "bob", "message": "Same as ever.", "name": "Echo"}),
    )]);
    let bob_model = ModelServer::start(vec![model_calling_on(
        "Handoff from alice",
        "handoff",
        || serde_json::json!({"to": "alice", "message": "same as  ever.", "collaboration": "echo"}),
    )]);
    let (alice, bob) = pair(root.path(), &alice_model.url, &bob_model.url);
    alice.ok(&["say", "Start echo with bob."]);
    tick(&alice);
    tick(&bob);

    let last = bob.ticks().pop().unwrap();
    assert_eq!(last["class"], "ok", "{last}");
    let quiet = last["quiet"].as_str().unwrap_or_default();
    assert!(
        quiet.contains("same message as round 1 of echo"),
        "bob's tick is marked a quiet failure: {last}"
    );
    assert!(
        !bob.list("outbox")
            .iter()
            .any(|n| n.contains("-handoff-echo-2-")),
        "the echo was not posted: {:?}",
        bob.list("outbox")
    );
    let told = bob_model
        .received()
        .iter()
        .any(|r| r.body.to_string().contains("make no progress"));
    assert!(told, "bob's model was told why");
    let rounds = json(&bob, &["collab", "show", "echo", "--json"])["rounds"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(rounds, 1);
}

#[test]
fn a_receiver_killed_while_taking_a_handoff_takes_it_exactly_once_after_restart() {
    use crate::common::model_server::ModelServer;
    use std::time::Duration;
    let root = tempfile::tempdir().unwrap();
    let alice_model = ModelServer::start(vec![founds_design_x()]);
    let bob_model = ModelServer::start(vec![model_calling_on(
        "Handoff from alice",
        "send",
        || serde_json::json!({"body": "Got draft one."}),
    )]);
    let (alice, bob) = pair(root.path(), &alice_model.url, &bob_model.url);
    hourly(&bob);
    alice.ok(&["say", "Start design x with bob."]);
    tick(&alice);

    // Bob's supervisor writes the inbox message and is killed before it
    // records the handoff or commits.
    let mut cmd = bob.keyed(&["run"], KEY);
    cmd.env("HEARTH_TEST_INTAKE_DELAY", "3000");
    let supervisor = bob.spawn_with(cmd);
    bob.wait_for(
        Duration::from_secs(20),
        "the handoff in bob's inbox",
        || {
            bob.list("inbox")
                .iter()
                .any(|n| n.starts_with("handoff-alice-"))
        },
    );
    crate::common::signal(&supervisor, libc::SIGKILL);
    crate::common::finish(supervisor, Duration::from_secs(10));
    assert!(
        !bob.file("state/handoffs.jsonl").exists(),
        "killed before the ledger line"
    );

    let cmd = bob.keyed(&["run"], KEY);
    let supervisor = bob.spawn_with(cmd);
    bob.wait_for(Duration::from_secs(20), "bob's tick on the handoff", || {
        bob.ticks()
            .iter()
            .any(|t| t["exit"] == 0 && t["inbox"].to_string().contains("handoff-alice-"))
    });
    assert!(
        crate::common::finish_after_term(supervisor).success(),
        "{}",
        bob.log()
    );
    let taken = bob.read("state/handoffs.jsonl");
    assert_eq!(taken.lines().count(), 1, "{taken}");
    let answered: usize = bob
        .ticks()
        .iter()
        .map(|t| {
            t["inbox"].as_array().map_or(0, |m| {
                m.iter()
                    .filter(|m| m.as_str().unwrap_or("").contains("handoff-alice-"))
                    .count()
            })
        })
        .sum();
    assert_eq!(answered, 1, "read once: {:?}", bob.ticks());
    let replies = bob
        .list("outbox")
        .into_iter()
        .filter(|n| !n.contains("-flare-"))
        .count();
    assert_eq!(replies, 1, "{:?}", bob.list("outbox"));
    assert_eq!(
        json(&bob, &["collab", "show", "design-x", "--json"])["rounds"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    assert!(bob.git(&["status", "--porcelain"]).stdout.is_empty());
}

#[test]
fn an_operators_pause_reaches_the_peer_whose_agent_then_cannot_hand_off() {
    use crate::common::model_server::ModelServer;
    let root = tempfile::tempdir().unwrap();
    let alice_model = ModelServer::start(vec![founds_design_x()]);
    // Bob tries to answer in design-x whenever he is told anything of it.
    let bob_model = ModelServer::start(vec![model_calling_on(
        "design-x",
        "handoff",
        || serde_json::json!({"to": "alice", "message": "Draft two.", "collaboration": "design-x"}),
    )]);
    let (alice, bob) = pair(root.path(), &alice_model.url, &bob_model.url);
    alice.ok(&["say", "Start design x with bob."]);
    tick(&alice);
    alice.ok(&[
        "collab",
        "pause",
        "design-x",
        "--reason",
        "waiting for legal",
    ]);
    let last = &alice.history()[0];
    assert_eq!(last.author, "operator");
    assert!(
        last.files
            .iter()
            .any(|f| f.ends_with("-notice-design-x-pause-to-bob.md")),
        "the notice is in the operator's commit: {:?}",
        last.files
    );

    // Bob takes the handoff and the notice before his tick: his record is
    // paused, his model is told, and his handoff is refused.
    tick(&bob);
    let bobs = json(&bob, &["collab", "show", "design-x", "--json"]);
    assert_eq!(bobs["status"], "paused", "{bobs}");
    let bodies: Vec<String> = bob_model
        .received()
        .iter()
        .map(|r| r.body.to_string())
        .collect();
    assert!(
        bodies
            .iter()
            .any(|b| b.contains("alice's operator changed collaboration")
                && b.contains("waiting for legal")),
        "bob's model was told"
    );
    assert!(
        bodies
            .iter()
            .any(|b| b.contains("is paused: no handoff until the operator reopens it")),
        "bob's handoff was refused"
    );
    assert!(
        !bob.list("outbox").iter().any(|n| n.contains("-handoff-")),
        "{:?}",
        bob.list("outbox")
    );

    // A new name travels the same way.
    alice.ok(&["collab", "rename", "design-x", "Design X, final"]);
    tick(&bob);
    let bobs = json(&bob, &["collab", "show", "design-x", "--json"]);
    assert_eq!(bobs["name"], "Design X, final", "{bobs}");
    assert_eq!(bobs["status"], "paused", "{bobs}");
}
