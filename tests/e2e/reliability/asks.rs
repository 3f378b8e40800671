//! `hearth ask` under load and interruption (issue 30): asks whose tools
//! write a file each, cut short at random moments by Ctrl-C, SIGTERM or
//! `kill -9`, or left to finish, while the supervisor ticks back to back and
//! the operator saves memory files in place and sends messages. What must hold: every file an
//! ask wrote is in a commit of hearth's `ask` or `ask (interrupted)`, never
//! in the operator's `edit: … (by hand)`; the operator's saves are committed
//! while the asks go on; every question has its answer line; nothing is
//! left uncommitted, and no ask's journal is left behind.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::{Operator, Rng, Table};
use crate::common::model_server::{anthropic, Answer, ModelServer};
use crate::common::{finish, finish_after_term, signal, TestHome};

const KEY: &str = "sk-ant-trial-asks";

/// A model that, asked from the shell, writes `memory/ask-N.md` and then
/// answers slowly (a stream a signal can land in the middle of); asked by
/// a tick, answers at once.
fn model() -> ModelServer {
    let next = Arc::new(AtomicUsize::new(0));
    ModelServer::start(vec![Answer::Computed(Arc::new(move |body| {
        let text = body.to_string();
        let from_the_shell = text.contains("This is `hearth ask`");
        let answered_a_tool = text.contains("\"tool_result\"");
        if from_the_shell && !answered_a_tool {
            let n = next.fetch_add(1, Ordering::Relaxed);
            let input = serde_json::json!({
                "path": format!("memory/ask-{n}.md"),
                "content": format!("# Ask {n}\n\nwritten by ask {n}\n"),
            })
            .to_string();
            Answer::Stream {
                events: anthropic::message("", &[("w1", "write", &[input.as_str()])], 50, 5),
                hang: None,
            }
        } else if from_the_shell {
            Answer::Paced {
                events: anthropic::message("Noted, in a file of its own.", &[], 50, 5),
                pause: Duration::from_millis(40),
            }
        } else {
            Answer::Stream {
                events: anthropic::message("Nothing new.", &[], 50, 5),
                hang: None,
            }
        }
    }))])
}

