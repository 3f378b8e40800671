//! `hearth proposals accept` cut by `kill -9` at random moments (issue
//! 41): the accept pauses between its writes (`HEARTH_TEST_ACCEPT_PAUSE_MS`)
//! so the kill lands before, between or after them. What must hold after
//! the next hearth command: `main` holds all of the proposal, in its
//! `proposal N accepted` commit, or none of it (the proposal still open);
//! nothing of it is left in the tree; and after the supervisor's next look
//! no commit of the operator's carries a proposal's line.

use std::collections::BTreeMap;
use std::time::Duration;

use super::{Rng, Table};
use crate::common::{finish, signal, TestHome, PINNED_NOW};

const IDENTITY: &str = "# Who I am\n\nI keep the lighthouse log.\n";

/// `trials` accepts, each killed after a random moment.
pub fn accept_killed(trials: usize, seed: u64) -> Table {
    let mut table = Table::new("proposals accept under kill -9");
    table.trials = trials;
    let mut rng = Rng::new(seed);
    let home = TestHome::new();
    home.ok(&["init"]);
    std::fs::write(home.file("memory/identity.md"), IDENTITY).unwrap();
    home.git(&["add", "-A"]);
    home.git(&["commit", "-qm", "the operator's identity"]);
    let lib = hearth::home::Home::at(&home.path).unwrap();
    let now = chrono::DateTime::parse_from_rfc3339(PINNED_NOW)
        .unwrap()
        .with_timezone(&chrono::Utc);
    for t in 0..trials {
        let line = format!("Proposed line {t}.");
        let identity = show(&home, "HEAD:memory/identity.md");
        let files = BTreeMap::from([
            (
                "memory/identity.md".to_string(),
                Some(format!("{identity}{line}\n").into_bytes()),
            ),
            (
                format!("memory/core/trial-{t}.md"),
                Some(format!("# Trial {t}\n\n{line}\n").into_bytes()),
            ),
        ]);
        let draft = hearth::proposals::Draft {
            title: format!("trial {t}"),
            why: "a trial of a killed accept".into(),
            by: "trial".into(),
            files,
            ..Default::default()
        };
        let n = hearth::proposals::propose(&lib, None, &draft, now)
            .unwrap()
            .n;
        let mut accept = home.cmd(&["proposals", "accept", &n.to_string()]);
        accept.env("HEARTH_TEST_ACCEPT_PAUSE_MS", "15");
        let child = home.spawn_with(accept);
        // Every other kill lands once the accept has begun (its journal
        // exists), so a slow machine's start-up cannot make them all
        // early; the others at any moment from the start.
        if t % 2 == 0 {
            let journal = home.file(".hearth/deciding.json");
            let began = std::time::Instant::now();
            while !journal.exists() && began.elapsed() < Duration::from_secs(10) {
                std::thread::sleep(Duration::from_millis(1));
            }
            std::thread::sleep(Duration::from_millis(rng.below(50)));
        } else {
            std::thread::sleep(Duration::from_millis(rng.below(90)));
        }
        signal(&child, libc::SIGKILL);
        finish(child, Duration::from_secs(20));
        // The next hearth command finishes or undoes it.
        let next = home.output(&["proposals", "--all"]);
        let said = String::from_utf8_lossy(&next.stderr);
        if said.contains("undone") {
            table.count("cut before its commit: undone", 1);
        } else if said.contains("it stands") {
            table.count("cut after its commit: finished", 1);
        }
        let subject = String::from_utf8_lossy(&home.git(&["log", "-1", "--format=%s"]).stdout)
            .trim()
            .to_string();
        let accepted = subject.starts_with(&format!("proposal {n} accepted"));
        table.count(
            if accepted {
                "on main, whole"
            } else {
                "not on main"
            },
            1,
        );
        let at_head = show(&home, "HEAD:memory/identity.md").contains(&line)
            || home
                .git(&["cat-file", "-e", &format!("HEAD:memory/core/trial-{t}.md")])
                .status
                .success();
        if at_head != accepted {
            table.fail(
                "half applied or misattributed on main",
                format!("trial {t}: HEAD is {subject:?}"),
            );
        }
        // The book on disk (a new proposal's entry is committed with the
        // next tick, as the rest of state/ is).
        let book = home.read("state/proposals.json");
        let status = serde_json::from_str::<serde_json::Value>(&book)
            .ok()
            .and_then(|b| {
                b["proposals"]
                    .as_array()?
                    .iter()
                    .find(|p| p["n"] == n)
                    .map(|p| p["status"].as_str().unwrap_or("").to_string())
            })
            .unwrap_or_default();
        if status != if accepted { "accepted" } else { "open" } {
            table.fail("the book says otherwise", format!("trial {t}: {status}"));
        }
        let dirty =
            String::from_utf8_lossy(&home.git(&["status", "--porcelain", "--", "memory"]).stdout)
                .trim()
                .to_string();
        if !dirty.is_empty() {
            table.fail("left in the tree", format!("trial {t}: {dirty}"));
        }
        if !accepted {
            // Dropped, so the next trial's identity starts from main.
            home.ok(&["proposals", "reject", &n.to_string(), "--reason", "a trial"]);
        }
    }
    // The supervisor's look: nothing of the proposals is in a hand edit
    // (the accepts are the operator's commits too, by design).
    home.ok(&["run", "--ticks", "1"]);
    let theirs = String::from_utf8_lossy(
        &home
            .git(&[
                "log",
                "-p",
                "--author=operator",
                "--grep=(by hand)",
                "--",
                "memory",
            ])
            .stdout,
    )
    .into_owned();
    if theirs.contains("Proposed line") {
        let at = theirs
            .lines()
            .position(|l| l.contains("Proposed line"))
            .unwrap_or(0);
        table.fail(
            "a proposal's line committed as the operator's",
            theirs
                .lines()
                .skip(at.saturating_sub(12))
                .take(14)
                .collect::<Vec<_>>()
                .join(" | "),
        );
    }
    if !home.git(&["fsck", "--strict"]).status.success() {
        table.fail("git fsck", String::new());
    }
    table
}

fn show(home: &TestHome, spec: &str) -> String {
    String::from_utf8_lossy(&home.git(&["show", spec]).stdout).into_owned()
}
