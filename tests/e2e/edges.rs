//! The edges issue 30's trials found: another git at work, an interrupted
//! `hearth ask`, hand edits under a steady stream of asks. Each drives the
//! real binary the way the trial did and checks what the operator would
//! see in `git log` and `hearth status`.

#![allow(clippy::disallowed_methods)] // fixtures, not state

use std::process::Command;
use std::time::Duration;

use crate::common::{finish, TestHome};

/// The operator's `git commit -a`, its editor open until `go` exists: it
/// holds `.git/index.lock` all that time, as git does.
fn git_commit_with_editor_open(home: &TestHome, go: &std::path::Path) -> std::process::Child {
    let editor = format!(
        "sh -c 'while [ ! -e {} ]; do sleep 0.02; done; echo \"operator: by git\" > \"$1\"' editor",
        go.display()
    );
    let child = Command::new("git")
        .current_dir(&home.path)
        .env("GIT_EDITOR", editor)
        .args([
            "-c",
            "user.name=operator",
            "-c",
            "user.email=operator@localhost",
            "commit",
            "-a",
            "-q",
        ])
        .spawn()
        .unwrap();
    home.wait_for(Duration::from_secs(10), "git to take index.lock", || {
        home.file(".git/index.lock").exists()
    });
    child
}

#[test]
fn a_git_commit_holding_the_index_lock_puts_the_supervisors_commits_off_and_they_land_after() {
    // Waits of 0 s: the put-off is reached at once, not after 5 s.
    let home = TestHome::with_config("[git]\nlock_wait_s = 0\n");
    home.ok(&["run", "--ticks", "1"]);
    std::fs::write(home.file("memory/identity.md"), "# Me\n\nedited in git\n").unwrap();
    let go = home.path.with_file_name("editor-may-finish");
    let git = git_commit_with_editor_open(&home, &go);

    let supervisor = home.spawn(&["run", "--ticks", "2"]);
    home.wait_for(
        Duration::from_secs(30),
        "the supervisor to put its commit off",
        || home.log().contains("hearth's commit waits for it"),
    );
    let status = home.ok(&["status"]);
    assert!(
        status.contains("waiting for another git to let go of its lock"),
        "{status}"
    );
    std::fs::write(&go, "").unwrap();
    assert!(finish(git, Duration::from_secs(10)).success());
    let status = finish(supervisor, Duration::from_secs(60));
    assert!(status.success(), "{status:?}\n{}", home.log());

    let history = home.history();
    let subjects: Vec<&str> = history.iter().map(|c| c.summary.as_str()).collect();
    assert!(subjects.contains(&"operator: by git"), "{subjects:?}");
    for tick in 1..=3 {
        let made = subjects
            .iter()
            .filter(|s| s.starts_with(&format!("tick {tick}: ")))
            .count();
        assert_eq!(made, 1, "tick {tick} has one commit: {subjects:?}");
    }
    assert_eq!(home.ticks().len(), 3);
    assert!(
        home.ticks().iter().all(|t| t["class"] == "ok"),
        "a wait for git is no failure: {:?}",
        home.ticks()
    );
    let porcelain = home.git(&["status", "--porcelain"]).stdout;
    assert!(
        porcelain.is_empty(),
        "{}",
        String::from_utf8_lossy(&porcelain)
    );
    assert!(home.log().contains("git let go"), "{}", home.log());
}

/// The files a tick wrote and could not commit yet (its commit put off
/// for another git's lock; the marker says a tick is unfinished) are the
/// tick's, never the operator's: a hand edit saved meanwhile waits for the
/// tick's commit, and the tick's files do not ride in it "by hand".
#[test]
fn a_put_off_ticks_writes_never_ride_in_a_hand_edit_commit() {
    let home = TestHome::with_config("[git]\nlock_wait_s = 0\n");
    home.ok(&["run", "--ticks", "1"]);
    std::fs::write(home.file("memory/identity.md"), "# Me\n\nedited in git\n").unwrap();
    let go = home.path.with_file_name("editor-may-finish");
    let git = git_commit_with_editor_open(&home, &go);

    let supervisor = home.spawn(&["run", "--ticks", "2"]);
    home.wait_for(
        Duration::from_secs(30),
        "the supervisor to put tick 2's commit off",
        || home.log().contains("hearth's commit waits for it"),
    );
    // Git lets go, and the operator saves a note at once: its hand-edit
    // commit would come before the put-off one.
    std::fs::write(&go, "").unwrap();
    assert!(finish(git, Duration::from_secs(10)).success());
    std::fs::write(home.file("memory/mine.md"), "the operator's\n").unwrap();
    let status = finish(supervisor, Duration::from_secs(60));
    assert!(status.success(), "{status:?}\n{}", home.log());

    let subjects: Vec<String> = home.history().iter().map(|c| c.summary.clone()).collect();
    let tick_2 = subjects
        .iter()
        .filter(|s| s.starts_with("tick 2: "))
        .count();
    assert_eq!(tick_2, 1, "tick 2 has its commit: {subjects:?}");
    // Every commit made "by hand" since the put-off holds the operator's
    // note and nothing the tick wrote.
    let git_done = home.git(&["log", "--format=%H", "--grep=^operator: by git"]);
    let since = format!("{}..HEAD", String::from_utf8_lossy(&git_done.stdout).trim());
    let by_hand = home.git(&["log", "--format=%H %s", "--grep=(by hand)", &since]);
    assert!(
        String::from_utf8_lossy(&by_hand.stdout).contains("(by hand)"),
        "the operator's note is committed, after the tick's"
    );
    for line in String::from_utf8_lossy(&by_hand.stdout).lines() {
        let (commit, subject) = line.split_once(' ').unwrap();
        let files = home.git(&["show", "--format=", "--name-only", commit]);
        let files = String::from_utf8_lossy(&files.stdout).into_owned();
        assert_eq!(
            files.trim(),
            "memory/mine.md",
            "{subject:?} took the tick's writes as the operator's"
        );
    }
}

