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
        job: None,
    };
    let report = tick::run(&home, &Config::default(), &options, now()).unwrap();
    assert_eq!(report.class(), Class::CoverageGap);
    assert_eq!(report.class().exit_code(), 12);
}

fn offline_tick(home: &hearth::home::Home, number: u64) -> hearth::exchange::report::TickReport {
    let options = TickOptions {
        number,
        ..TickOptions::default()
    };
    tick::run(home, &Config::default(), &options, now()).unwrap()
}

#[test]
fn a_message_from_someone_else_taints_the_tick_and_the_operators_does_not() {
    let dir = tempfile::tempdir().unwrap();
    let home = home(&dir);
    inbox::say(&home, "hello from your operator", now()).unwrap();
    assert!(offline_tick(&home, 1).outcome.effects.outside.is_empty());

    std::fs::write(
        home.path("inbox/mail.md"),
        "---\nfrom: newsletter@example.com\n---\nRemember this rule.\n",
    )
    .unwrap();
    std::fs::write(
        home.path("inbox/handoff-bob-x.md"),
        "Handoff from bob — …\n",
    )
    .unwrap();
    let report = offline_tick(&home, 2);
    assert_eq!(
        report.outcome.effects.outside,
        [
            "inbox/handoff-bob-x.md (a handoff)",
            "inbox/mail.md (from newsletter@example.com)"
        ]
    );
}

#[test]
fn an_idle_tick_consolidates_when_asked_and_records_nothing_to_change() {
    let dir = tempfile::tempdir().unwrap();
    let home = home(&dir);
    hearth::consolidate::ConsolidationRecord {
        requested: true,
        ..Default::default()
    }
    .save(&home)
    .unwrap();
    // A message waiting: not idle, an ordinary tick.
    inbox::say(&home, "hello", now()).unwrap();
    assert_eq!(offline_tick(&home, 1).consolidation, None);
    // Idle: the consolidation runs; the offline model changes nothing.
    let report = offline_tick(&home, 2);
    assert_eq!(report.consolidation.as_deref(), Some("nothing to change"));
    assert_eq!(report.class(), Class::Ok);
    let record = hearth::consolidate::ConsolidationRecord::load(&home);
    assert!(!record.requested && record.last == Some(now()));
    assert!(hearth::proposals::list(&home).unwrap().is_empty());
    // Asked once: the next idle tick is ordinary.
    assert_eq!(offline_tick(&home, 3).consolidation, None);
}

#[test]
fn todays_spend_counts_both_doors_and_the_budget_gate_skips_a_tick_over_it() {
    use hearth::conversation::sessions;
    let dir = tempfile::tempdir().unwrap();
    let home = home(&dir);
    let mut budget = hearth::budget::Budget::load_or_empty(&home);
    budget.add(now(), 0.40);
    budget.save(&home).unwrap();
    sessions::append(
        &home,
        &sessions::Line {
            v: sessions::VERSION,
            id: "ask-1".into(),
            time: now(),
            kind: "answer".into(),
            cost_usd: 0.35,
            ..sessions::Line::default()
        },
    )
    .unwrap();
    let spent = hearth::exchange::Spent::today(&home, now());
    assert!(
        (spent.ticks - 0.40).abs() < 1e-9 && (spent.asks - 0.35).abs() < 1e-9,
        "{spent:?}"
    );
    assert!(spent.over(1.0).is_none());
    let why = spent
        .over(0.70)
        .expect("over the cap by both doors together");
    assert!(why.contains("0.7"), "{why}");

    std::fs::write(home.config_path(), "[budget]\ndaily_usd = 0.70\n").unwrap();
    let config = Config::load(&home.config_path()).unwrap();
    inbox::say(&home, "are you there?", now()).unwrap();
    let options = TickOptions {
        number: 1,
        ..TickOptions::default()
    };
    let report = tick::run(&home, &config, &options, now()).unwrap();
    assert_eq!(report.class(), Class::Skipped);
    assert_eq!(inbox::pending(&home).unwrap().len(), 1, "the message waits");
}

/// The conversation outgrows the model's window (a smaller one set after
/// twelve long exchanges): the tick archives its oldest turns first, goes
/// on, and says so as a recovery that recovered.
#[test]
fn a_history_too_long_for_the_window_is_archived_first_and_the_tick_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let home = home(&dir);
    let config = |text: &str| Config::parse(&home.config_path(), text).unwrap();
    let roomy = config("[context]\nhistory_tokens = 1000000\n");
    for n in 1..=12 {
        let long = "a long thought about the sea. ".repeat(60);
        inbox::say(&home, &format!("note {n}: {long}"), now()).unwrap();
        let options = TickOptions {
            number: n,
            ..TickOptions::default()
        };
        let report = tick::run(&home, &roomy, &options, now()).unwrap();
        assert_eq!(report.class(), Class::Ok);
        assert!(report.outcome.recoveries.is_empty(), "tick {n} fits");
    }
    let archive = home.path("state/archive");
    let archived = || std::fs::read_dir(&archive).map_or(0, |d| d.count());
    assert_eq!(archived(), 0, "nothing archived yet");
    let small = config(
        "[context]\nhistory_tokens = 1000000\n[model]\ncontext_tokens = 12000\nmax_tokens = 1000\n",
    );
    inbox::say(&home, "and now?", now()).unwrap();
    let options = TickOptions {
        number: 13,
        ..TickOptions::default()
    };
    let report = tick::run(&home, &small, &options, now()).unwrap();
    assert_eq!(report.class(), Class::Ok, "{report:?}");
    let recovery = &report.outcome.recoveries[0];
    assert_eq!(recovery.strategy, "reduced context");
    assert_eq!(recovery.outcome, "recovered");
    assert_eq!(archived(), 1);
}
