//! Defects of state files and input that issue 30's trials found: a
//! directory where a state file should be, a pipe without end into `ask`,
//! an unfinished merge, torn lines in the session log; and what hearth
//! posts in the outbox between ticks, which is never the operator's.

#![allow(clippy::disallowed_methods)] // fixtures, not state

use super::*;

/// Issue 30, item 9: a directory at `state/sessions.jsonl` made every tick
/// pay for a model call and then crash writing the exchange.
#[test]
fn a_directory_at_sessions_jsonl_is_named_before_the_model_is_called() {
    let (server, home) = scripted(vec![anthropic::message("Hello.", &[], 10, 2)], "");
    std::fs::create_dir_all(home.file("state/sessions.jsonl")).unwrap();
    home.ok(&["say", "hello"]);
    let out = run_with_key(&home, &["run", "--ticks", "1"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(server.received().len(), 0, "no paid call");
    assert_eq!(home.list("inbox").len(), 1, "nothing consumed");
    let said = stderr(&out);
    assert!(
        said.contains("state/sessions.jsonl is not a regular file"),
        "{said}"
    );
    assert!(said.contains("mv state/sessions.jsonl"), "{said}");
}

/// Issue 30, item 6: piped input was read whole before being cut to 32 KiB
/// (`yes | hearth ask q` ran out of memory) and its size was counted after
/// lossy decoding.
#[test]
fn an_endless_or_binary_pipe_into_ask_is_read_only_to_the_limit() {
    use std::io::Write;
    let home = TestHome::with_config("");
    let mut child = home
        .cmd(&["ask", "what is this?"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    // `yes`: writes until the reader goes away.
    let writer = std::thread::spawn(move || {
        let line = [b'y', b'\n'].repeat(4096);
        while stdin.write_all(&line).is_ok() {}
    });
    let status = finish(child, Duration::from_secs(30));
    assert!(status.success(), "{status:?}");
    writer.join().unwrap();
    let sessions = home.read("state/sessions.jsonl");
    assert!(
        sessions.contains("[with 32768 bytes of piped input, and more not read]"),
        "{sessions}"
    );

    // Bytes are counted as they came, not after decoding.
    let out = home
        .cmd(&["ask", "and this?"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .and_then(|mut c| {
            c.stdin.take().unwrap().write_all(&[0xff; 20_000])?;
            c.wait_with_output()
        })
        .unwrap();
    assert!(out.status.success());
    let sessions = home.read("state/sessions.jsonl");
    assert!(
        sessions.contains("[with 20000 bytes of piped input]"),
        "{sessions}"
    );
}

/// Issue 30, item 8: an unfinished merge stopped hearth with "cannot create
/// a tree from a not fully merged index", naming neither file nor fix.
#[test]
fn an_unfinished_merge_is_named_with_its_files_and_the_way_out() {
    let home = TestHome::with_config("");
    home.ok(&["run", "--ticks", "1"]);
    let git = |args: &[&str]| {
        let out = home.git(args);
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr)
    };
    let _ = git(&["config", "user.email", "op@localhost"]);
    let _ = git(&["config", "user.name", "op"]);
    std::fs::write(home.file("memory/notes.md"), "base\n").unwrap();
    git(&["add", "-A"]);
    git(&["commit", "-qm", "base"]);
    git(&["checkout", "-qb", "side"]);
    std::fs::write(home.file("memory/notes.md"), "side\n").unwrap();
    git(&["commit", "-qam", "side"]);
    git(&["checkout", "-q", "-"]);
    std::fs::write(home.file("memory/notes.md"), "main\n").unwrap();
    git(&["commit", "-qam", "main"]);
    let merged = git(&["merge", "side"]);
    assert!(merged.contains("CONFLICT"), "{merged}");
    let out = home.output(&["run", "--ticks", "1"]);
    let said = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(said.contains("unfinished merge"), "{said}");
    assert!(said.contains("memory/notes.md"), "{said}");
    assert!(said.contains("merge --abort"), "{said}");
}

/// Issue 30: garbage lines in `state/sessions.jsonl` were skipped without
/// a word.
#[test]
fn garbage_in_sessions_jsonl_is_named_by_status() {
    let home = TestHome::with_config("");
    home.ok(&["ask", "hello?"]);
    let mut text = home.read("state/sessions.jsonl");
    let good = text.lines().count();
    text.push_str("{\"v\": 1, \"id\": \"torn\n");
    std::fs::write(home.file("state/sessions.jsonl"), text).unwrap();
    let status = home.ok(&["status"]);
    let wanted = format!("state/sessions.jsonl:{}: line skipped", good + 1);
    assert!(status.contains(&wanted), "{status}");
    // A torn line does not stop the next ask.
    home.ok(&["ask", "still there?"]);
}

#[test]
fn what_hearth_posts_in_the_outbox_between_ticks_is_never_committed_as_the_operators() {
    let home = TestHome::with_config("");
    home.ok(&["run", "--ticks", "1"]);
    // A flare hearth posted after the last commit (the disk had room
    // again, a tick was late), and a hand edit beside it.
    let flare = "outbox/20260101T000000.000Z-flare-disk.md";
    std::fs::write(home.file(flare), "---\nkind: flare\n---\nroom again\n").unwrap();
    std::fs::write(home.file("memory/by-hand.md"), "# mine\n").unwrap();
    home.ok(&["run", "--ticks", "1"]);
    let brought = |path: &str| {
        home.history()
            .into_iter()
            .find(|c| c.files.iter().any(|f| f == path))
            .unwrap_or_else(|| panic!("{path} never committed"))
    };
    let flared = brought(flare);
    assert_eq!(flared.author, "hearth", "{}", flared.summary);
    assert!(flared.summary.starts_with("tick 2"), "{}", flared.summary);
    assert_eq!(brought("memory/by-hand.md").author, "operator");

    // And one posted after the last tick: committed at exit, as hearth's.
    let late = "outbox/20260101T000001.000Z-flare-push.md";
    std::fs::write(home.file(late), "---\nkind: flare\n---\nlate\n").unwrap();
    let supervisor = home.spawn(&["run", "--interval", "3600"]);
    home.ok(&["say", "one more"]);
    home.wait_for(Duration::from_secs(20), "the third tick's commit", || {
        home.history()[0].summary.starts_with("tick 3")
    });
    // This one arrives while the supervisor waits for its next tick.
    let later = "outbox/20260101T000002.000Z-flare-gap.md";
    std::fs::write(home.file(later), "---\nkind: flare\n---\nlater\n").unwrap();
    assert!(crate::common::finish_after_term(supervisor).success());
    let at_exit = brought(later);
    assert_eq!(at_exit.author, "hearth", "{}", at_exit.summary);
    assert_eq!(at_exit.summary, "outbox: posted since the last tick");
    assert_eq!(brought(late).author, "hearth");
    assert!(porcelain(&home).is_empty(), "{}", porcelain(&home));
}