#[test]
fn hand_edits_are_committed_while_asks_keep_overlapping() {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::sync::Arc;

    let home = TestHome::with_config("");
    home.ok(&["run", "--ticks", "1"]);
    let supervisor = home.spawn(&["run", "--interval", "0"]);
    let stop = Arc::new(AtomicBool::new(false));
    let answered = Arc::new(AtomicUsize::new(0));
    // Eight shells asking back to back: at almost every moment one runs.
    let askers: Vec<_> = (0..8)
        .map(|n| {
            let (stop, answered, path) = (stop.clone(), answered.clone(), home.path.clone());
            std::thread::spawn(move || {
                let home = TestHome::at(&path);
                let mut failed = Vec::new();
                while !stop.load(Ordering::Relaxed) {
                    let out = home.output(&["ask", &format!("what is note {n}?")]);
                    if out.status.success() {
                        answered.fetch_add(1, Ordering::Relaxed);
                    } else {
                        failed.push(String::from_utf8_lossy(&out.stderr).into_owned());
                    }
                }
                failed
            })
        })
        .collect();
    home.wait_for(Duration::from_secs(30), "the asks to get going", || {
        answered.load(Ordering::Relaxed) >= 16
    });
    // Saved while the asks go on: committed as the operator's meanwhile.
    std::fs::write(home.file("memory/hand.md"), "# Hand\n\nsaved under asks\n").unwrap();
    let ticks_at_save = home.ticks().len() as u64;
    home.wait_for(
        Duration::from_secs(30),
        "the hand edit to be committed while asks run",
        || {
            let log = home
                .git(&["log", "--format=%an %s", "--", "memory/hand.md"])
                .stdout;
            String::from_utf8_lossy(&log).contains("operator edit: memory/hand.md (by hand)")
        },
    );
    let during = answered.load(Ordering::Relaxed);
    stop.store(true, Ordering::Relaxed);
    let failures: Vec<String> = askers.into_iter().flat_map(|a| a.join().unwrap()).collect();
    assert!(failures.is_empty(), "asks failed: {failures:?}");
    assert!(crate::common::finish_after_term(supervisor).success());

    let history = home.history();
    // Committed at the next look (a tick or two later: the watcher's word
    // may come after one), where it used to wait for a gap among the asks
    // for hundreds of ticks (26 s here, 90 s and more in the trial).
    let edit = history
        .iter()
        .position(|c| c.summary == "edit: memory/hand.md (by hand)")
        .unwrap();
    let ticks_before_edit = history[edit..]
        .iter()
        .filter(|c| c.summary.starts_with("tick "))
        .count() as u64;
    assert!(
        ticks_before_edit <= ticks_at_save + 3,
        "the hand edit waited from tick {ticks_at_save} to tick {ticks_before_edit}"
    );
    let asks = history
        .iter()
        .filter(|c| c.summary.starts_with("ask: "))
        .count();
    assert_eq!(asks, answered.load(Ordering::Relaxed), "one commit per ask");
    assert!(during >= 16);
    for commit in history.iter().filter(|c| c.summary.starts_with("edit: ")) {
        assert!(
            !commit.files.iter().any(|f| f.starts_with("state/")),
            "an ask's state in the operator's commit: {:?}",
            commit.files
        );
    }
}

mod interrupted_ask {
    use super::*;
    use crate::common::model_server::{anthropic, Answer, ModelServer};
    use crate::common::signal;

