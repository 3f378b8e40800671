//! Peers: a read-only peer, a peer's home that appears late, tools run in
//! each collaboration's workdir.

#![allow(clippy::disallowed_methods)] // fixtures, not state

use super::*;

#[test]
#[ignore = "needs root for a read-only bind mount; .ci/run runs it as root (cargo test -- --ignored)"]
fn a_receiver_that_sees_its_peer_read_only_takes_the_handoff() {
    use crate::common::model_server::ModelServer;
    use crate::common::read_only::ReadOnlyView;
    use std::time::Duration;
    let root = tempfile::tempdir().unwrap();
    let alice_model = ModelServer::start(vec![founds_design_x()]);
    let bob_model = ModelServer::start(vec![model_calling_on(
        "Handoff from alice",
        "handoff",
        || serde_json::json!({"to": "alice", "message": "Round two.", "collaboration": "design-x"}),
    )]);
    let bob_path = root.path().join("bob");
    let alice = agent(
        root.path(),
        "alice",
        &[("bob", &bob_path)],
        &[],
        &alice_model.url,
    );
    // Bob sees alice's home only through a read-only mount, as under
    // `ReadOnlyPaths=`.
    let seen = root.path().join("view/alice");
    let _view = ReadOnlyView::bind_or_fail(&alice.path, &seen);
    let bob = agent(root.path(), "bob", &[("alice", &seen)], &[], &bob_model.url);
    let supervisor = supervising(&bob);

    alice.ok(&["say", "Start design x with bob."]);
    tick(&alice);
    bob.wait_for(Duration::from_secs(20), "bob to hand back", || {
        bob.list("outbox")
            .iter()
            .any(|n| n.ends_with("-handoff-design-x-2-to-alice.md"))
    });
    assert!(
        crate::common::finish_after_term(supervisor).success(),
        "{}",
        bob.log()
    );
    let round = json(&bob, &["collab", "show", "design-x", "--json"])["rounds"][0].clone();
    assert!(
        round["sent_in"].is_string() && round["taken_in"].is_string(),
        "{round}"
    );
    assert!(!bob.log().contains("cannot read"), "{}", bob.log());
}

#[test]
fn a_peer_whose_home_appears_while_the_supervisor_waits_is_watched_from_then_on() {
    use crate::common::model_server::ModelServer;
    use std::time::Duration;
    let root = tempfile::tempdir().unwrap();
    let alice_path = root.path().join("alice");
    let alice_model = ModelServer::start(vec![founds_design_x()]);
    let bob_model = ModelServer::start(vec![model_calling_on(
        "Handoff from alice",
        "send",
        || serde_json::json!({"body": "Read alice's draft."}),
    )]);
    let bob = agent(
        root.path(),
        "bob",
        &[("alice", &alice_path)],
        &[],
        &bob_model.url,
    );
    let supervisor = supervising(&bob);

    // alice's home is made after bob started; her handoff still wakes him.
    let alice = agent(
        root.path(),
        "alice",
        &[("bob", &bob.path)],
        &[],
        &alice_model.url,
    );
    alice.ok(&["say", "Start design x with bob."]);
    tick(&alice);
    bob.wait_for(Duration::from_secs(20), "bob's tick on the handoff", || {
        bob.ticks()
            .iter()
            .any(|t| t["inbox"].to_string().contains("handoff-alice-"))
    });
    assert!(
        crate::common::finish_after_term(supervisor).success(),
        "{}",
        bob.log()
    );
}

