//! Handing off: founding by handoff, rounds back and forth, and what a
//! handoff may not name.

#![allow(clippy::disallowed_methods)] // fixtures, not state

use super::*;

#[test]
fn an_agent_founds_a_collaboration_by_handing_off_and_the_round_is_committed() {
    use crate::common::model_server::ModelServer;
    let root = tempfile::tempdir().unwrap();
    let w1 = tempfile::tempdir().unwrap();
    let bob = root.path().join("bob");
    let server = ModelServer::start(hands_off(serde_json::json!({
        "to": "bob",
        "message": "Draft one: a lighthouse with two keepers.\nDetails follow.",
        "name": "Design X",
        "workdir": w1.path().to_str().unwrap(),
        "founded_by": "memory/identity.md",
    })));
    let alice = agent(
        root.path(),
        "alice",
        &[("bob", &bob)],
        &[w1.path()],
        &server.url,
    );
    alice.ok(&["say", "Start design x with bob."]);
    tick(&alice);

    // The model was offered the tool (it has a peer), told who it is, who
    // its peers are and where a collaboration may work.
    let tools = &server.received()[0].body["tools"];
    let handoff = tools
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "handoff")
        .unwrap_or_else(|| panic!("{tools}"));
    let description = handoff["description"].as_str().unwrap();
    assert!(
        description.contains("You are alice; your peers are bob.")
            && description.contains(&format!(
                "Working directories the operator allows: {}.",
                w1.path().display()
            ))
            && description.contains("at most 3 rounds"),
        "{description}"
    );
    assert_eq!(
        handoff["input_schema"]["properties"]["to"]["enum"],
        serde_json::json!(["bob"])
    );
    let posted: Vec<String> = alice
        .list("outbox")
        .into_iter()
        .filter(|n| n.ends_with("-handoff-design-x-1-to-bob.md"))
        .collect();
    assert_eq!(posted.len(), 1, "{:?}", alice.list("outbox"));
    let text = alice.read(&format!("outbox/{}", posted[0]));
    assert!(text.starts_with("---\n"), "{text}");
    assert!(
        text.contains("kind: \"handoff\"") && text.contains("to: \"bob\""),
        "{text}"
    );
    assert!(
        text.ends_with("Draft one: a lighthouse with two keepers.\nDetails follow.\n"),
        "{text}"
    );

    let shown = json(&alice, &["collab", "show", "design-x", "--json"]);
    assert_eq!(shown["participants"], serde_json::json!(["alice", "bob"]));
    assert_eq!(shown["workdir"], w1.path().to_str().unwrap());
    assert_eq!(shown["rounds"][0]["to"], "bob");
    assert_eq!(
        shown["rounds"][0]["summary"],
        "Draft one: a lighthouse with two keepers."
    );
    // In the tick's own commit, nothing left over.
    let last = &alice.history()[0];
    assert!(last.summary.starts_with("tick 1"), "{}", last.summary);
    // Not taken in yet (bob's home is not there): show names the commit
    // that posted it, and no receiver's.
    assert_eq!(shown["rounds"][0]["sent_in"], last.id.as_str(), "{shown}");
    assert_eq!(shown["rounds"][0]["taken_in"], serde_json::Value::Null);
    assert!(
        last.files
            .contains(&"collaborations/design-x.md".to_string()),
        "{:?}",
        last.files
    );
    assert!(
        last.files.contains(&format!("outbox/{}", posted[0])),
        "{:?}",
        last.files
    );
    assert!(alice.git(&["status", "--porcelain"]).stdout.is_empty());

    // A home with no peers is not offered the tool at all.
    let lone_server = ModelServer::start(hands_off(
        serde_json::json!({"to": "bob", "message": "x", "name": "Y"}),
    ));
    let lone = agent(root.path(), "lone", &[], &[], &lone_server.url);
    lone.ok(&["say", "hello"]);
    tick(&lone);
    let tools = &lone_server.received()[0].body["tools"];
    assert!(
        !tools
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "handoff"),
        "{tools}"
    );
    assert!(lone.list("collaborations").is_empty());
}

