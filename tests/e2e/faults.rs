//! Bad input and hard stops, end to end: each gets a clear error naming the
//! file, or is handled, and nothing else is lost.

#![allow(clippy::disallowed_methods)] // fixtures, not state

use std::time::Duration;

use crate::common::{finish, signal, TestHome};

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Every state file a tick writes still parses.
fn assert_state_parses(home: &TestHome) {
    let messages: serde_json::Value =
        serde_json::from_str(&home.read("state/messages.json")).expect("messages.json parses");
    assert_eq!(messages["version"], 1);
    let ledger = home.read("state/ticks.jsonl");
    for line in ledger.lines() {
        serde_json::from_str::<serde_json::Value>(line).expect("every ledger line parses");
    }
}

fn assert_fsck_clean(home: &TestHome) {
    let out = home.git(&["fsck", "--full", "--strict"]);
    assert!(out.status.success(), "git fsck: {}", stderr(&out));
}

#[test]
fn a_hanging_tick_is_killed_at_the_time_limit_recorded_as_crash_and_the_supervisor_goes_on() {
    let home = TestHome::with_config("[tick]\ntimeout_s = 1\n");
    let out = home
        .cmd(&["run", "--ticks", "2"])
        .env("HEARTH_TEST_TICK_DELAY", "30000@1")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("timeout_s"), "{}", stderr(&out));
    let ticks = home.ticks();
    assert_eq!(ticks.len(), 2);
    assert_eq!(ticks[0]["class"], "crash");
    assert_eq!(ticks[0]["exit"], 128 + 9);
    assert!(ticks[0]["note"]
        .as_str()
        .unwrap()
        .contains("timeout_s = 1s"));
    assert_eq!(ticks[1]["class"], "ok");
    let log = home.history();
    assert_eq!(log[1].summary, "tick 1: exit 137 (crash)");
    assert!(log[1].message.contains("Hearth-Class: crash"));
    assert_eq!(log[0].summary, "tick 2: exit 0 (ok): idle");
    // The good ref skips the crashed tick.
    assert_eq!(home.good_ref().as_deref(), Some(log[0].id.as_str()));
    assert_state_parses(&home);
}

#[test]
fn kill_9_of_the_supervisor_mid_tick_loses_nothing_and_the_next_run_records_the_crash() {
    let home = TestHome::with_config("");
    home.ok(&["say", "remember the word ember"]);
    let mut cmd = home.cmd(&["run", "--ticks", "1"]);
    cmd.env("HEARTH_TEST_TICK_DELAY", "20000");
    let child = home.spawn_with(cmd);
    // Past the write-ahead: the question is in messages.json, the inbox file
    // archived.
    home.wait_for(Duration::from_secs(10), "the write-ahead", || {
        !home.list("state/inbox-archive").is_empty()
    });
    signal(&child, libc::SIGKILL);
    let status = finish(child, Duration::from_secs(5));
    assert!(!status.success());
    // The tick child dies with its supervisor (no orphan writing on).
    home.wait_for(Duration::from_secs(5), "the orphaned tick to die", || {
        !tick_child_alive(&home)
    });

    home.ok(&["run", "--ticks", "1"]);
    assert_fsck_clean(&home);
    assert_state_parses(&home);
    let ticks = home.ticks();
    assert_eq!(ticks.len(), 2);
    assert_eq!(ticks[0]["class"], "crash");
    assert!(ticks[0]["note"]
        .as_str()
        .unwrap()
        .contains("supervisor stopped"));
    assert_eq!(ticks[1]["class"], "ok");
    let log = home.history();
    assert_eq!(log[1].summary, "tick 1: exit 137 (crash)");
    // The crashed tick never answered: its message went back to the inbox
    // and the next tick read it as new.
    assert!(ticks[0].get("inbox").is_none(), "{}", ticks[0]);
    assert_eq!(
        ticks[1]["inbox"].as_array().unwrap().len(),
        1,
        "{}",
        ticks[1]
    );
    assert!(home.list("inbox").is_empty());
    assert!(home
        .read("state/messages.json")
        .contains("remember the word ember"));
    let status = home.git(&["status", "--porcelain"]);
    assert_eq!(
        String::from_utf8_lossy(&status.stdout),
        "",
        "nothing left uncommitted"
    );
}

fn tick_child_alive(home: &TestHome) -> bool {
    let needle = home.path.to_string_lossy().into_owned();
    std::fs::read_dir("/proc").unwrap().flatten().any(|entry| {
        std::fs::read(entry.path().join("cmdline"))
            .map(|raw| {
                let cmd = String::from_utf8_lossy(&raw).replace('\0', " ");
                cmd.contains("--supervised") && cmd.contains(&needle)
            })
            .unwrap_or(false)
    })
}

