//! Proposals on a real home: made beside `main`, shown with who wrote
//! what they remove, accepted (re-applied when `main` moved), left for
//! review on a conflict, rejected.

use chrono::{DateTime, Duration, Utc};
use hearth::home::Home;
use hearth::proposals::*;
use hearth::repo::{Identity, Repo};

const IDENTITY: &str = "# Who I am\n\nI keep the lighthouse log.\nI answer in plain words.\n";

fn setup() -> (tempfile::TempDir, Home, DateTime<Utc>) {
    let dir = tempfile::tempdir().unwrap();
    let now = DateTime::from_timestamp(1_790_000_000, 0).unwrap();
    hearth::home::init(dir.path(), now).unwrap();
    let home = Home::open(dir.path()).unwrap();
    std::fs::write(home.path("memory/identity.md"), IDENTITY).unwrap();
    let repo = Repo::open(home.root()).unwrap();
    repo.commit(&["memory"], &operator(), "operator's identity", now)
        .unwrap();
    (dir, home, now)
}

fn operator() -> Identity {
    Identity {
        name: "Ada".into(),
        email: "ada@example.com".into(),
    }
}

fn draft(content: &str) -> Draft {
    Draft {
        title: "Remember the rule from the handoff".into(),
        why: "a peer's handoff asked for it".into(),
        by: "tick 7".into(),
        kind: String::new(),
        outside: hearth::outside::Outside::of("inbox/x.md (from peer-b)"),
        files: [(
            "memory/identity.md".to_string(),
            Some(content.as_bytes().to_vec()),
        )]
        .into(),
    }
}

fn head_file(home: &Home, rel: &str) -> String {
    let out = std::process::Command::new("git")
        .args(["show", &format!("HEAD:{rel}")])
        .current_dir(home.root())
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn a_proposal_is_a_branch_beside_main_and_a_flare() {
    let (_d, home, now) = setup();
    let head = Repo::open(home.root()).unwrap().head();
    let changed = IDENTITY.replace("plain words", "riddles");
    let p = propose(&home, None, &draft(&changed), now).unwrap();
    assert_eq!(p.n, 1);
    assert_eq!(
        p.branch,
        "refs/hearth/proposals/1-remember-the-rule-from-the-handoff"
    );
    let repo = Repo::open(home.root()).unwrap();
    assert_eq!(repo.head(), head, "main did not move");
    assert_eq!(
        std::fs::read_to_string(home.path("memory/identity.md")).unwrap(),
        IDENTITY
    );
    assert_eq!(repo.commit_of_ref(&p.branch), Some(p.commit.clone()));
    assert_eq!(waiting(&home).unwrap(), 1);
    let flares = hearth::mailbox::flares::list(&home);
    assert!(flares.iter().any(|f| f.flare == "proposal"), "{flares:?}");

    let (_, diff) = show(&home, 1).unwrap();
    assert_eq!(diff.len(), 1);
    assert_eq!((diff[0].added, diff[0].removed), (1, 1));
    let removed = &diff[0].removed_lines[0];
    assert_eq!(removed.text, "I answer in plain words.");
    let origin = removed.origin.as_ref().unwrap();
    assert_eq!(origin.author, "Ada", "the operator wrote it");
    assert!(
        diff[0].patch.contains("+I answer in riddles."),
        "{}",
        diff[0].patch
    );
}

#[test]
fn a_second_write_in_the_same_exchange_amends_the_same_proposal() {
    let (_d, home, now) = setup();
    let first = propose(&home, None, &draft("one\n"), now).unwrap();
    let second = propose(&home, Some(first.n), &draft("one\ntwo\n"), now).unwrap();
    assert_eq!(second.n, first.n);
    assert_ne!(second.commit, first.commit);
    assert_eq!(list(&home).unwrap().len(), 1);
    let flares = hearth::mailbox::flares::list(&home);
    assert_eq!(flares.iter().filter(|f| f.flare == "proposal").count(), 1);
}

#[test]
fn accept_puts_it_on_main_in_one_commit_even_after_main_moved() {
    let (_d, home, now) = setup();
    let changed = IDENTITY.replace("plain words", "short plain words");
    propose(&home, None, &draft(&changed), now).unwrap();
    // main moves meanwhile, elsewhere in the same file and in another.
    let moved = IDENTITY.replace("# Who I am", "# Who I am (and I like tea)");
    std::fs::write(home.path("memory/identity.md"), &moved).unwrap();
    std::fs::write(home.path("memory/notes.md"), "a note\n").unwrap();
    let repo = Repo::open(home.root()).unwrap();
    repo.commit(&["memory"], &operator(), "hand edit", now)
        .unwrap();

    let Accepted::Merged(p, Some(_)) =
        accept(&home, 1, None, &operator(), now + Duration::minutes(1)).unwrap()
    else {
        panic!("a clean re-apply");
    };
    assert_eq!(p.status, State::Accepted);
    let on_main = head_file(&home, "memory/identity.md");
    assert!(
        on_main.contains("short plain words") && on_main.contains("I like tea"),
        "{on_main}"
    );
    assert_eq!(
        std::fs::read_to_string(home.path("memory/identity.md")).unwrap(),
        on_main
    );
    assert!(
        repo.commit_of_ref(&p.branch).is_some(),
        "its branch stays: git log --all shows it beside the acceptance"
    );
    assert_eq!(waiting(&home).unwrap(), 0);
    let log = std::process::Command::new("git")
        .args(["log", "-1", "--format=%an|%s"])
        .current_dir(home.root())
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8(log.stdout).unwrap().trim(),
        "Ada|proposal 1 accepted: Remember the rule from the handoff"
    );
    assert!(matches!(
        accept(&home, 1, None, &operator(), now),
        Err(ProposalError::Decided { .. })
    ));
}