#[test]
fn founding_on_a_memory_that_does_not_exist_or_an_overlong_message_is_refused_with_the_fix() {
    use crate::common::model_server::ModelServer;
    let root = tempfile::tempdir().unwrap();
    let server = ModelServer::start(hands_off(serde_json::json!({
        "to": "bob",
        "message": "Draft one.",
        "name": "Design X",
        "founded_by": "memory/design-x.md",
    })));
    let bob = root.path().join("bob");
    let alice = agent(root.path(), "alice", &[("bob", &bob)], &[], &server.url);
    alice.ok(&["say", "Start design x with bob."]);
    tick(&alice);
    let told = server.received().iter().any(|r| {
        r.body
            .to_string()
            .contains("is not a memory of yours: write it first")
    });
    assert!(told, "the model was told the fix");
    assert!(alice.list("collaborations").is_empty());
    assert!(!alice.list("outbox").iter().any(|n| n.contains("-handoff-")));

    // A message longer than [tools] max_write_bytes is refused too.
    let long = "A very long draft. ".repeat(10);
    let server = ModelServer::start(hands_off(
        serde_json::json!({"to": "bob", "message": long, "name": "Design Y"}),
    ));
    let carol = agent(root.path(), "carol", &[("bob", &bob)], &[], &server.url);
    std::fs::write(
        carol.file("hearth.toml"),
        format!(
            "{}\n[tools]\nmax_write_bytes = 100\n",
            carol.read("hearth.toml")
        ),
    )
    .unwrap();
    carol.ok(&["say", "Start design y with bob."]);
    tick(&carol);
    let told = server.received().iter().any(|r| {
        r.body
            .to_string()
            .contains("more than [tools] max_write_bytes (100)")
    });
    assert!(told, "the model was told the limit");
    assert!(carol.list("collaborations").is_empty());
}