#[test]
fn sigterm_during_a_tick_aborts_it_cleanly_commits_and_exits_0() {
    let home = TestHome::with_config("");
    home.ok(&["say", "a question"]);
    let mut cmd = home.cmd(&["run"]);
    cmd.env("HEARTH_TEST_TICK_DELAY", "20000@1");
    let child = home.spawn_with(cmd);
    home.wait_for(Duration::from_secs(10), "the write-ahead", || {
        !home.list("state/inbox-archive").is_empty()
    });
    signal(&child, libc::SIGTERM);
    let status = finish(child, Duration::from_secs(10));
    assert!(status.success(), "{status:?}: {}", home.log());
    let ticks = home.ticks();
    assert_eq!(ticks.len(), 1);
    assert!(
        ticks[0]["note"].as_str().unwrap().contains("told to stop"),
        "{ticks:?}"
    );
    assert_eq!(
        home.history()[0].summary,
        format!("tick 1: exit {} (crash)", ticks[0]["exit"])
    );
    assert_eq!(
        ticks[0]["interrupted"], true,
        "an operator's stop, not the agent's failure"
    );
    let healer: serde_json::Value = serde_json::from_str(&home.read("state/healer.json")).unwrap();
    assert!(
        healer["streak"].as_array().unwrap().is_empty(),
        "not counted: {healer}"
    );
    assert_state_parses(&home);
    let porcelain = home.git(&["status", "--porcelain"]);
    assert_eq!(String::from_utf8_lossy(&porcelain.stdout), "");
}

#[test]
fn an_unknown_config_key_is_an_error_naming_the_key_and_the_file() {
    let home = TestHome::with_config("[tick]\nintreval_s = 60\n");
    let out = home.output(&["run", "--ticks", "1"]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("hearth.toml:2:"), "{err}");
    assert!(err.contains("intreval_s"), "{err}");
    assert!(err.contains("hint:"), "{err}");
    assert!(home.ticks().is_empty(), "no tick ran");
}

#[test]
fn malformed_toml_is_an_error_with_its_line() {
    let home = TestHome::with_config("[model]\nprovider = \"offline\"\n[tick\n");
    let out = home.output(&["run", "--ticks", "1"]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("hearth.toml:3:"), "{err}");
}

#[test]
fn a_config_broken_while_running_keeps_the_last_good_one_and_flares_once() {
    let home = TestHome::with_config("[tick]\ninterval_s = 3600\n");
    let child = home.spawn(&["run"]);
    home.wait_for(Duration::from_secs(10), "the first tick", || {
        home.ticks().len() == 1
    });
    std::fs::write(home.file("hearth.toml"), "[tick]\ninterval_s = \"soon\"\n").unwrap();
    home.ok(&["say", "one"]);
    home.wait_for(Duration::from_secs(10), "tick 2", || {
        home.ticks().len() == 2
    });
    home.ok(&["say", "two"]);
    home.wait_for(Duration::from_secs(10), "tick 3", || {
        home.ticks().len() == 3
    });
    assert_eq!(home.ticks()[2]["class"], "ok", "ticks go on");

    let flares: Vec<String> = home
        .list("outbox")
        .into_iter()
        .filter(|n| n.contains("flare-config"))
        .collect();
    assert_eq!(flares.len(), 1, "one flare for one broken file: {flares:?}");
    let flare = home.read(&format!("outbox/{}", flares[0]));
    assert!(flare.contains("kind: flare\nflare: \"config\""), "{flare}");
    assert!(flare.contains("hearth.toml:2:"), "{flare}");
    let history = home.history();
    let flare_commit = history
        .iter()
        .find(|c| c.files.iter().any(|f| f.contains("flare-config")))
        .unwrap();
    assert_eq!(
        flare_commit.author, "hearth",
        "the flare is hearth's, not a hand edit"
    );
    let edit = history
        .iter()
        .find(|c| c.files.contains(&"hearth.toml".to_string()))
        .unwrap();
    assert_eq!(edit.summary, "edit: hearth.toml (by hand)", "{edit:?}");
    signal(&child, libc::SIGTERM);
    let status = finish(child, Duration::from_secs(5));
    assert!(status.success());
}

