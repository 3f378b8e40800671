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