#[test]
fn two_agents_hand_a_collaboration_back_and_forth_and_both_keep_the_rounds() {
    use crate::common::model_server::ModelServer;
    use std::time::Duration;
    let root = tempfile::tempdir().unwrap();
    let w1 = tempfile::tempdir().unwrap();
    let (alice_path, bob_path) = (root.path().join("alice"), root.path().join("bob"));
    let alice_model = ModelServer::start(vec![model_calling_on("Start design x", "handoff", {
        let input = serde_json::json!({
            "to": "bob",
            "message": "Draft one: a lighthouse with two keepers.",
            "name": "Design X",
            "workdir": w1.path().to_str().unwrap(),
        });
        move || input.clone()
    })]);
    // Bob's model names the collaboration as people do, not by its slug.
    let bob_model = ModelServer::start(vec![model_calling_on("Handoff from alice", "handoff", {
        let input = serde_json::json!({
            "to": "alice",
            "message": "Round two: one keeper is enough.",
            "collaboration": "Design X",
        });
        move || input.clone()
    })]);
    let alice = agent(
        root.path(),
        "alice",
        &[("bob", &bob_path)],
        &[w1.path()],
        &alice_model.url,
    );
    // carol's home is not there: bob names it and goes on with alice.
    let carol_path = root.path().join("carol");
    let bob = agent(
        root.path(),
        "bob",
        &[("alice", &alice_path), ("carol", &carol_path)],
        &[w1.path()],
        &bob_model.url,
    );
    let bob_supervisor = supervising(&bob);

    // Alice founds it and hands off; bob's supervisor, waiting an hour,
    // takes it at once and ticks on it.
    alice.ok(&["say", "Start design x with bob."]);
    tick(&alice);
    bob.wait_for(Duration::from_secs(20), "bob to answer the handoff", || {
        bob.list("outbox")
            .iter()
            .any(|n| n.ends_with("-handoff-design-x-2-to-alice.md"))
    });
    let header = asked(&bob_model)
        .into_iter()
        .find(|t| t.contains("Handoff from alice"))
        .expect("bob's model was asked about the handoff");
    assert!(
        header.contains("collaboration \\\"Design X\\\" (design-x), active, round 1 of at most 3"),
        "{header}"
    );
    assert!(
        header.contains(&format!("Working directory: {}.", w1.path().display())),
        "{header}"
    );
    assert!(
        header.contains("Draft one: a lighthouse with two keepers."),
        "{header}"
    );
    // The handoff's latency, for the record: from the end of alice's tick
    // (its commit follows at once) to the start of bob's tick that read it.
    let time =
        |v: &serde_json::Value| chrono::DateTime::parse_from_rfc3339(v.as_str().unwrap()).unwrap();
    let sent = time(&alice.ticks().last().unwrap()["end"]);
    bob.wait_for(Duration::from_secs(20), "bob's tick in its ledger", || {
        bob.ticks()
            .iter()
            .any(|t| t["inbox"].to_string().contains("handoff-alice-"))
    });
    let read = bob
        .ticks()
        .into_iter()
        .find(|t| t["inbox"].to_string().contains("handoff-alice-"))
        .map(|t| time(&t["start"]))
        .unwrap();
    eprintln!("handoff latency: {} ms", (read - sent).num_milliseconds());
    assert!(
        crate::common::finish_after_term(bob_supervisor).success(),
        "{}",
        bob.log()
    );
    let log = bob.log();
    assert!(
        log.contains("peer carol: cannot read") && log.contains("ReadOnlyPaths="),
        "{log}"
    );
    assert_eq!(
        log.matches("peer carol: cannot read").count(),
        1,
        "said once: {log}"
    );
    let status = bob.ok(&["status"]);
    assert!(
        status.contains("problem:    peer carol: cannot read"),
        "and listed by status for as long as it lasts: {status}"
    );
    // Status lists the peers `collab list` works with, as they are.
    assert!(status.contains("peer:       peer alice ("), "{status}");
    assert!(status.contains("on this host"), "{status}");

    // Alice's next tick takes bob's answer first, and reads round 2.
    tick(&alice);
    let header = asked(&alice_model)
        .into_iter()
        .find(|t| t.contains("Handoff from bob"))
        .expect("alice's model was asked about bob's handoff");
    assert!(header.contains("round 2 of at most 3"), "{header}");
    assert!(header.contains("1. alice → bob: Draft one"), "{header}");

    for home in [&alice, &bob] {
        let shown = json(home, &["collab", "show", "design-x", "--json"]);
        let rounds: Vec<(String, String)> = shown["rounds"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                (
                    r["from"].as_str().unwrap().into(),
                    r["to"].as_str().unwrap().into(),
                )
            })
            .collect();
        assert_eq!(
            rounds,
            [
                ("alice".to_string(), "bob".to_string()),
                ("bob".into(), "alice".into())
            ],
            "{}",
            home.path.display()
        );
        assert!(
            home.git(&["status", "--porcelain"]).stdout.is_empty(),
            "{}",
            home.path.display()
        );
    }
    // `collab show` gives the commits on both sides of each round, on
    // either side: the commit that posted the handoff, the one that took
    // it in.
    let committed = |home: &TestHome, posted: &str| {
        home.history()
            .into_iter()
            .rfind(|c| c.files.iter().any(|f| f.ends_with(posted)))
            .map(|c| c.id)
            .unwrap()
    };
    let took = |home: &TestHome, summary: &str| {
        home.history()
            .into_iter()
            .find(|c| c.summary == summary)
            .map(|c| c.id)
            .unwrap()
    };
    let expected = serde_json::json!([
        [
            committed(&alice, "-handoff-design-x-1-to-bob.md"),
            took(&bob, "handoff: from alice, design-x round 1")
        ],
        [
            committed(&bob, "-handoff-design-x-2-to-alice.md"),
            took(&alice, "handoff: from bob, design-x round 2")
        ],
    ]);
    for home in [&alice, &bob] {
        let shown = json(home, &["collab", "show", "design-x", "--json"]);
        let commits: Vec<serde_json::Value> = shown["rounds"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| serde_json::json!([r["sent_in"], r["taken_in"]]))
            .collect();
        assert_eq!(
            serde_json::Value::from(commits),
            expected,
            "{}",
            home.path.display()
        );
        let human = home.ok(&["collab", "show", "design-x"]);
        let short = |v: &serde_json::Value| v.as_str().unwrap()[..10].to_string();
        assert!(
            human.contains(&format!(
                "[{} → {}]",
                short(&expected[0][0]),
                short(&expected[0][1])
            )),
            "{human}"
        );
    }
    // Each handoff was taken exactly once, with the sender's commit.
    let taken = bob.read("state/handoffs.jsonl");
    assert_eq!(taken.lines().count(), 1, "{taken}");
    let line: serde_json::Value = serde_json::from_str(taken.lines().next().unwrap()).unwrap();
    assert_eq!(line["sent_in"].as_str().map(str::len), Some(40), "{line}");
    let listed = json(&alice, &["collab", "list", "--json"]);
    assert_eq!(listed[0]["rounds"], 2, "{listed}");
}