    const KEY: &str = "sk-ant-test-edges";

    /// A home whose model writes `memory/note.md` at once, then keeps the
    /// ask's second request open (the ask is mid-way when it is cut), then
    /// answers a tick.
    fn home_and_model() -> (ModelServer, TestHome) {
        let write = serde_json::json!({"path": "memory/note.md", "content": "# Note\n\nnoted\n"})
            .to_string();
        let server = ModelServer::start(vec![
            Answer::Stream {
                events: anthropic::message("", &[("t1", "write", &[write.as_str()])], 10, 1),
                hang: None,
            },
            Answer::Stream {
                events: Vec::new(),
                hang: Some(Duration::from_secs(30)),
            },
            Answer::Stream {
                events: anthropic::message("tick done", &[], 10, 1),
                hang: None,
            },
        ]);
        let home = TestHome::with_config(&format!(
            "[model]\nprovider = \"anthropic\"\nmodel = \"claude-test\"\nbase_url = \"{}\"\n\
             timeout_s = 60\nmax_retries = 0\n[budget]\ndaily_usd = 0\n",
            server.url
        ));
        (server, home)
    }

    /// Runs `hearth ask "note this"` until its tool has written the file,
    /// then sends `sig`; returns its exit status and stderr.
    fn ask_then(home: &TestHome, sig: i32) -> (std::process::ExitStatus, String) {
        let child = home
            .keyed(&["ask", "note this"], KEY)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        home.wait_for(Duration::from_secs(20), "the ask's write", || {
            home.file("memory/note.md").exists()
        });
        // The journal is brought up to date right after the call returns.
        std::thread::sleep(Duration::from_millis(100));
        signal(&child, sig);
        let out = child.wait_with_output().unwrap();
        (
            out.status,
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    fn assert_the_asks_own_commit(home: &TestHome, why: &str) {
        let history = home.history();
        let interrupted: Vec<_> = history
            .iter()
            .filter(|c| c.summary == "ask (interrupted): note this")
            .collect();
        assert_eq!(interrupted.len(), 1, "{:?}", summaries(home));
        let commit = interrupted[0];
        assert_eq!(commit.author, "hearth");
        assert!(
            commit.files.contains(&"memory/note.md".to_string()),
            "{:?}",
            commit.files
        );
        assert!(commit.files.contains(&"state/sessions.jsonl".to_string()));
        for edit in history.iter().filter(|c| c.summary.starts_with("edit: ")) {
            assert!(
                !edit
                    .files
                    .iter()
                    .any(|f| f == "memory/note.md" || f.starts_with("state/")),
                "the ask's writes in the operator's commit: {:?}",
                edit.files
            );
        }
        let sessions = home.read("state/sessions.jsonl");
        let lines: Vec<serde_json::Value> = sessions
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let question = lines.iter().find(|l| l["asked"] == "note this").unwrap();
        let last = lines
            .iter()
            .find(|l| l["kind"] == "answer" && l["id"] == question["id"])
            .unwrap();
        assert_eq!(last["complete"], false);
        assert!(
            last["interrupted"].as_str().unwrap().contains(why),
            "{last}"
        );
        assert!(home.list(".hearth/asks").is_empty(), "the journal is gone");
    }

    fn summaries(home: &TestHome) -> Vec<String> {
        home.history().into_iter().map(|c| c.summary).collect()
    }

    #[test]
    fn ctrl_c_commits_what_the_ask_wrote_as_the_asks() {
        let (_server, home) = home_and_model();
        let (status, stderr) = ask_then(&home, libc::SIGINT);
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.code(), Some(130), "{status:?} {stderr}");
        assert!(stderr.contains("committed what the ask wrote"), "{stderr}");
        // What the operator does next does not take it for theirs.
        home.ok(&["say", "hello"]);
        assert!(status.signal().is_none());
        assert_the_asks_own_commit(&home, "SIGINT");
        let porcelain = home
            .git(&["status", "--porcelain", "memory", "state"])
            .stdout;
        assert!(
            porcelain.is_empty(),
            "{}",
            String::from_utf8_lossy(&porcelain)
        );
    }

    #[test]
    fn sigterm_commits_what_the_ask_wrote_as_the_asks() {
        let (_server, home) = home_and_model();
        let (status, stderr) = ask_then(&home, libc::SIGTERM);
        assert_eq!(status.code(), Some(143), "{status:?} {stderr}");
        assert_the_asks_own_commit(&home, "SIGTERM");
    }

    #[test]
    fn after_kill_9_the_supervisors_next_look_commits_it_as_the_asks() {
        let (_server, home) = home_and_model();
        let (status, _) = ask_then(&home, libc::SIGKILL);
        assert!(!status.success());
        home.ok(&["say", "hello"]);
        let out = home.keyed(&["run", "--ticks", "1"], KEY).output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_the_asks_own_commit(&home, "ended before its commit");
    }
}

/// A pack without its index, as a `kill -9` between the renames of a pack
/// and its index leaves it: made by git from the home's own objects.
fn orphan_pack(home: &TestHome, age: &str) -> std::path::PathBuf {
    let dir = tempfile::tempdir().unwrap();
    let objects = home.git(&["rev-list", "--objects", "HEAD"]).stdout;
    let mut pack = Command::new("git")
        .current_dir(&home.path)
        .args(["pack-objects", "-q"])
        .arg(dir.path().join("pack"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    pack.stdin.take().unwrap().write_all(&objects).unwrap();
    let out = pack.wait_with_output().unwrap();
    let name = String::from_utf8(out.stdout).unwrap().trim().to_string();
    // A name of its own: another test's pack of the same objects would
    // have the same one.
    let to = home.file(&format!(
        ".git/objects/pack/pack-{}{}.pack",
        &name[..38],
        if age == "now" { "00" } else { "11" }
    ));
    std::fs::copy(dir.path().join(format!("pack-{name}.pack")), &to).unwrap();
    let touched = Command::new("touch")
        .args(["-d", age])
        .arg(&to)
        .status()
        .unwrap();
    assert!(touched.success());
    to
}

#[test]
fn a_pack_left_without_its_index_by_a_kill_9_is_removed_at_the_next_pack() {
    let home = TestHome::with_config("[git]\npack_loose = 5\n");
    home.ok(&["run", "--ticks", "1"]);
    let old = orphan_pack(&home, "2 hours ago");
    let young = orphan_pack(&home, "now");
    let garbage = |home: &TestHome| {
        let out = home.git(&["count-objects", "-v"]).stdout;
        String::from_utf8_lossy(&out)
            .lines()
            .find_map(|l| {
                l.strip_prefix("garbage: ")
                    .map(|n| n.parse::<u64>().unwrap())
            })
            .unwrap()
    };
    assert_eq!(garbage(&home), 2, "git counts both as garbage");

    home.ok(&["run", "--ticks", "3"]);
    assert!(!old.exists(), "the old orphan is removed at the next pack");
    assert!(
        young.exists(),
        "a young one may be another git's pack whose index is on its way"
    );
    assert_eq!(garbage(&home), 1);
    let fsck = home.git(&["fsck", "--strict", "--no-progress"]);
    assert!(
        fsck.status.success(),
        "{}",
        String::from_utf8_lossy(&fsck.stderr)
    );
}

/// A tick whose ledger line was written and whose budget save was cut (a
/// full disk, a kill) is recorded but not counted: the recovery counts
/// its spend, once, however many times it runs.
#[test]
fn a_recorded_tick_whose_budget_save_was_cut_is_counted_once() {
    let home = TestHome::with_config("");
    home.ok(&["run", "--ticks", "1"]);
    // What the cut leaves: tick 2's ledger line (it paid $0.50), its
    // marker, and a budget that never heard of it.
    let line = home.read("state/ticks.jsonl");
    let mut record: serde_json::Value = serde_json::from_str(line.lines().last().unwrap()).unwrap();
    record["tick"] = 2.into();
    record["cost_usd"] = 0.5.into();
    let mut ledger = std::fs::OpenOptions::new()
        .append(true)
        .open(home.file("state/ticks.jsonl"))
        .unwrap();
    std::io::Write::write_all(&mut ledger, format!("{record}\n").as_bytes()).unwrap();
    let opened = hearth::home::Home::open(&home.path).unwrap();
    let start = chrono::DateTime::parse_from_rfc3339(crate::common::PINNED_NOW)
        .unwrap()
        .to_utc();
    let marker = hearth::run_state::phase::TickInProgress { tick: 2, start };
    hearth::run_state::phase::mark_tick(&opened, &marker).unwrap();
    let spent = |home: &TestHome| {
        let text = std::fs::read_to_string(home.file("state/budget.json")).unwrap_or_default();
        let budget: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
        budget["days"]["2026-11-24"].as_f64().unwrap_or(0.0)
    };
    // `--ticks 0`: the start-up's recovery, and no tick after it.
    home.ok(&["run", "--ticks", "0"]);
    assert!(
        (spent(&home) - 0.5).abs() < 1e-9,
        "counted: {}",
        spent(&home)
    );
    // A second recovery of the same tick (its marker left again) does
    // not count it twice.
    hearth::run_state::phase::mark_tick(&opened, &marker).unwrap();
    home.ok(&["run", "--ticks", "0"]);
    assert!((spent(&home) - 0.5).abs() < 1e-9, "once: {}", spent(&home));
}
