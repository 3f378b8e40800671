//! Issue 30's rules at the library's level: what an interrupted ask leaves
//! behind, git's locks, the asks' gate, and what both doors count and say.

use std::time::Duration;

use hearth::ask::journal::{self, Journal, Whose};
use hearth::conversation::sessions;
use hearth::exchange::{record, Spent};
use hearth::home::lock::{hold_asks, AskLock};
use hearth::repo::{Identity, Repo};

use super::{home, now};

fn journal_of(id: &str, pid: u32, touched: &[&str]) -> Journal {
    Journal {
        outside: hearth::outside::Outside::none(),
        id: id.into(),
        pid,
        question: "note this in a file".into(),
        touched: touched.iter().map(|t| t.to_string()).collect(),
        usage: (120, 30),
        cost_usd: 0.02,
        provider: "anthropic".into(),
    }
}

#[test]
fn an_ask_whose_process_is_gone_is_finished_as_its_own_commit_marked_interrupted() {
    let dir = tempfile::tempdir().unwrap();
    let home = home(&dir);
    std::fs::write(home.root().join("memory/noted.md"), "# Noted\n").unwrap();
    // A pid above the kernel's pid_max: no process has it.
    Journal::begin(&home, journal_of("a1", 4_194_305, &["memory/noted.md"])).unwrap();
    // A hand edit beside it stays the operator's.
    std::fs::write(home.root().join("memory/mine.md"), "# Mine\n").unwrap();

    let done = journal::finish(&home, Whose::Gone, "its process was gone", now());

    assert_eq!(done, ["ask (interrupted): note this in a file"]);
    let repo = Repo::open(home.root()).unwrap();
    let head = repo.head().unwrap();
    let message = repo.message(&head).unwrap();
    assert!(
        message.contains("cut short (its process was gone)"),
        "{message}"
    );
    let changes = repo.changes().unwrap();
    let left: Vec<String> = changes.changed.iter().map(|p| p.to_string()).collect();
    assert_eq!(
        left,
        ["memory/mine.md"],
        "only the hand edit is left for the operator"
    );
    let lines = sessions::read(&home);
    let answer = lines.iter().find(|l| l.id == "a1").unwrap();
    assert_eq!(answer.complete, Some(false));
    assert_eq!(answer.interrupted.as_deref(), Some("its process was gone"));
    assert_eq!(answer.cost_usd, 0.02, "what it spent counts toward the day");
    assert!(journal::left_behind(&home, Whose::All).is_empty());
    // Finished once: a second look finds nothing.
    assert!(journal::finish(&home, Whose::All, "again", now()).is_empty());
}

#[test]
fn a_live_asks_journal_is_not_finished_by_another_ask() {
    let dir = tempfile::tempdir().unwrap();
    let home = home(&dir);
    // This process is alive: its ask is running, not interrupted.
    let mine = Journal::begin(&home, journal_of("b1", std::process::id(), &[])).unwrap();
    assert!(journal::finish(&home, Whose::Gone, "gone", now()).is_empty());
    assert_eq!(journal::left_behind(&home, Whose::Mine).len(), 1);
    mine.end(&home);
    assert!(journal::left_behind(&home, Whose::All).is_empty());
}

#[test]
fn a_lock_a_killed_git_left_is_removed_when_the_wait_runs_out() {
    let dir = tempfile::tempdir().unwrap();
    let home = home(&dir);
    std::fs::write(home.root().join(".git/index.lock"), "").unwrap();
    std::fs::write(home.root().join("memory/x.md"), "# X\n").unwrap();
    let mut repo = Repo::open(home.root()).unwrap();
    repo.set_lock_wait(Duration::ZERO);
    let id = repo
        .commit(&["memory/x.md"], &Identity::hearth(), "x", now())
        .unwrap();
    assert!(id.is_some(), "committed once the leftover was removed");
    assert!(!home.root().join(".git/index.lock").exists());
}

