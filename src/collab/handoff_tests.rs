//! Tests of `collab/handoff.rs`.

use std::path::PathBuf;

use super::*;

fn at(min: i64) -> DateTime<Utc> {
    DateTime::from_timestamp(1_800_000_000 + min * 60, 0).unwrap()
}

fn peers() -> Peers {
    [(
        "bob".to_string(),
        crate::config::collab::PeerAt::Path(PathBuf::from("/h/bob")),
    )]
    .into()
}

fn settings(max_rounds: u32) -> CollaborationsConfig {
    CollaborationsConfig {
        workdirs: vec!["/srv/w1".into()],
        max_rounds,
        ..CollaborationsConfig::default()
    }
}

fn found(message: &str) -> HandoffAsk {
    HandoffAsk {
        to: "bob".into(),
        message: message.into(),
        name: Some("Design X".into()),
        workdir: Some("/srv/w1".into()),
        founded_by: Some("memory/design-x.md".into()),
        ..HandoffAsk::default()
    }
}

#[test]
fn founding_then_continuing_makes_numbered_rounds() {
    let first = plan(
        "alice",
        &peers(),
        &settings(12),
        &found("Draft one\nmore"),
        None,
        |_| false,
        at(0),
    )
    .unwrap();
    assert_eq!(first.record.slug, "design-x");
    assert_eq!(first.record.participants, ["alice", "bob"]);
    assert_eq!(first.handoff.round, 1);
    assert_eq!(first.record.rounds[0].summary, "Draft one");
    let next = HandoffAsk {
        to: "bob".into(),
        message: "Draft two".into(),
        collaboration: Some("design-x".into()),
        ..HandoffAsk::default()
    };
    let second = plan(
        "alice",
        &peers(),
        &settings(12),
        &next,
        Some(first.record),
        |_| true,
        at(5),
    )
    .unwrap();
    assert_eq!(second.handoff.round, 2);
    let header = second.handoff.header(12);
    assert!(header.contains("round 2 of at most 12"), "{header}");
    assert!(header.contains("Working directory: /srv/w1."), "{header}");
    assert!(header.contains("1. alice → bob: Draft one"), "{header}");
    let text = second.handoff.render();
    let back = Handoff::parse(&text).unwrap();
    assert_eq!(back, second.handoff, "{text}");
    let forged = text.replace("\"slug\":\"design-x\"", "\"slug\":\"../memory/identity\"");
    assert_ne!(forged, text);
    let err = Handoff::parse(&forged).unwrap_err();
    assert!(err.message.contains("not a collaboration slug"), "{err}");
}

#[test]
fn a_memory_closes_a_collaboration_by_its_front_matter() {
    assert_eq!(
        closes("---\ntitle: Done\ncloses: design-x\n---\nWe agreed.\n").as_deref(),
        Some("design-x")
    );
    assert_eq!(closes("---\ncloses: Not A Slug\n---\n"), None);
    assert_eq!(closes("no front matter, closes: design-x\n"), None);
}

#[test]
fn what_is_refused_says_why() {
    let p = peers();
    let refuse =
        |request: &HandoffAsk, existing: Option<Collaboration>, s: &CollaborationsConfig| {
            plan(
                "alice",
                &p,
                s,
                request,
                existing,
                |slug| slug == "taken",
                at(0),
            )
            .unwrap_err()
            .to_string()
        };
    let mut r = found("x");
    r.to = "carol".into();
    assert!(refuse(&r, None, &settings(12)).contains("its peers are: bob"));
    let mut r = found("x");
    r.workdir = Some("/srv/elsewhere".into());
    assert!(refuse(&r, None, &settings(12)).contains("[collaborations] workdirs (/srv/w1)"));
    let mut r = found("x");
    r.name = Some("Taken".into());
    assert!(refuse(&r, None, &settings(12)).contains("exists already"));
    let mut r = found("x");
    r.collaboration = Some("design-x".into());
    assert!(refuse(&r, None, &settings(12)).contains("either `collaboration`"));
    let cont = |msg: &str| HandoffAsk {
        to: "bob".into(),
        message: msg.into(),
        collaboration: Some("design-x".into()),
        ..HandoffAsk::default()
    };
    assert!(refuse(&cont("x"), None, &settings(12)).contains("no collaboration \"design-x\""));
    let one = plan(
        "alice",
        &p,
        &settings(1),
        &found("x"),
        None,
        |_| false,
        at(0),
    )
    .unwrap();
    assert!(refuse(&cont("y"), Some(one.record.clone()), &settings(1)).contains("its 1 rounds"));
    assert!(
        refuse(&cont(" X\n"), Some(one.record.clone()), &settings(12))
            .contains("same message as round 1 of design-x")
    );
    let mut paused = one.record.clone();
    paused.status = Stage::Paused;
    assert!(refuse(&cont("y"), Some(paused), &settings(12)).contains("is paused"));
}

#[test]
fn handing_the_same_text_back_and_forth_is_refused_but_progress_is_not() {
    let p = peers();
    let alices: Peers = [(
        "alice".to_string(),
        crate::config::collab::PeerAt::Path(PathBuf::from("/h/alice")),
    )]
    .into();
    let s = settings(12);
    let hand = |me: &str, peers: &Peers, to: &str, msg: &str, c: &Collaboration| {
        let request = HandoffAsk {
            to: to.into(),
            message: msg.into(),
            collaboration: Some(c.slug.clone()),
            ..HandoffAsk::default()
        };
        plan(me, peers, &s, &request, Some(c.clone()), |_| true, at(1))
    };
    let one = plan(
        "alice",
        &p,
        &s,
        &found("Version 1."),
        None,
        |_| false,
        at(0),
    )
    .unwrap();
    // bob echoes what alice just said: a loop.
    let echo = hand("bob", &alices, "alice", "version 1.", &one.record).unwrap_err();
    assert_eq!(
        echo,
        HandoffRefusal::Repeat {
            slug: "design-x".into(),
            round: 1
        }
    );
    // bob says something new; alice says her round 1 again: a loop.
    let two = hand("bob", &alices, "alice", "Version 2.", &one.record).unwrap();
    let again = hand("alice", &p, "bob", "Version 1.", &two.record).unwrap_err();
    assert_eq!(
        again,
        HandoffRefusal::Repeat {
            slug: "design-x".into(),
            round: 1
        }
    );
    // Another number is another version: progress.
    let three = hand("alice", &p, "bob", "Version 3.", &two.record).unwrap();
    assert_eq!(three.handoff.round, 3);
}
