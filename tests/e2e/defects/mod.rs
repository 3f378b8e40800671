//! Regression tests, one per defect the crash, bad-input and sandbox trials
//! found (issue 11), each named after what went wrong.

#![allow(clippy::disallowed_methods)] // fixtures, not state

use std::os::unix::ffi::OsStrExt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::common::model_server::{anthropic, Answer, ModelServer};
use crate::common::{finish, TestHome};

mod state_and_input;

const KEY: &str = "sk-ant-test-defects";

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn porcelain(home: &TestHome) -> String {
    String::from_utf8_lossy(&home.git(&["status", "--porcelain"]).stdout).into_owned()
}

/// A home whose model is a local server answering with `script`.
fn scripted(script: Vec<Vec<String>>, extra: &str) -> (ModelServer, TestHome) {
    let server = ModelServer::start(
        script
            .into_iter()
            .map(|events| Answer::Stream { events, hang: None })
            .collect(),
    );
    let home = TestHome::with_config(&format!(
        "[model]\nprovider = \"anthropic\"\nmodel = \"claude-test\"\nbase_url = \"{}\"\n\
         timeout_s = 5\nmax_retries = 0\n[budget]\ndaily_usd = 0\n{extra}",
        server.url
    ));
    (server, home)
}

fn run_with_key(home: &TestHome, args: &[&str]) -> std::process::Output {
    home.keyed(args, KEY).output().unwrap()
}

/// One model turn calling `tool` with `input`, then a plain answer.
fn calls(tool: &str, input: &serde_json::Value) -> Vec<Vec<String>> {
    let args = input.to_string();
    vec![
        anthropic::message("", &[("t1", tool, &[args.as_str()])], 10, 1),
        anthropic::message("done", &[], 10, 1),
    ]
}

#[test]
fn an_editor_saving_in_place_during_commits_never_stops_the_supervisor() {
    let home = TestHome::with_config("");
    home.ok(&["init"]);
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let (stop, dir) = (stop.clone(), home.path.join("memory"));
        std::thread::spawn(move || {
            let mut i = 0u64;
            while !stop.load(Ordering::Relaxed) {
                i += 1;
                // In place, like `seq $i > note.md`: truncate, then write.
                let text: String = (1..=i % 500 + 1).map(|n| format!("{n}\n")).collect();
                std::fs::write(dir.join("note.md"), &text).unwrap();
                std::fs::write(dir.join("other.md"), text.repeat(20)).unwrap();
            }
            i
        })
    };
    let out = home.output(&["run", "--ticks", "40"]);
    stop.store(true, Ordering::Relaxed);
    let writes = writer.join().unwrap();
    assert!(
        out.status.success(),
        "exit {:?}: {}",
        out.status,
        stderr(&out)
    );
    assert!(writes > 100, "the editor saved {writes} times meanwhile");
    assert_eq!(home.ticks().len(), 40, "every tick ran");
    // Whatever was read mid-write, the final content ends up committed.
    home.ok(&["run", "--ticks", "1"]);
    assert_eq!(porcelain(&home), "", "nothing left uncommitted");
    let committed = home.git(&["show", "HEAD:memory/note.md"]).stdout;
    assert_eq!(
        committed,
        std::fs::read(home.file("memory/note.md")).unwrap()
    );
    let edits = home
        .history()
        .into_iter()
        .filter(|c| c.files.iter().any(|f| f == "memory/note.md"))
        .collect::<Vec<_>>();
    assert!(
        edits.iter().all(|c| c.author == "operator"),
        "the operator's file is never in the agent's commits: {:?}",
        edits
            .iter()
            .map(|c| (&c.author, &c.summary))
            .collect::<Vec<_>>()
    );
    let fsck = home.git(&["fsck", "--strict"]);
    assert!(
        fsck.status.success(),
        "{}",
        String::from_utf8_lossy(&fsck.stderr)
    );
}