#[test]
fn a_lock_a_live_writer_holds_is_waited_for_then_named_and_left() {
    let dir = tempfile::tempdir().unwrap();
    let home = home(&dir);
    let lock = home.root().join(".git/index.lock");
    std::fs::write(&lock, "").unwrap();
    let mut owner = std::process::Command::new("sleep")
        .arg("30")
        .stdin(std::fs::File::open(&lock).unwrap())
        .spawn()
        .unwrap();
    std::fs::write(home.root().join("memory/x.md"), "# X\n").unwrap();
    let mut repo = Repo::open(home.root()).unwrap();
    repo.set_lock_wait(Duration::from_millis(200));
    let err = repo
        .commit(&["memory/x.md"], &Identity::hearth(), "x", now())
        .unwrap_err();
    owner.kill().unwrap();
    owner.wait().unwrap();
    assert!(err.is_locked(), "{err}");
    assert!(err.hint().contains("stale lock"), "{:?}", err.hint());
    assert!(lock.exists(), "a live writer's lock is never removed");
}

#[test]
fn a_look_for_hand_edits_closes_the_gate_to_new_asks_and_waits_for_the_running_one() {
    let dir = tempfile::tempdir().unwrap();
    let home = home(&dir);
    let running = AskLock::acquire(&home).unwrap();
    // With an ask running and no wait, the look gives up.
    assert!(hold_asks(&home, Duration::ZERO).is_none());

    let (tx, rx) = std::sync::mpsc::channel();
    let looker = {
        let home = home.clone();
        std::thread::spawn(move || {
            let held = hold_asks(&home, Duration::from_secs(30));
            tx.send(held.is_some()).unwrap();
            // Held a moment: an ask starting now waits behind the look.
            std::thread::sleep(Duration::from_millis(300));
            drop(held);
        })
    };
    // The look is waiting with the gate closed: a new ask waits too.
    std::thread::sleep(Duration::from_millis(100));
    let (started_tx, started_rx) = std::sync::mpsc::channel();
    let newcomer = {
        let home = home.clone();
        std::thread::spawn(move || {
            let lock = AskLock::acquire(&home).unwrap();
            started_tx.send(()).unwrap();
            drop(lock);
        })
    };
    std::thread::sleep(Duration::from_millis(100));
    assert!(
        started_rx.try_recv().is_err(),
        "the new ask waits behind the look"
    );
    drop(running);
    assert!(
        rx.recv().unwrap(),
        "the look got the asks' lock once the running ask ended"
    );
    started_rx
        .recv_timeout(Duration::from_secs(10))
        .expect("the new ask goes on after the look");
    looker.join().unwrap();
    newcomer.join().unwrap();
}

#[test]
fn today_is_counted_once_for_both_doors() {
    let dir = tempfile::tempdir().unwrap();
    let home = home(&dir);
    let mut budget = hearth::budget::Budget::default();
    budget.add(now(), 0.75);
    budget.save(&home).unwrap();
    sessions::append(
        &home,
        &sessions::Line {
            v: sessions::VERSION,
            id: "q1".into(),
            time: now(),
            kind: "answer".into(),
            cost_usd: 0.5,
            ..Default::default()
        },
    )
    .unwrap();
    let spent = Spent::today(&home, now());
    assert_eq!((spent.ticks, spent.asks), (0.75, 0.5));
    assert!(
        spent.over(1.0).is_some(),
        "the cap is reached by both together"
    );
    assert!(spent.over(2.0).is_none());
}

#[test]
fn what_an_exchange_sends_is_in_its_record_whichever_door() {
    let actions = vec![
        r#"send {"subject":"your word","body":"Your new secret word is HALCYON."}"#.to_string(),
    ];
    let said = record::said("done", &actions);
    assert!(said.contains("HALCYON"), "{said}");
    assert_eq!(record::sent(&actions).len(), 1);
}
