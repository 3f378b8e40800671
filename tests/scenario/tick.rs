//! A tick through the library: the inbox answered, the conversation and
//! the report on disk, and nothing committed (the supervisor commits).

use hearth::config::Config;
use hearth::conversation::store::Conversation;
use hearth::conversation::Role;
use hearth::exchange::class::Class;
use hearth::mailbox::inbox;
use hearth::repo::Repo;
use hearth::tick::{self, TestHooks, TickOptions};

use super::{home, now};

#[test]
fn an_offline_tick_answers_the_inbox_and_leaves_the_commit_to_the_supervisor() {
    let dir = tempfile::tempdir().unwrap();
    let home = home(&dir);
    let asked = inbox::say(&home, "what do you remember about herons?", now()).unwrap();
    let head_before = Repo::open(home.root()).unwrap().head();

    let options = TickOptions {
        number: 1,
        ..TickOptions::default()
    };
    let report = tick::run(&home, &Config::default(), &options, now()).unwrap();

    assert_eq!(report.class(), Class::Ok);
    assert!(!asked.exists(), "the message left the inbox");
    assert_eq!(report.consumed.len(), 1);
    let letters = std::fs::read_dir(home.root().join("outbox"))
        .unwrap()
        .count();
    assert_eq!(letters, 1, "one reply in the outbox");
    let (conversation, broken) = Conversation::read(&home, None).unwrap();
    assert!(broken.is_none());
    let first = &conversation.messages[0];
    assert_eq!(first.role, Role::User);
    assert!(first.text().contains("what do you remember about herons?"));
    assert!(
        first.text().contains("2031-05-06T07:08:09Z"),
        "the pinned clock: {}",
        first.text()
    );
    assert_eq!(Repo::open(home.root()).unwrap().head(), head_before);
}

#[test]
fn an_injected_failure_classes_the_tick_without_touching_the_model() {
    let dir = tempfile::tempdir().unwrap();
    let home = home(&dir);
    let options = TickOptions {
        number: 4,
        api_key: None,
        hooks: TestHooks::parse(None, Some("coverage-gap@4")),
        environment: Default::default(),
    };
    let report = tick::run(&home, &Config::default(), &options, now()).unwrap();
    assert_eq!(report.class(), Class::CoverageGap);
    assert_eq!(report.class().exit_code(), 12);
}
