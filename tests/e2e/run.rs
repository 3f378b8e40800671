//! End to end on the built binary: a new home ticks, commits, answers its
//! inbox, wakes on a message, commits hand edits as the operator, stops on
//! SIGTERM, and reports its status.

#![allow(clippy::disallowed_methods)] // fixtures, not state

use std::time::{Duration, Instant};

use crate::common::{finish, signal, TestHome};

#[test]
fn run_ticks_3_creates_the_home_and_commits_each_tick_with_trailers() {
    let home = TestHome::new();
    home.ok(&["run", "--ticks", "3"]);

    let log = home.history();
    let summaries: Vec<&str> = log.iter().map(|c| c.summary.as_str()).collect();
    assert_eq!(
        summaries,
        [
            "tick 3: exit 0 (ok): idle",
            "tick 2: exit 0 (ok): idle",
            "tick 1: exit 0 (ok): idle",
            "init: new hearth home"
        ]
    );
    for (commit, n) in log.iter().zip([3, 2, 1]) {
        assert_eq!(commit.author, "hearth");
        for trailer in [
            format!("Hearth-Tick: {n}\n"),
            "Hearth-Exit: 0\n".to_string(),
            "Hearth-Class: ok\n".to_string(),
            "Hearth-Tokens: sent=".to_string(),
            "Hearth-Cost-USD: 0.0000\n".to_string(),
        ] {
            assert!(
                commit.message.contains(&trailer),
                "{trailer:?} missing in:\n{}",
                commit.message
            );
        }
    }
    assert_eq!(log[3].author, "operator");
    assert_eq!(home.good_ref().as_deref(), Some(log[0].id.as_str()));

    let ticks = home.ticks();
    assert_eq!(ticks.len(), 3);
    for (line, n) in ticks.iter().zip(1..) {
        assert_eq!(line["tick"], n);
        assert_eq!(line["exit"], 0);
        assert_eq!(line["class"], "ok");
        assert!(line["tokens"]["in"].as_u64().unwrap() > 0);
        assert!(line["start"].is_string() && line["end"].is_string());
        assert!(line["tokens_by_part"]["prompt"].as_u64().unwrap() > 0);
        assert!(line["tokens_by_part"]["identity"].as_u64().unwrap() > 0);
    }
    // The home is clean: every change is in a commit.
    let status = home.git(&["status", "--porcelain"]);
    assert_eq!(String::from_utf8_lossy(&status.stdout), "");
    assert!(home.read(".gitignore").contains("/.hearth/"));
}

#[test]
fn say_then_one_tick_answers_in_the_outbox_in_one_commit() {
    let home = TestHome::new();
    home.ok(&["init"]);
    let said = home.ok(&["say", "hello, what is in your identity?"]);
    let inbox_file = said.trim().to_string();
    assert!(
        inbox_file.starts_with("inbox/") && inbox_file.ends_with(".md"),
        "{said}"
    );
    assert_eq!(home.history()[0].summary, format!("say: {inbox_file}"));
    assert_eq!(home.history()[0].author, "operator");

    home.ok(&["run", "--ticks", "1"]);

    assert!(home.list("inbox").is_empty(), "the inbox is empty");
    let outbox = home.list("outbox");
    assert_eq!(outbox.len(), 1, "{outbox:?}");
    let reply = home.read(&format!("outbox/{}", outbox[0]));
    assert!(reply.starts_with("---\nkind: message\n"), "{reply}");
    assert!(
        reply.contains(&format!("in_reply_to: \"{inbox_file}\"")),
        "{reply}"
    );
    assert!(
        reply.contains("> hello, what is in your identity?"),
        "{reply}"
    );
    assert!(reply.contains("No model is configured"), "{reply}");
    assert!(
        reply.contains("- memory/identity.md:3-5: I am a new hearth agent."),
        "the offline reply cites what memory holds: {reply}"
    );

    let archived = home.list("state/inbox-archive");
    assert_eq!(archived.len(), 1);
    assert_eq!(
        home.read(&format!("state/inbox-archive/{}", archived[0])),
        "hello, what is in your identity?\n"
    );
    let tick = &home.history()[0];
    // The subject says what the tick did.
    assert_eq!(tick.summary, "tick 1: exit 0 (ok): answered 1 message");
    let files = &tick.files;
    assert!(
        files.contains(&inbox_file),
        "inbox removal in the tick commit: {files:?}"
    );
    assert!(files.iter().any(|f| f.starts_with("outbox/")), "{files:?}");
    assert!(
        files.iter().any(|f| f.starts_with("state/inbox-archive/")),
        "{files:?}"
    );
    assert!(
        files.contains(&"state/messages.json".to_string()),
        "{files:?}"
    );
    assert_eq!(
        home.ticks()[0]["inbox"][0].as_str().unwrap(),
        format!("state/inbox-archive/{}", archived[0])
    );
    // The model's view: the question was written ahead, the reply after.
    let messages: serde_json::Value =
        serde_json::from_str(&home.read("state/messages.json")).unwrap();
    let turns = messages["messages"].as_array().unwrap();
    assert!(turns[0]["content"][0]["text"]
        .as_str()
        .unwrap()
        .contains("hello, what is in your identity?"));
    assert_eq!(turns[1]["content"][1]["name"], "send");
}

