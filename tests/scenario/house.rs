//! The rooms issue 29 gave their own logic, driven through the library:
//! the brake's status and override, the operator's collaboration changes,
//! the metrics text, the tier table both doors share.

use std::path::PathBuf;

use hearth::brake::status::{grant_override, status, OverrideError};
use hearth::collab::operator::{self, Founding, OperatorError};
use hearth::collab::Change;
use hearth::config::Config;
use hearth::exchange::tier::{classify, Tier};
use hearth::repo::Repo;

use super::{founding, home, now};

#[test]
fn an_override_needs_a_reason_and_is_logged_when_granted() {
    let dir = tempfile::tempdir().unwrap();
    let home = home(&dir);
    let refused = grant_override(&home, 2, "  ", now()).unwrap_err();
    assert!(matches!(refused, OverrideError::NoReason));
    assert!(refused.hint().contains("state/brake.jsonl"));

    grant_override(&home, 2, "the standing orders are being rewritten", now()).unwrap();
    let st = status(&home, &Config::default()).unwrap();
    assert_eq!(st.override_ticks_left, 2);
    let (lines, skipped) = hearth::brake::log::read(&home);
    assert_eq!(skipped, 0);
    let granted = lines.last().unwrap();
    assert_eq!(granted.decision, "override-granted");
    assert!(granted.reason.as_deref().unwrap().contains("rewritten"));
}

#[test]
fn the_operators_must_reads_are_listed_unread_or_missing() {
    let dir = tempfile::tempdir().unwrap();
    let home = home(&dir);
    std::fs::write(
        home.root().join("memory/orders.md"),
        "# Orders\n\nbe brief\n",
    )
    .unwrap();
    let mut config = Config::default();
    config.brake.must_read = vec!["memory/orders.md".into(), "memory/gone.md".into()];
    let st = status(&home, &config).unwrap();
    let states: Vec<(&str, &str)> = st
        .required
        .iter()
        .map(|r| (r.path.as_str(), r.state))
        .collect();
    assert!(
        states.contains(&("memory/orders.md", "not read")),
        "{states:?}"
    );
    assert!(
        states.contains(&("memory/gone.md", "missing")),
        "{states:?}"
    );
}

#[test]
fn the_operator_founds_and_pauses_a_collaboration_each_in_a_commit_of_their_own() {
    let dir = tempfile::tempdir().unwrap();
    let home = home(&dir);
    let config = Config::default();
    let c = operator::found(&home, &config, founding("Design X"), now()).unwrap();
    assert_eq!(c.slug, "design-x");
    let paused = operator::change(&home, &config, "design-x", "pause", now(), |c, at| {
        c.change(Change::Pause, "operator", "waiting for the review", at)
    })
    .unwrap();
    assert_eq!(paused.status.as_str(), "paused");
    let repo = Repo::open(home.root()).unwrap();
    let head = repo.head().unwrap();
    assert_eq!(
        repo.message(&head).unwrap().lines().next().unwrap(),
        "collab: pause (design-x)"
    );
    assert!(
        repo.changes().unwrap().changed.is_empty(),
        "nothing left uncommitted"
    );

    let again = operator::found(&home, &config, founding("Design X"), now()).unwrap_err();
    assert!(matches!(again, OperatorError::Exists(_)) && again.is_misuse());
    assert!(again.hint().contains("reopen"));
}

#[test]
fn what_the_operator_may_not_do_to_a_collaboration_is_named_with_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let home = home(&dir);
    let config = Config::default();
    let cases: Vec<(Founding, &str)> = vec![
        (
            Founding {
                with: vec!["zed".into()],
                ..founding("With a stranger")
            },
            "[peers]",
        ),
        (
            Founding {
                workdir: Some(PathBuf::from("/srv/elsewhere")),
                ..founding("Somewhere")
            },
            "[collaborations] workdirs",
        ),
        (
            Founding {
                founded_by: Some("memory/none.md".into()),
                ..founding("On nothing")
            },
            "under memory/",
        ),
    ];
    for (asked, hint) in cases {
        let e = operator::found(&home, &config, asked, now()).unwrap_err();
        assert!(e.is_misuse(), "{e}");
        assert!(e.hint().contains(hint), "{e}: {:?}", e.hint());
    }
    let missing =
        operator::change(&home, &config, "nope", "pause", now(), |_, _| Ok(())).unwrap_err();
    assert!(matches!(missing, OperatorError::NotFound(_)));
}

#[test]
fn the_tier_table_both_doors_share() {
    for (asked, tier) in [
        (
            "what is the secret word you gave me last?",
            Tier::Continuation,
        ),
        ("what are you working on?", Tier::Mission),
        ("tell me about herons", Tier::Knowledge),
        ("good morning", Tier::Plain),
    ] {
        assert_eq!(classify(asked), tier, "{asked}");
    }
}