/// `trials` asks, `parallel` at a time, each cut by a random signal (or
/// none) after a random moment.
pub fn interrupted(trials: usize, parallel: usize, seed: u64) -> Table {
    let mut table = Table::new("asks under load and interruption");
    let server = model();
    let home = TestHome::with_config(&format!(
        "[model]\nprovider = \"anthropic\"\nmodel = \"claude-test\"\nbase_url = \"{}\"\n\
         timeout_s = 30\nmax_retries = 0\n[budget]\ndaily_usd = 0\n[healer]\nstreak = 1000000\n",
        server.url
    ));
    let supervisor = home.keyed(&["run", "--interval", "0"], KEY);
    let supervisor = home.spawn_with(supervisor);

    // The operator at work meanwhile: saving memory files in place and
    // sending messages, as in the crash series.
    let operator = Operator::start(&home, 0);
    let next = Arc::new(AtomicUsize::new(0));
    let outcomes = Arc::new(Mutex::new(BTreeMap::<&'static str, usize>::new()));
    let failures = Arc::new(Mutex::new(Vec::<String>::new()));
    let askers: Vec<_> = (0..parallel)
        .map(|lane| {
            let (next, outcomes, failures) = (next.clone(), outcomes.clone(), failures.clone());
            let path = home.path.clone();
            std::thread::spawn(move || {
                let home = TestHome::at(&path);
                let mut rng = Rng::new(seed ^ ((lane as u64 + 1) * 0x9e37_79b9));
                while next.fetch_add(1, Ordering::Relaxed) < trials {
                    let child = home
                        .keyed(&["ask", "note this in a file"], KEY)
                        .stdout(std::process::Stdio::null())
                        .stderr(std::process::Stdio::null())
                        .spawn()
                        .unwrap();
                    std::thread::sleep(Duration::from_millis(rng.below(300)));
                    let (what, sig) = match rng.below(4) {
                        0 => ("Ctrl-C", Some(libc::SIGINT)),
                        1 => ("SIGTERM", Some(libc::SIGTERM)),
                        2 => ("kill -9", Some(libc::SIGKILL)),
                        _ => ("left to finish", None),
                    };
                    if let Some(sig) = sig {
                        signal(&child, sig);
                    }
                    let status = finish(child, Duration::from_secs(60));
                    *outcomes.lock().unwrap().entry(what).or_default() += 1;
                    if sig.is_none() && !status.success() {
                        failures.lock().unwrap().push(format!("{status:?}"));
                    }
                }
            })
        })
        .collect();
    for asker in askers {
        asker.join().unwrap();
    }
    let (edits, sent) = operator.stop();
    if !finish_after_term(supervisor).success() {
        table.fail("the supervisor's stop", home.log());
    }
    // What a kill -9 left is finished at the next look (a start does one).
    let mut last = home.keyed(&["run", "--ticks", "1"], KEY);
    if !last.output().unwrap().status.success() {
        table.fail("the restart", home.log());
    }
    table.trials = trials;
    for (what, n) in outcomes.lock().unwrap().iter() {
        table.count(what, *n);
    }
    for failure in failures.lock().unwrap().iter() {
        table.fail("an ask left to finish failed", failure.clone());
    }
    table.count("messages sent meanwhile", sent.len());
    check(&home, &mut table, &edits);
    table
}

fn check(home: &TestHome, table: &mut Table, edits: &BTreeMap<String, String>) {
    let history = home.history();
    let mut writer = BTreeMap::<String, String>::new();
    for commit in history.iter().rev() {
        for file in commit.files.iter().filter(|f| f.starts_with("memory/ask-")) {
            writer.entry(file.clone()).or_insert(commit.summary.clone());
        }
        if commit.summary.starts_with("edit: ") {
            if let Some(f) = commit
                .files
                .iter()
                .find(|f| f.starts_with("memory/ask-") || f.starts_with("state/"))
            {
                table.fail("an ask's write in the operator's commit", f.clone());
            }
        }
    }
    let written: Vec<String> = home
        .list("memory")
        .into_iter()
        .filter(|n| n.starts_with("ask-"))
        .map(|n| format!("memory/{n}"))
        .collect();
    table.count("files the asks wrote", written.len());
    let mut interrupted_commits = 0;
    for file in &written {
        match writer.get(file) {
            Some(s) if s.starts_with("ask (interrupted): ") => interrupted_commits += 1,
            Some(s) if s.starts_with("ask: ") => {}
            Some(s) => table.fail(
                "an ask's write committed by another",
                format!("{file}: {s}"),
            ),
            None => table.fail("an ask's write never committed", file.clone()),
        }
    }
    table.count(
        "of them in an `ask (interrupted)` commit",
        interrupted_commits,
    );
    let hand = history
        .iter()
        .filter(|c| c.summary.starts_with("edit: "))
        .count();
    table.count("hand-edit commits meanwhile", hand);
    for (rel, text) in edits {
        let head = home.git(&["show", &format!("HEAD:{rel}")]).stdout;
        if head != text.as_bytes() {
            table.fail("hand edit not committed", rel.clone());
        }
    }
    let sessions = std::fs::read_to_string(home.file("state/sessions.jsonl")).unwrap_or_default();
    let lines: Vec<serde_json::Value> = sessions
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    for question in lines.iter().filter(|l| l["kind"] == "question") {
        let answered = lines
            .iter()
            .any(|l| l["kind"] == "answer" && l["id"] == question["id"]);
        if !answered {
            table.fail(
                "a question without its answer line",
                question["id"].to_string(),
            );
        }
    }
    if !home.list(".hearth/asks").is_empty() {
        table.fail(
            "a journal left behind",
            format!("{:?}", home.list(".hearth/asks")),
        );
    }
    let porcelain = home.git(&["status", "--porcelain"]).stdout;
    if !porcelain.is_empty() {
        table.fail(
            "left uncommitted",
            String::from_utf8_lossy(&porcelain).into_owned(),
        );
    }
    let fsck = home.git(&["fsck", "--strict", "--no-progress"]);
    if !fsck.status.success() {
        table.fail(
            "git fsck",
            String::from_utf8_lossy(&fsck.stderr).into_owned(),
        );
    }
}
