//! A heal through the library: the conversation restored from the good
//! commit, the hand-edited memory left alone, the heal committed.

use hearth::config::Config;
use hearth::healer::{self, state::HealerState};
use hearth::repo::{Identity, Repo};

use super::{home, now};

#[test]
fn a_heal_restores_the_conversation_from_the_good_commit_and_keeps_memory() {
    let dir = tempfile::tempdir().unwrap();
    let home = home(&dir);
    let repo = Repo::open(home.root()).unwrap();
    let operator = Identity::operator(&Config::default().git);
    let messages = home.root().join("state/messages.json");
    let good =
        r#"{"version":1,"messages":[{"role":"user","content":[{"type":"text","text":"good"}]}]}"#;
    std::fs::write(&messages, good).unwrap();
    let commit = repo
        .commit(&["state"], &operator, "tick 1", now())
        .unwrap()
        .unwrap();
    repo.set_good(&commit).unwrap();

    std::fs::write(&messages, r#"{"version":1,"messages":[]}"#).unwrap();
    std::fs::write(home.root().join("memory/note.md"), "written by hand\n").unwrap();
    repo.commit(&["state", "memory"], &operator, "tick 2 went wrong", now())
        .unwrap();

    let mut state = HealerState::default();
    let plan = healer::plan(&home, &repo, &state).unwrap();
    assert_eq!(plan.restore_from, commit);
    assert_eq!(plan.restore, vec!["state/messages.json".to_string()]);
    let healed = healer::apply(&home, &repo, &mut state, &plan, now()).unwrap();

    assert!(healed.is_some(), "the heal is a commit");
    assert_eq!(std::fs::read_to_string(&messages).unwrap(), good);
    assert_eq!(
        std::fs::read_to_string(home.root().join("memory/note.md")).unwrap(),
        "written by hand\n"
    );
}