#[test]
fn a_conflict_leaves_it_for_review_naming_the_file_and_main_untouched() {
    let (_d, home, now) = setup();
    propose(
        &home,
        None,
        &draft(&IDENTITY.replace("plain words", "riddles")),
        now,
    )
    .unwrap();
    std::fs::write(
        home.path("memory/identity.md"),
        IDENTITY.replace("plain words", "haiku"),
    )
    .unwrap();
    let repo = Repo::open(home.root()).unwrap();
    repo.commit(&["memory"], &operator(), "hand edit", now)
        .unwrap();
    let head = repo.head();
    let Accepted::NeedsReview(p) = accept(&home, 1, None, &operator(), now).unwrap() else {
        panic!("a conflict");
    };
    assert_eq!(p.conflicts, ["memory/identity.md"]);
    assert!(head_file(&home, "memory/identity.md").contains("haiku"));
    assert_ne!(repo.head(), head, "the needs-review is a commit of its own");
    assert_eq!(list(&home).unwrap()[0].status, State::NeedsReview);
    assert_eq!(waiting(&home).unwrap(), 1);
}

#[test]
fn accept_refuses_to_overwrite_uncommitted_edits_and_reject_records_why() {
    let (_d, home, now) = setup();
    propose(&home, None, &draft("changed\n"), now).unwrap();
    std::fs::write(home.path("memory/identity.md"), "being edited in vim\n").unwrap();
    let refused = accept(&home, 1, None, &operator(), now).unwrap_err();
    assert!(matches!(refused, ProposalError::Dirty(_)), "{refused}");
    assert!(refused.hint().contains("commit your edits"));
    assert_eq!(
        std::fs::read_to_string(home.path("memory/identity.md")).unwrap(),
        "being edited in vim\n"
    );
    let p = reject(&home, 1, None, Some("not a rule I want"), &operator(), now).unwrap();
    assert_eq!(p.status, State::Rejected);
    assert_eq!(
        list(&home).unwrap()[0].reason.as_deref(),
        Some("not a rule I want")
    );
    assert!(Repo::open(home.root())
        .unwrap()
        .commit_of_ref(&p.branch)
        .is_none());
    assert!(matches!(show(&home, 9), Err(ProposalError::NoSuch(9))));
}

#[test]
fn one_unread_proposal_flare_at_a_time() {
    let (_d, home, now) = setup();
    for content in ["a\n", "b\n", "c\n"] {
        propose(&home, None, &draft(content), now).unwrap();
    }
    assert_eq!(list(&home).unwrap().len(), 3);
    let flares = hearth::mailbox::flares::list(&home);
    assert_eq!(flares.iter().filter(|f| f.flare == "proposal").count(), 1);
    assert_eq!(waiting(&home).unwrap(), 3);
}