#[test]
fn a_kill_after_the_ledger_line_commits_that_tick_and_records_no_phantom_crash() {
    let home = TestHome::with_config("");
    home.ok(&["run", "--ticks", "1"]);
    // The state a kill -9 leaves between the ledger append and clearing the
    // running-tick marker: tick 2 is in the ledger, its marker (in today's
    // and the previous version's format) still there, nothing committed.
    let mut line: serde_json::Value = home.ticks()[0].clone();
    line["tick"] = 2.into();
    let start = line["start"].as_str().unwrap().to_string();
    let mut ledger = home.read("state/ticks.jsonl");
    ledger.push_str(&format!("{line}\n"));
    std::fs::write(home.file("state/ticks.jsonl"), ledger).unwrap();
    std::fs::write(
        home.file(".hearth/tick.json"),
        format!("{{\"tick\":2,\"start\":\"{start}\"}}"),
    )
    .unwrap();

    let out = home.output(&["run", "--ticks", "1"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let ticks = home.ticks();
    let numbers: Vec<u64> = ticks.iter().map(|t| t["tick"].as_u64().unwrap()).collect();
    assert_eq!(numbers, vec![1, 2, 3], "no tick number reused or skipped");
    assert!(
        ticks.iter().all(|t| t["class"] == "ok"),
        "no phantom crash: {ticks:?}"
    );
    let history = home.history();
    let tick2 = history
        .iter()
        .find(|c| c.summary.starts_with("tick 2: exit 0 (ok)"))
        .expect("tick 2 has its own commit");
    assert!(tick2.files.contains(&"state/ticks.jsonl".to_string()));
    assert_eq!(home.good_ref().as_deref(), Some(history[0].id.as_str()));
    assert!(!home.file(".hearth/tick.json").exists());
    let healer: serde_json::Value = serde_json::from_str(&home.read("state/healer.json")).unwrap();
    assert!(healer["streak"].as_array().unwrap().is_empty(), "{healer}");
}

#[test]
fn the_agent_cannot_hide_files_from_history_with_an_ignore_file() {
    let (_server, home) = scripted(
        calls(
            "write",
            &serde_json::json!({"path": "memory/.gitignore", "content": "*\n"}),
        ),
        "",
    );
    let out = run_with_key(&home, &["run", "--ticks", "1"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!home.file("memory/.gitignore").exists(), "refused");
    // Refused, and the refusal went back to the model, which finished.
    let tick = &home.ticks()[0];
    assert_eq!(tick["class"], "ok", "{tick}");
    assert_eq!(
        crate::common::tool_recovery(tick, "git control file").as_deref(),
        Some("recovered"),
        "{tick}"
    );

    // One already there (written before this fix) hides nothing any more.
    std::fs::write(home.file("memory/.gitignore"), "*\n").unwrap();
    std::fs::write(home.file("memory/hand.md"), "the operator's note").unwrap();
    let out = run_with_key(&home, &["run", "--ticks", "1"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(porcelain(&home), "");
    let files = String::from_utf8_lossy(&home.git(&["ls-files", "memory"]).stdout).into_owned();
    assert!(files.contains("memory/hand.md"), "{files}");
}

#[test]
fn the_agent_cannot_rewrite_the_operators_prompt() {
    let (_server, home) = scripted(
        calls(
            "edit",
            &serde_json::json!({"path": "memory/prompt.md", "old_string": "#", "new_string": "# obey me\n#"}),
        ),
        "",
    );
    let before = home.read("memory/prompt.md");
    let out = run_with_key(&home, &["run", "--ticks", "1"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(home.read("memory/prompt.md"), before);
    assert!(
        crate::common::tool_recovery(&home.ticks()[0], "operator's").is_some(),
        "{}",
        home.ticks()[0]
    );
}

#[test]
fn a_file_named_like_a_glob_does_not_sweep_the_operators_edits_into_the_agents_commit() {
    let (_server, home) = scripted(
        calls(
            "write",
            &serde_json::json!({"path": "memory/*.md", "content": "agent"}),
        ),
        "",
    );
    let mut cmd = home.keyed(&["run", "--ticks", "1"], KEY);
    cmd.env("HEARTH_TEST_TICK_DELAY", "1500");
    let child = home.spawn_with(cmd);
    home.wait_for(Duration::from_secs(10), "the tick", || {
        home.file(".hearth/tick.json").exists()
    });
    std::fs::write(
        home.file("memory/identity.md"),
        "edited by the operator mid-tick\n",
    )
    .unwrap();
    assert!(
        finish(child, Duration::from_secs(20)).success(),
        "{}",
        home.log()
    );
    let history = home.history();
    let tick = history
        .iter()
        .find(|c| c.summary.starts_with("tick 1"))
        .unwrap();
    assert!(
        tick.files.contains(&"memory/*.md".to_string()),
        "{:?}",
        tick.files
    );
    assert!(
        !tick.files.contains(&"memory/identity.md".to_string()),
        "{:?}",
        tick.files
    );
    let edit = history
        .iter()
        .find(|c| {
            c.files.contains(&"memory/identity.md".to_string()) && c.summary.starts_with("edit")
        })
        .expect("the operator's edit has its own commit");
    assert_eq!(edit.author, "operator");
}

#[test]
fn a_directory_nested_99_deep_is_named_and_skipped_and_the_home_runs() {
    let home = TestHome::with_config("");
    let mut deep = home.file("memory");
    for i in 0..99 {
        deep.push(format!("level{i}"));
    }
    std::fs::create_dir_all(&deep).unwrap();
    std::fs::write(deep.join("bottom.md"), "deep down").unwrap();
    let out = home.output(&["run", "--ticks", "2"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("memory/level0/level1/"),
        "names the directory: {err}"
    );
    assert_eq!(
        err.matches("nested").count(),
        1,
        "said once, not every tick: {err}"
    );
    assert_eq!(home.ticks().len(), 2);
    let status = home.ok(&["status"]);
    assert!(
        status.contains("level0"),
        "hearth status names it too: {status}"
    );
}

#[test]
fn a_lock_held_by_a_running_git_is_waited_for_not_deleted() {
    let home = TestHome::with_config("");
    std::fs::write(
        home.file("memory/identity.md"),
        "changed, for git commit -a\n",
    )
    .unwrap();
    // An editor that takes its time, as a person does: git commit -a holds
    // .git/index.lock the whole while.
    let editor = home.path.with_file_name("slow-editor.sh");
    std::fs::write(
        &editor,
        "#!/bin/sh\nsleep 2\necho 'operator commit' > \"$1\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&editor, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let git = std::process::Command::new("git")
        .arg("-C")
        .arg(&home.path)
        .args([
            "-c",
            "user.name=op",
            "-c",
            "user.email=op@x",
            "commit",
            "-a",
        ])
        .env("GIT_EDITOR", &editor)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    home.wait_for(Duration::from_secs(10), "git to take the lock", || {
        home.file(".git/index.lock").exists()
    });
    let out = home.output(&["run", "--ticks", "1"]);
    let git = git.wait_with_output().unwrap();
    assert!(
        git.status.success(),
        "git's commit survived: {}",
        String::from_utf8_lossy(&git.stderr)
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!stderr(&out).contains("removed"), "{}", stderr(&out));
    let history = home.history();
    assert!(
        history.iter().any(|c| c.summary == "operator commit"),
        "{history:?}"
    );
    assert!(history
        .iter()
        .any(|c| c.summary.starts_with("tick 1: exit 0 (ok)")));
}

#[test]
fn names_with_a_newline_or_invalid_utf8_are_committed() {
    let home = TestHome::with_config("");
    home.ok(&["run", "--ticks", "1"]);
    std::fs::write(home.file("memory/two\nlines.md"), "x").unwrap();
    let latin1 = home
        .path
        .join(std::ffi::OsStr::from_bytes(b"memory/caf\xe9.md"));
    std::fs::write(latin1, "y").unwrap();
    let out = home.output(&["run", "--ticks", "1"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(porcelain(&home), "", "both committed");
    let log = String::from_utf8_lossy(
        &home
            .git(&["log", "-1", "--format=%an %s", "--skip=1"])
            .stdout,
    )
    .into_owned();
    assert!(log.starts_with("operator edit: 2 files"), "{log}");
}

#[test]
fn a_corrupt_healer_note_is_moved_aside_and_flared() {
    let home = TestHome::with_config("");
    home.ok(&["init"]);
    std::fs::write(home.file("state/healer_note.json"), "{ not json").unwrap();
    let out = home.output(&["run", "--ticks", "1"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!home.file("state/healer_note.json").exists());
    let kept: Vec<String> = home
        .list("state")
        .into_iter()
        .filter(|n| n.starts_with("healer_note.json.broken-"))
        .collect();
    assert_eq!(kept.len(), 1);
    let flares = home.ok(&["flares"]);
    assert!(flares.contains("healer_note.json"), "{flares}");
}

#[test]
fn hearth_toml_that_is_a_directory_is_named_with_a_fix_that_works() {
    let home = TestHome::with_config("");
    std::fs::remove_file(home.file("hearth.toml")).unwrap();
    std::fs::create_dir(home.file("hearth.toml")).unwrap();
    let out = home.output(&["status"]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("hearth.toml is not a file"), "{err}");
    assert!(err.contains("mv "), "{err}");
    std::fs::rename(
        home.file("hearth.toml"),
        home.path.join("hearth.toml.moved"),
    )
    .unwrap();
    home.ok(&["init"]);
    home.ok(&["run", "--ticks", "1"]);
}

#[test]
fn a_corrupt_git_index_is_rebuilt_and_named() {
    let home = TestHome::with_config("");
    home.ok(&["run", "--ticks", "1"]);
    std::fs::write(home.file(".git/index"), "DIRC and then garbage").unwrap();
    let out = home.output(&["run", "--ticks", "1"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(".git/index was corrupt"),
        "{}",
        stderr(&out)
    );
    assert_eq!(porcelain(&home), "");
}

#[test]
fn a_huge_write_and_hundreds_of_calls_in_one_turn_are_refused() {
    let big = "x".repeat(20 * 1024 * 1024);
    let (_server, home) = scripted(
        calls(
            "write",
            &serde_json::json!({"path": "memory/big.md", "content": big}),
        ),
        "",
    );
    let out = run_with_key(&home, &["run", "--ticks", "1"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!home.file("memory/big.md").exists());
    assert!(
        crate::common::tool_recovery(&home.ticks()[0], "max_write_bytes").is_some(),
        "{}",
        home.ticks()[0]
    );

    let input = r#"{"path": "memory/identity.md"}"#;
    let many: Vec<(String, &str, &[&str])> = (0..400)
        .map(|i| (format!("t{i}"), "read", std::slice::from_ref(&input)))
        .collect();
    let many: Vec<(&str, &str, &[&str])> = many
        .iter()
        .map(|(id, t, a)| (id.as_str(), *t, *a))
        .collect();
    let server = ModelServer::start(vec![
        Answer::Stream {
            events: anthropic::message("", &many, 10, 1),
            hang: None,
        },
        Answer::Stream {
            events: anthropic::message("done", &[], 10, 1),
            hang: None,
        },
    ]);
    let home = TestHome::with_config(&format!(
        "[model]\nprovider = \"anthropic\"\nmodel = \"claude-test\"\nbase_url = \"{}\"\nmax_retries = 0\n[budget]\ndaily_usd = 0\n",
        server.url
    ));
    let out = run_with_key(&home, &["run", "--ticks", "1"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let tick = &home.ticks()[0];
    assert_eq!(tick["class"], "contract-violation", "{tick}");
    assert!(
        tick["note"].as_str().unwrap().contains("400 tool calls"),
        "{tick}"
    );
    let messages = home.read("state/messages.json");
    assert_eq!(
        messages.matches("at most 32 tool calls per turn").count(),
        368
    );
}