#[test]
fn a_running_supervisor_ticks_at_once_on_an_inbox_message_and_stops_on_sigterm() {
    let home = TestHome::with_config("[tick]\ninterval_s = 3600\n");
    let child = home.spawn(&["run"]);
    home.wait_for(Duration::from_secs(10), "the first tick", || {
        home.ticks().len() == 1
    });

    let asked = Instant::now();
    home.ok(&["say", "are you awake?"]);
    home.wait_for(Duration::from_secs(10), "a reply", || {
        !home.list("outbox").is_empty()
    });
    let woke_in = asked.elapsed();
    assert!(
        woke_in < Duration::from_secs(5),
        "woke after {woke_in:?}, not at once"
    );
    home.wait_for(Duration::from_secs(5), "the tick commit", || {
        home.history()[0].summary.starts_with("tick 2: exit 0 (ok)")
    });

    let status: serde_json::Value = serde_json::from_str(&home.ok(&["status", "--json"])).unwrap();
    assert_eq!(status["running"], true);
    assert_eq!(status["last_tick"]["tick"], 2);
    assert_eq!(status["last_tick"]["class"], "ok");
    home.wait_for(Duration::from_secs(5), "waiting phase", || {
        let s: serde_json::Value = serde_json::from_str(&home.ok(&["status", "--json"])).unwrap();
        s["phase"] == "waiting" && s["next_due"].is_string()
    });

    let stopped = Instant::now();
    signal(&child, libc::SIGTERM);
    let status = finish(child, Duration::from_secs(5));
    assert!(status.success(), "exit {status:?}: {}", home.log());
    assert!(
        stopped.elapsed() < Duration::from_secs(2),
        "took {:?}",
        stopped.elapsed()
    );

    let status: serde_json::Value = serde_json::from_str(&home.ok(&["status", "--json"])).unwrap();
    assert_eq!(status["running"], false);
}

#[test]
fn a_hand_edit_while_running_is_committed_as_the_operator_before_the_next_tick() {
    let home = TestHome::with_config("[tick]\ninterval_s = 3600\n");
    let child = home.spawn(&["run"]);
    home.wait_for(Duration::from_secs(10), "the first tick", || {
        home.ticks().len() == 1
    });

    std::fs::create_dir_all(home.file("memory/notes")).unwrap();
    std::fs::write(home.file("memory/notes/x.md"), "# X\n\nwritten by hand\n").unwrap();
    home.ok(&["say", "wake up"]);
    home.wait_for(Duration::from_secs(10), "tick 2", || {
        home.ticks().len() == 2
    });
    home.wait_for(Duration::from_secs(5), "its commit", || {
        home.history()[0].summary.starts_with("tick 2")
    });

    let log = home.history();
    let edit = log
        .iter()
        .find(|c| c.files.contains(&"memory/notes/x.md".to_string()))
        .expect("the hand edit is committed");
    assert_eq!(edit.author, "operator");
    assert_eq!(edit.summary, "edit: memory/notes/x.md (by hand)");
    for commit in log.iter().filter(|c| c.author == "hearth") {
        assert!(!commit.files.contains(&"memory/notes/x.md".to_string()));
    }
    signal(&child, libc::SIGTERM);
    let status = finish(child, Duration::from_secs(5));
    assert!(status.success());
}