#[test]
fn a_handoff_whose_slug_names_a_path_outside_collaborations_or_that_poses_as_another_agent_is_refused(
) {
    use crate::common::model_server::ModelServer;
    let root = tempfile::tempdir().unwrap();
    let server = ModelServer::start(vec![model_calling_on("never", "send", || {
        serde_json::json!({})
    })]);
    let (alice, bob) = pair(root.path(), &server.url, &server.url);
    let identity = bob.read("memory/identity.md");
    // Written into alice's outbox by something other than hearth, and
    // committed there.
    let forged = "---\nkind: \"handoff\"\nfrom: \"alice\"\nto: \"bob\"\nround: 1\n\
        created: \"2026-01-01T00:00:00Z\"\ncollaboration: {\"slug\": \"../memory/identity\", \
        \"name\": \"X\", \"status\": \"active\", \"participants\": [\"alice\", \"bob\"], \
        \"rounds\": [{\"n\": 1, \"from\": \"alice\", \"to\": \"bob\", \
        \"at\": \"2026-01-01T00:00:00Z\", \"summary\": \"replaced\"}], \"events\": []}\n---\n\
        # replaced\n";
    let file = "20260101T000000.000Z-handoff-x-1-to-bob.md";
    std::fs::write(alice.file(&format!("outbox/{file}")), forged).unwrap();
    // And one that claims to come from another agent.
    let posing = forged
        .replace("../memory/identity", "x")
        .replace("from: \"alice\"", "from: \"mallory\"");
    let posing_file = "20260101T000001.000Z-handoff-x-1-to-bob.md";
    std::fs::write(alice.file(&format!("outbox/{posing_file}")), posing).unwrap();
    alice.git(&["add", "-A"]);
    alice.git(&["commit", "-qm", "forged"]);

    let out = bob.ok_keyed(&["run", "--ticks", "1"], KEY);
    assert_eq!(bob.read("memory/identity.md"), identity);
    assert!(bob.list("collaborations").is_empty());
    assert!(!bob.file("state/handoffs.jsonl").exists());
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(
        log.contains(file) && log.contains("not a collaboration slug"),
        "{log}"
    );
    assert!(
        log.contains(posing_file) && log.contains("says it is from \"mallory\""),
        "{log}"
    );
}

#[test]
fn a_handoff_whose_record_cannot_be_read_waits_named_while_the_others_are_taken() {
    use crate::common::model_server::{anthropic, Answer, ModelServer};
    let root = tempfile::tempdir().unwrap();
    let found = |name: &str| {
        serde_json::json!({"to": "bob", "message": format!("Work on {name}."), "name": name})
            .to_string()
    };
    let (x, y) = (found("Design X"), found("Design Y"));
    // Alice founds two at once, one handoff each.
    let alice_model = ModelServer::start(vec![
        Answer::Stream {
            events: anthropic::message(
                "",
                &[
                    ("t1", "handoff", &[x.as_str()]),
                    ("t2", "handoff", &[y.as_str()]),
                ],
                10,
                1,
            ),
            hang: None,
        },
        Answer::Stream {
            events: anthropic::message("Handed off.", &[], 10, 1),
            hang: None,
        },
    ]);
    let bob_model = ModelServer::start(vec![]);
    let (alice, bob) = pair(root.path(), &alice_model.url, &bob_model.url);
    // Bob's own record of design-y is not UTF-8 (a bad hand edit).
    std::fs::create_dir_all(bob.file("collaborations")).unwrap();
    std::fs::write(
        bob.file("collaborations/design-y.md"),
        b"---\n\xff\xfe\n---\n",
    )
    .unwrap();
    bob.git(&["add", "-A"]);
    bob.git(&["commit", "-qm", "a bad edit"]);
    alice.ok(&["say", "Start both designs with bob."]);
    tick(&alice);

    let run = bob.keyed(&["run", "--ticks", "1"], KEY).output().unwrap();
    assert!(run.status.success());
    let taken = std::fs::read_to_string(bob.file("state/handoffs.jsonl")).unwrap_or_default();
    assert!(taken.contains("\"design-x\""), "{taken}");
    assert!(!taken.contains("\"design-y\""), "{taken}");
    let log = String::from_utf8_lossy(&run.stderr);
    assert!(
        log.contains("collaborations/design-y.md") && log.contains("not UTF-8"),
        "the record to fix is named: {log}"
    );

    // Fixed (the operator removes it), the waiting one is taken.
    std::fs::remove_file(bob.file("collaborations/design-y.md")).unwrap();
    tick(&bob);
    let taken = bob.read("state/handoffs.jsonl");
    assert_eq!(taken.lines().count(), 2, "{taken}");
    assert!(taken.contains("\"design-y\""), "{taken}");
}