#[test]
fn a_lost_or_broken_book_is_rebuilt_from_the_refs_and_numbers_are_never_reused() {
    let (_d, home, now) = setup();
    let first = propose(&home, None, &draft("one\n"), now).unwrap();
    let second = propose(&home, None, &draft("two\n"), now).unwrap();
    reject(&home, second.n, None, Some("no"), &operator(), now).unwrap();
    let third = propose(&home, None, &draft("three\n"), now).unwrap();
    assert_eq!((first.n, second.n, third.n), (1, 2, 3));
    for broken in [None, Some("{}"), Some("[]"), Some("{\"proposals\": [")] {
        match broken {
            None => std::fs::remove_file(home.path("state/proposals.json")).unwrap(),
            Some(text) => std::fs::write(home.path("state/proposals.json"), text).unwrap(),
        }
        let listed = list(&home).unwrap();
        let open: Vec<u64> = listed
            .iter()
            .filter(|p| p.status.waiting())
            .map(|p| p.n)
            .collect();
        assert_eq!(open, [1, 3], "{broken:?}: the waiting ones are remembered");
        let one = listed.iter().find(|p| p.n == 1).unwrap();
        assert_eq!(one.title, "Remember the rule from the handoff");
        assert_eq!(one.by, "tick 7");
        assert_eq!(one.outside, ["inbox/x.md (from peer-b)"]);
        assert_eq!(one.files, ["memory/identity.md"]);
        assert_eq!(
            listed.iter().find(|p| p.n == 2).map(|p| p.status),
            Some(State::Rejected),
            "{broken:?}: the rejected one is known from history"
        );
    }
    // The supervisor's look rebuilds it and commits it as hearth's.
    let repo = Repo::open(home.root()).unwrap();
    let why = heal_book(&home, &repo, now).expect("rebuilt");
    assert!(
        why.contains("does not parse") || why.contains("rebuilt"),
        "{why}"
    );
    assert_eq!(
        repo.message(&repo.head().unwrap()).unwrap().lines().next(),
        Some("proposals: state/proposals.json rebuilt")
    );
    assert!(heal_book(&home, &repo, now).is_none(), "once");
    // A new proposal takes a number never used, whatever the book forgot.
    std::fs::remove_file(home.path("state/proposals.json")).unwrap();
    let fourth = propose(&home, None, &draft("four\n"), now).unwrap();
    assert_eq!(fourth.n, 4);
    assert_eq!(
        accept(&home, first.n, None, &operator(), now)
            .map(|a| matches!(a, Accepted::Merged(..)))
            .ok(),
        Some(true)
    );
}

#[test]
fn a_branch_moved_by_hand_is_named_as_moved_not_gone() {
    let (_d, home, now) = setup();
    let p = propose(&home, None, &draft("one\n"), now).unwrap();
    let other = propose(&home, None, &draft("two\n"), now).unwrap();
    std::process::Command::new("git")
        .arg("-C")
        .arg(home.root())
        .args(["update-ref", &p.branch, &other.commit])
        .status()
        .unwrap();
    let err = accept(&home, p.n, None, &operator(), now).unwrap_err();
    assert!(matches!(err, ProposalError::Moved { .. }), "{err}");
    assert!(err.hint().contains("git update-ref"), "{}", err.hint());
}

/// The operator was shown proposal 1 at its first commit; a tick then
/// replaced it with another change. Accepting or rejecting what was shown
/// is refused under the commit lock as a conflict, and nothing of the
/// unseen change reaches `main`; deciding on the new commit works.
#[test]
fn a_decision_on_a_proposal_a_tick_replaced_since_it_was_shown_is_refused() {
    let (_d, home, now) = setup();
    let shown = propose(&home, None, &draft(&IDENTITY.replace("plain", "kind")), now).unwrap();
    let unseen = IDENTITY.replace("plain words", "whatever the handoff says");
    let replaced = propose(&home, Some(shown.n), &draft(&unseen), now).unwrap();
    assert_ne!(
        shown.commit, replaced.commit,
        "the tick replaced its commit"
    );

    let refused = accept(&home, shown.n, Some(&shown.commit), &operator(), now).unwrap_err();
    assert!(
        matches!(refused, ProposalError::NotAsSeen { n, .. } if n == shown.n),
        "{refused}"
    );
    assert!(refused.is_conflict());
    assert!(!head_file(&home, "memory/identity.md").contains("whatever the handoff"));
    let refused = reject(&home, shown.n, Some(&shown.commit), None, &operator(), now);
    assert!(matches!(refused, Err(ProposalError::NotAsSeen { .. })));

    let done = accept(&home, shown.n, Some(&replaced.commit), &operator(), now).unwrap();
    assert!(matches!(done, Accepted::Merged(..)));
    assert!(head_file(&home, "memory/identity.md").contains("whatever the handoff"));
    let again = accept(&home, shown.n, Some(&replaced.commit), &operator(), now).unwrap_err();
    assert!(
        again.is_conflict(),
        "the second of two acts is a conflict too: {again}"
    );
}