#[test]
fn hand_edits_made_just_before_sigterm_are_committed_at_exit() {
    let home = TestHome::with_config("[tick]\ninterval_s = 3600\n");
    let child = home.spawn(&["run"]);
    home.wait_for(Duration::from_secs(10), "the first tick", || {
        home.ticks().len() == 1
    });
    std::fs::write(
        home.file("memory/identity.md"),
        "# Identity\n\nI am Ember.\n",
    )
    .unwrap();
    signal(&child, libc::SIGTERM);
    let status = finish(child, Duration::from_secs(5));
    assert!(status.success());
    assert_eq!(
        home.history()[0].summary,
        "edit: memory/identity.md (by hand)"
    );
    assert_eq!(home.history()[0].author, "operator");
}

#[test]
fn a_message_or_a_stop_during_a_burst_of_memory_saves_is_not_lost() {
    let home = TestHome::with_config("[tick]\ninterval_s = 3600\n");
    let child = home.spawn(&["run"]);
    home.wait_for(Duration::from_secs(10), "the first tick", || {
        home.ticks().len() == 1
    });
    // The supervisor lets a burst of saves settle before re-indexing;
    // what arrives meanwhile must still be seen.
    let waiting = || home.read(".hearth/supervisor.json").contains("\"waiting\"");
    home.wait_for(Duration::from_secs(5), "the supervisor waiting", waiting);
    std::fs::write(home.file("memory/a.md"), "one\n").unwrap();
    std::thread::sleep(Duration::from_millis(30));
    home.ok(&["say", "are you there?"]);
    home.wait_for(Duration::from_secs(5), "a tick for the message", || {
        home.ticks().len() == 2
    });
    home.wait_for(Duration::from_secs(5), "the supervisor waiting", waiting);
    std::fs::write(home.file("memory/b.md"), "two\n").unwrap();
    std::thread::sleep(Duration::from_millis(30));
    signal(&child, libc::SIGTERM);
    let status = finish(child, Duration::from_secs(3));
    assert!(status.success());
}

#[test]
fn a_second_supervisor_is_refused_and_names_the_first() {
    let home = TestHome::with_config("[tick]\ninterval_s = 3600\n");
    let child = home.spawn(&["run"]);
    home.wait_for(Duration::from_secs(10), "the first tick", || {
        home.ticks().len() == 1
    });
    let out = home.output(&["run"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&format!("pid {}", child.id())), "{err}");
    assert!(err.contains("hint:"), "{err}");
    let out = home.output(&["tick"]);
    assert_eq!(out.status.code(), Some(1), "a hand tick is refused too");
    signal(&child, libc::SIGTERM);
    finish(child, Duration::from_secs(5));
}

#[test]
fn status_works_on_a_home_that_never_ran() {
    let home = TestHome::new();
    home.ok(&["init"]);
    let text = home.ok(&["status"]);
    assert!(text.contains("supervisor: not running"), "{text}");
    assert!(text.contains("last tick:  none yet"), "{text}");
    let json: serde_json::Value = serde_json::from_str(&home.ok(&["status", "--json"])).unwrap();
    assert_eq!(json["running"], false);
    assert_eq!(json["home"], home.path.display().to_string());
}

#[test]
fn init_completes_an_existing_directory_and_keeps_its_files() {
    let home = TestHome::new();
    std::fs::create_dir_all(home.file("memory")).unwrap();
    std::fs::write(
        home.file("memory/identity.md"),
        "# Me\n\nAlready written.\n",
    )
    .unwrap();
    std::fs::write(home.file(".gitignore"), "*.bak").unwrap();
    home.ok(&["init"]);
    assert_eq!(
        home.read("memory/identity.md"),
        "# Me\n\nAlready written.\n"
    );
    assert_eq!(
        home.read(".gitignore"),
        "*.bak\n# hearth's runtime files\n/.hearth/\n"
    );
    assert!(
        home.file("memory/prompt.md").exists(),
        "missing templates added"
    );
    home.ok(&["run", "--ticks", "1"]);
    let tracked = home.git(&["ls-files", ".hearth"]);
    assert_eq!(
        String::from_utf8_lossy(&tracked.stdout),
        "",
        "runtime files never committed"
    );
    assert_eq!(
        home.ok(&["init"]).trim_end(),
        format!(
            "{} is already a hearth home; nothing to do",
            home.path.display()
        )
    );
}
