//! A password in a peer's URL is never repeated: refused at start with the
//! fix, never committed (nor pushed) while a supervisor runs, and nowhere
//! in the home, its history, the published repository, the log, status,
//! `collab list` or metrics.

#![allow(clippy::disallowed_methods)] // fixtures, not state

use std::process::Command;
use std::time::Duration;

use super::*;

const SECRET: &str = "hunter2-DO-NOT-REPEAT";

/// Every place `SECRET` must not be, searched.
fn assert_nowhere(home: &TestHome, bare: &std::path::Path, said: &[String]) {
    for entry in walkdir::WalkDir::new(&home.path).into_iter().flatten() {
        if !entry.file_type().is_file() || entry.file_name() == "hearth.toml" {
            continue;
        }
        let bytes = std::fs::read(entry.path()).unwrap_or_default();
        assert!(
            !String::from_utf8_lossy(&bytes).contains(SECRET),
            "the password is in {}",
            entry.path().display()
        );
    }
    for git_dir in [home.path.join(".git"), bare.to_path_buf()] {
        let history = Command::new("git")
            .arg("--git-dir")
            .arg(&git_dir)
            .args(["log", "--all", "-p", "--format=commit %H %s%n%B"])
            .output()
            .unwrap();
        let history = String::from_utf8_lossy(&history.stdout);
        assert!(!history.is_empty(), "{}", git_dir.display());
        if let Some(at) = history.find(SECRET) {
            // Which commit: the header line before it.
            let commit = history[..at]
                .rfind("commit ")
                .and_then(|c| history[c..].lines().next())
                .unwrap_or("");
            panic!(
                "the password is in {}'s history, in {commit}",
                git_dir.display()
            );
        }
    }
    for text in said {
        assert!(!text.contains(SECRET), "the password is said: {text}");
    }
}

#[test]
fn a_password_in_a_peer_url_is_refused_with_the_fix_and_never_repeated() {
    let root = tempfile::tempdir().unwrap();
    let bare = root.path().join("published.git");
    crate::common::git_daemon::init_bare(&bare);
    let home = TestHome::at(&root.path().join("bob"));
    home.ok(&["init"]);
    home.git(&["remote", "add", "origin", &bare.display().to_string()]);
    let clean = "[git]\npush = true\n[tick]\ninterval_s = 1\n";
    std::fs::write(home.file("hearth.toml"), clean).unwrap();
    home.git(&["commit", "-qam", "push"]);

    // While the supervisor runs, the operator adds a peer with a password
    // in its URL, and a note.
    let supervisor = home.spawn(&["run"]);
    home.wait_for(Duration::from_secs(30), "a first tick", || {
        !home.ticks().is_empty()
    });
    let with_password =
        format!("{clean}[peers]\nalice = \"https://me:{SECRET}@127.0.0.1:1/alice.git\"\n");
    std::fs::write(home.file("hearth.toml"), &with_password).unwrap();
    std::fs::write(home.file("memory/notes-today.md"), "A note.\n").unwrap();
    home.wait_for(Duration::from_secs(30), "the note committed", || {
        let tracked = home.git(&["ls-files", "memory/notes-today.md"]).stdout;
        !tracked.is_empty()
    });
    let ticks = home.ticks().len();
    home.wait_for(Duration::from_secs(30), "a tick after the edit", || {
        home.ticks().len() > ticks + 1
    });
    assert!(crate::common::finish_after_term(supervisor).success());
    let shown = home.git(&["show", "HEAD:hearth.toml"]).stdout;
    assert_eq!(String::from_utf8_lossy(&shown), clean, "never committed");

    // At a start it is refused, with the fix, the password masked.
    let run = home.cmd(&["run", "--ticks", "1"]).output().unwrap();
    assert!(!run.status.success());
    let refused = String::from_utf8_lossy(&run.stderr).into_owned();
    assert!(
        refused.contains("https://me:***@127.0.0.1:1/alice.git")
            && refused.contains("HEARTH_GIT_USERNAME")
            && refused.contains("HEARTH_GIT_PASSWORD"),
        "{refused}"
    );
    let said: Vec<String> = [
        &["status"][..],
        &["status", "--json"],
        &["collab", "list"],
        &["metrics"],
    ]
    .iter()
    .map(|args| {
        let out = home.cmd(args).output().unwrap();
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
    .chain([refused, home.log()])
    .collect();
    assert_nowhere(&home, &bare, &said);
}