#[test]
fn a_state_file_truncated_to_half_is_restored_from_head_and_kept() {
    let home = TestHome::new();
    home.ok(&["init"]);
    home.ok(&["say", "first question"]);
    home.ok(&["run", "--ticks", "1"]);
    let full = home.read("state/messages.json");
    std::fs::write(home.file("state/messages.json"), &full[..full.len() / 2]).unwrap();

    home.ok(&["run", "--ticks", "1"]);
    assert_state_parses(&home);
    let now = home.read("state/messages.json");
    assert!(
        now.contains("first question"),
        "restored from HEAD, then extended"
    );
    let kept: Vec<String> = home
        .list("state")
        .into_iter()
        .filter(|n| n.starts_with("messages.json.broken-"))
        .collect();
    assert_eq!(kept.len(), 1);
    assert_eq!(
        home.read(&format!("state/{}", kept[0])),
        &full[..full.len() / 2]
    );
    let flare = home
        .list("outbox")
        .into_iter()
        .find(|n| n.contains("flare-state"))
        .expect("a state flare");
    let flare = home.read(&format!("outbox/{flare}"));
    assert!(flare.contains("state/messages.json"), "{flare}");
    assert!(flare.contains(&kept[0]), "{flare}");
    assert_eq!(home.ticks()[1]["class"], "ok");
}

#[test]
fn a_torn_ledger_line_is_skipped_named_and_numbering_goes_on() {
    let home = TestHome::new();
    home.ok(&["run", "--ticks", "2"]);
    let ledger = home.read("state/ticks.jsonl");
    let cut = ledger.len() - ledger.lines().last().unwrap().len() / 2 - 1;
    std::fs::write(home.file("state/ticks.jsonl"), &ledger[..cut]).unwrap();

    let text = home.ok(&["status"]);
    assert!(text.contains("state/ticks.jsonl:2: line skipped"), "{text}");
    home.ok(&["run", "--ticks", "1"]);
    let ticks = home.ticks();
    assert_eq!(
        ticks.last().unwrap()["tick"],
        2,
        "tick 2's line was torn, so the next is 2 again"
    );
    assert_eq!(ticks.len(), 2);
}