#[test]
fn two_collaborations_at_once_each_run_their_tools_in_their_own_workdir() {
    use crate::common::model_server::{anthropic, Answer, ModelServer};
    let root = tempfile::tempdir().unwrap();
    let (w1, w2, w3) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    let (alice_path, bob_path) = (root.path().join("alice"), root.path().join("bob"));
    let found = |name: &str, dir: &std::path::Path| {
        serde_json::json!({"to": "bob", "message": format!("Work on {name}."), "name": name, "workdir": dir.to_str().unwrap()})
            .to_string()
    };
    let (a1, a2, a3) = (
        found("W one", w1.path()),
        found("W two", w2.path()),
        found("W three", w3.path()),
    );
    // Alice founds three at once, one handoff each, in one turn.
    let alice_model = ModelServer::start(vec![
        Answer::Stream {
            events: anthropic::message(
                "",
                &[
                    ("t1", "handoff", &[a1.as_str()]),
                    ("t2", "handoff", &[a2.as_str()]),
                    ("t3", "handoff", &[a3.as_str()]),
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
    // Bob runs its `mark` tool on every handoff it reads, then hands back
    // in the same collaboration.
    let bob_model = ModelServer::start(vec![Answer::Computed(std::sync::Arc::new(
        |body: &serde_json::Value| {
            let messages: Vec<String> = body["messages"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| m.to_string())
                .collect();
            let last = messages.last().unwrap();
            // The collaboration of the latest handoff bob was given.
            let slug = messages
                .iter()
                .rev()
                .find_map(|m| {
                    let at = m.find("Handoff from alice")?;
                    let rest = &m[at..];
                    let open = rest.find(" (")? + 2;
                    let close = open + rest[open..].find(')')?;
                    Some(rest[open..close].to_string())
                })
                .unwrap_or_default();
            let back = serde_json::json!({
                "to": "alice",
                "message": format!("Done with {slug}: see where.log."),
                "collaboration": slug,
            })
            .to_string();
            let events = if last.contains("Handoff from alice") && !last.contains("tool_result") {
                anthropic::message("", &[("m1", "mark", &["{}"])], 10, 1)
            } else if last.contains("\"m1\"") {
                anthropic::message("", &[("h1", "handoff", &[back.as_str()])], 10, 1)
            } else {
                anthropic::message("Noted.", &[], 10, 1)
            };
            Answer::Stream { events, hang: None }
        },
    ))]);
    let alice = agent(
        root.path(),
        "alice",
        &[("bob", &bob_path)],
        &[w1.path(), w2.path(), w3.path()],
        &alice_model.url,
    );
    // Bob allows W1 and W2, not W3.
    let bob = agent(
        root.path(),
        "bob",
        &[("alice", &alice_path)],
        &[w1.path(), w2.path()],
        &bob_model.url,
    );
    std::fs::write(
        bob.file("tools/mark.toml"),
        "name = \"mark\"\ndescription = \"say where you are\"\n\
         command = [\"/bin/sh\", \"-c\", \"pwd >> \\\"$HEARTH_WORKDIR/where.log\\\"; pwd\"]\n\
         when_outside = \"run\"\n\
         [parameters]\ntype = \"object\"\n",
    )
    .unwrap();
    // A peer's handoff is outside content: a tool that acts runs on a
    // peer's word only when its manifest says so.
    bob.ok(&["trust"]);

    alice.ok(&["say", "Found three collaborations with bob."]);
    tick(&alice);
    assert_eq!(
        alice
            .list("outbox")
            .iter()
            .filter(|n| n.contains("-handoff-"))
            .count(),
        3,
        "{:?}",
        alice.list("outbox")
    );
    // Bob takes the three handoffs before its first tick; each tick reads
    // one collaboration's.
    bob.ok_keyed(&["run", "--ticks", "3"], KEY);
    let ran_in =
        |dir: &std::path::Path| std::fs::read_to_string(dir.join("where.log")).unwrap_or_default();
    let canon = |dir: &std::path::Path| format!("{}\n", dir.canonicalize().unwrap().display());
    assert_eq!(
        ran_in(w1.path()),
        canon(w1.path()),
        "W one's tool ran in W1, once"
    );
    assert_eq!(
        ran_in(w2.path()),
        canon(w2.path()),
        "W two's tool ran in W2, once"
    );
    assert_eq!(ran_in(w3.path()), "", "W3 is not bob's to work in");
    assert!(!bob.file("where.log").exists(), "no tool ran in bob's home");
    let refused = bob_model
        .received()
        .iter()
        .map(|r| r.body.to_string())
        .find(|b| b.contains("not one of this home's [collaborations] workdirs"));
    assert!(
        refused.is_some(),
        "W three's tool was refused with the reason"
    );
    let ticks = bob.ticks();
    let handoffs_read: Vec<usize> = ticks
        .iter()
        .map(|t| {
            t["inbox"].as_array().map_or(0, |m| {
                m.iter()
                    .filter(|m| m.as_str().unwrap_or("").contains("handoff-alice"))
                    .count()
            })
        })
        .collect();
    assert_eq!(
        handoffs_read,
        [1, 1, 1],
        "one collaboration a tick: {ticks:?}"
    );
    let listed = json(&bob, &["collab", "list", "--status", "active", "--json"]);
    assert_eq!(listed.as_array().unwrap().len(), 3, "{listed}");

    // Bob handed each back in its own collaboration; alice reads them one
    // collaboration a tick, each with its own header.
    tick(&alice);
    tick(&alice);
    tick(&alice);
    let most = alice_model
        .received()
        .iter()
        .filter_map(|r| r.body["messages"].as_array()?.last().map(|m| m.to_string()))
        .map(|m| m.matches("Handoff from bob").count())
        .max();
    assert_eq!(most, Some(1), "one collaboration's handoff a tick");
    for (slug, name) in [
        ("w-one", "W one"),
        ("w-two", "W two"),
        ("w-three", "W three"),
    ] {
        let asked_about: Vec<String> = alice_model
            .received()
            .iter()
            .filter_map(|r| r.body["messages"].as_array()?.last().map(|m| m.to_string()))
            .filter(|m| m.contains(&format!("collaboration \\\"{name}\\\" ({slug})")))
            .collect();
        assert_eq!(asked_about.len(), 1, "{slug}: {asked_about:?}");
        assert!(
            asked_about[0].contains("round 2")
                && asked_about[0].contains(&format!("Done with {slug}")),
            "{}",
            asked_about[0]
        );
        for home in [&alice, &bob] {
            let rounds = json(home, &["collab", "show", slug, "--json"])["rounds"].clone();
            let rounds = rounds.as_array().unwrap();
            assert_eq!(rounds.len(), 2, "{slug}: {rounds:?}");
            assert!(
                rounds
                    .iter()
                    .all(|r| r["sent_in"].is_string() && r["taken_in"].is_string()),
                "{slug}, {}: {rounds:?}",
                home.path.display()
            );
        }
    }
    // For the record (`--nocapture`): both sides of two of them.
    for home in [&alice, &bob] {
        for slug in ["w-one", "w-two"] {
            eprintln!(
                "$ hearth collab show {slug}   ({})\n{}",
                home.path.file_name().unwrap().to_string_lossy(),
                home.ok(&["collab", "show", slug])
            );
        }
    }
}

/// A peer's home whose repository cannot be read (its HEAD broken) has an
/// outbox that only looks empty: the handoff waiting in it is named in
/// status and flared once, as a peer that cannot be fetched is, instead
/// of waiting in silence; once the repository is whole, it is taken.
#[test]
fn a_peer_whose_repository_cannot_be_read_is_named_and_flared_once() {
    use crate::common::model_server::ModelServer;
    let root = tempfile::tempdir().unwrap();
    let alice_model = ModelServer::start(vec![founds_design_x()]);
    let bob_model = ModelServer::start(vec![crate::e2e::injection::text("Noted.")]);
    let bob_path = root.path().join("bob");
    let alice = agent(
        root.path(),
        "alice",
        &[("bob", &bob_path)],
        &[],
        &alice_model.url,
    );
    let bob = agent(
        root.path(),
        "bob",
        &[("alice", &alice.path)],
        &[],
        &bob_model.url,
    );
    alice.ok(&["say", "Start design x with bob."]);
    tick(&alice);
    let head = alice.file(".git/HEAD");
    let whole = std::fs::read(&head).unwrap();
    std::fs::write(&head, "not a ref at all\n").unwrap();
    tick(&bob);
    tick(&bob);
    let flares: Vec<String> = bob
        .list("outbox")
        .into_iter()
        .filter(|n| n.contains("-flare-peer"))
        .collect();
    assert_eq!(flares.len(), 1, "once a spell: {:?}", bob.list("outbox"));
    let flare = bob.read(&format!("outbox/{}", flares[0]));
    assert!(
        flare.contains("peer alice") && flare.contains("cannot be opened"),
        "{flare}"
    );
    let status = bob.ok(&["status"]);
    assert!(
        status.contains("problem:    peer alice: its repository at"),
        "{status}"
    );
    std::fs::write(&head, whole).unwrap();
    tick(&bob);
    assert!(
        bob.ticks()
            .iter()
            .any(|t| t["inbox"].to_string().contains("handoff-alice-")),
        "taken once the repository is whole: {:?}",
        bob.ticks()
    );
}

/// `hearth status` judges a peer's outbox as the supervisor does, and
/// like it reads each blob once: what the blobs said is kept under
/// `.hearth/` (a peer's flood of 10,000 refused files is read once, not at
/// every status), so a second status says the same without reading them
/// — here, with the peer's blobs gone from its repository.
#[test]
fn status_reads_a_peers_refused_handoffs_once() {
    let root = tempfile::tempdir().unwrap();
    let alice = TestHome::at(&root.path().join("alice"));
    alice.ok(&["init"]);
    for i in 0..30 {
        std::fs::write(
            alice.file(&format!(
                "outbox/20260101T0000{i:02}Z-handoff-x-1-to-bob.md"
            )),
            format!("---\nkind: handoff\nfrom: alice\nto: bob\n---\nnot really {i}\n"),
        )
        .unwrap();
    }
    alice.git(&["add", "-A"]);
    alice.git(&["commit", "-qm", "a flood"]);
    let bob = TestHome::at(&root.path().join("bob"));
    bob.ok(&["init"]);
    std::fs::write(
        bob.file("hearth.toml"),
        format!("[peers]\nalice = \"{}\"\n", alice.path.display()),
    )
    .unwrap();
    let first = bob.ok(&["status"]);
    assert!(
        first.contains("is not a handoff hearth can read"),
        "{first}"
    );
    assert!(bob.file(".hearth/handoff-reads.json").is_file());
    let blobs = String::from_utf8(alice.git(&["ls-tree", "HEAD", "outbox/"]).stdout).unwrap();
    for line in blobs.lines() {
        let id = line.split_whitespace().nth(2).unwrap();
        let _ =
            std::fs::remove_file(alice.file(&format!(".git/objects/{}/{}", &id[..2], &id[2..])));
    }
    let second = bob.ok(&["status"]);
    let problems = |s: &str| -> Vec<String> {
        s.lines()
            .filter(|l| l.starts_with("problem:"))
            .map(str::to_string)
            .collect()
    };
    assert_eq!(problems(&second), problems(&first));
}
