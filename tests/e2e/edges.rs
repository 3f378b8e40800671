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