#[test]
fn a_stale_git_index_lock_is_cleaned_at_start_up() {
    let home = TestHome::new();
    home.ok(&["init"]);
    std::fs::write(home.file(".git/index.lock"), "").unwrap();
    let out = home.output(&["run", "--ticks", "1"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("index.lock"),
        "the removal is logged: {}",
        stderr(&out)
    );
    assert!(!home.file(".git/index.lock").exists());
    assert_eq!(home.history()[0].summary, "tick 1: exit 0 (ok): idle");
}

#[test]
fn say_with_a_stale_lock_removes_it_delivers_and_commits() {
    let home = TestHome::new();
    home.ok(&["init"]);
    // Left by a git killed mid-write: no process is at work on it.
    std::fs::write(home.file(".git/index.lock"), "").unwrap();
    let out = home.output(&["say", "hello"]);
    assert!(out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains("removed") && err.contains("index.lock"),
        "{err}"
    );
    assert_eq!(home.list("inbox").len(), 1);
    assert!(!home.file(".git/index.lock").exists());
    let porcelain = home.git(&["status", "--porcelain"]).stdout;
    assert!(
        porcelain.is_empty(),
        "{}",
        String::from_utf8_lossy(&porcelain)
    );
}

#[test]
fn say_while_a_live_git_holds_the_lock_delivers_and_says_what_to_do() {
    let home = TestHome::new();
    home.ok(&["init"]);
    std::fs::write(home.file(".git/index.lock"), "").unwrap();
    // A writer at work: it has the lock open, as git has while it writes.
    let mut owner = std::process::Command::new("sleep")
        .arg("30")
        .stdin(std::fs::File::open(home.file(".git/index.lock")).unwrap())
        .spawn()
        .unwrap();
    let out = home.output(&["say", "hello"]);
    owner.kill().unwrap();
    owner.wait().unwrap();
    assert!(out.status.success());
    let err = stderr(&out);
    assert!(err.contains("was not committed"), "{err}");
    assert!(err.contains("stale lock"), "{err}");
    assert_eq!(home.list("inbox").len(), 1);
    assert!(
        home.file(".git/index.lock").exists(),
        "a live writer's lock is left"
    );
}

#[test]
fn a_home_that_is_not_a_git_repository_is_named_with_the_fix() {
    let home = TestHome::new();
    std::fs::create_dir_all(&home.path).unwrap();
    std::fs::write(home.file("hearth.toml"), "[tick]\ninterval_s = 60\n").unwrap();
    let out = home.output(&["run", "--ticks", "1"]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("is not a git repository"), "{err}");
    assert!(err.contains("hearth init"), "{err}");

    home.ok(&["init"]);
    assert_eq!(
        home.read("hearth.toml"),
        "[tick]\ninterval_s = 60\n",
        "kept"
    );
    home.ok(&["run", "--ticks", "1"]);
}

#[test]
fn a_non_empty_directory_without_hearth_toml_is_not_taken_over() {
    let home = TestHome::new();
    std::fs::create_dir_all(&home.path).unwrap();
    std::fs::write(home.file("thesis.tex"), "mine").unwrap();
    let out = home.output(&["run", "--ticks", "1"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("not empty"), "{}", stderr(&out));
    assert!(!home.file(".git").exists());
}

#[test]
fn an_inbox_file_of_invalid_utf8_is_answered_and_archived_byte_for_byte() {
    let home = TestHome::new();
    home.ok(&["init"]);
    let bytes = b"caf\xe9 \xff\xfe question";
    std::fs::write(home.file("inbox/bad.txt"), bytes).unwrap();
    let out = home.output(&["run", "--ticks", "1"]);
    assert!(out.status.success());
    assert!(
        stderr(&out).contains("inbox/bad.txt is not valid UTF-8"),
        "{}",
        stderr(&out)
    );
    let outbox = home.list("outbox");
    let reply = home.read(&format!("outbox/{}", outbox[0]));
    assert!(
        reply.contains("inbox/bad.txt is not valid UTF-8"),
        "{reply}"
    );
    assert!(reply.contains("question"), "{reply}");
    assert_eq!(
        std::fs::read(home.file("state/inbox-archive/bad.txt")).unwrap(),
        bytes
    );
    assert_eq!(home.ticks()[0]["class"], "ok");
}

#[test]
fn a_50_mb_inbox_file_is_answered_from_its_head_and_archived_whole() {
    let home = TestHome::new();
    home.ok(&["init"]);
    let line = "a line of a very long log file\n";
    let big = line.repeat(50 * 1024 * 1024 / line.len());
    std::fs::write(home.file("inbox/huge.md"), &big).unwrap();
    let out = home.output(&["run", "--ticks", "1"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let reply = home.read(&format!("outbox/{}", home.list("outbox")[0]));
    assert!(
        reply.contains(&format!("inbox/huge.md is {} bytes", big.len())),
        "{reply}"
    );
    assert_eq!(
        std::fs::metadata(home.file("state/inbox-archive/huge.md"))
            .unwrap()
            .len(),
        big.len() as u64
    );
    let conversation = std::fs::metadata(home.file("state/messages.json"))
        .unwrap()
        .len();
    assert!(
        conversation < 512 * 1024,
        "the model saw a bounded slice: {conversation} bytes"
    );
}

/// The operator's `git commit` in a loop beside a ticking supervisor: the
/// supervisor never exits over it ("current tip is not the first parent"
/// ended it within a few hundred commits), every tick is committed, and
/// every commit of the operator's stays in the history. Then a `kill -9`
/// mid-tick and a restart while the operator keeps committing: the cut
/// tick is finished on whatever tip it finds.
#[test]
fn the_operators_git_commits_beside_a_ticking_supervisor_are_never_fatal() {
    let home = TestHome::with_config("");
    let committing = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
    let operator = {
        let (path, committing) = (home.path.clone(), committing.clone());
        std::thread::spawn(move || {
            let mut made = 0usize;
            while committing.load(std::sync::atomic::Ordering::Relaxed) {
                let ok = std::process::Command::new("git")
                    .args(["-c", "user.name=ada", "-c", "user.email=ada@example.org"])
                    .args(["commit", "-q", "--allow-empty", "-m", "by hand"])
                    .current_dir(&path)
                    .stderr(std::process::Stdio::null())
                    .status()
                    .is_ok_and(|s| s.success());
                made += usize::from(ok);
            }
            made
        })
    };
    let out = home.output(&["run", "--ticks", "40"]);
    assert!(out.status.success(), "{}", stderr(&out));

    // Cut mid-tick, restarted while the commits go on.
    let mut cmd = home.cmd(&["run", "--ticks", "1"]);
    cmd.env("HEARTH_TEST_TICK_DELAY", "20000");
    home.ok(&["say", "one more"]);
    let child = home.spawn_with(cmd);
    home.wait_for(Duration::from_secs(10), "the write-ahead", || {
        !home.list("state/inbox-archive").is_empty()
    });
    signal(&child, libc::SIGKILL);
    let _ = finish(child, Duration::from_secs(5));
    home.wait_for(Duration::from_secs(5), "the orphaned tick to die", || {
        !tick_child_alive(&home)
    });
    let restarted = home.output(&["run", "--ticks", "1"]);
    committing.store(false, std::sync::atomic::Ordering::Relaxed);
    let by_hand = operator.join().unwrap();
    assert!(restarted.status.success(), "{}", stderr(&restarted));
    assert!(by_hand > 0, "the operator committed meanwhile");

    let log = home.git(&["log", "--format=%s"]);
    let log = String::from_utf8_lossy(&log.stdout);
    let ticks = log.lines().filter(|l| l.starts_with("tick ")).count();
    assert_eq!(ticks, 42, "every tick has its commit, the cut one too");
    assert_eq!(
        log.lines().filter(|l| *l == "by hand").count(),
        by_hand,
        "every commit of the operator's is in the history"
    );
    assert_eq!(home.ticks().len(), 42);
    assert_fsck_clean(&home);
}
