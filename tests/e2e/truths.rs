//! The command line tells the truth: `hearth tick` exits with its tick's
//! class, a panicked home exits 2 before anything else, `hearth heal`
//! refuses when nothing failed, the quick start raises no false alarm, and
//! the home is found from any directory inside it.

use std::time::Duration;

use crate::common::TestHome;

#[test]
fn hearth_tick_exits_with_the_class_of_its_tick() {
    let home = TestHome::with_config("");
    for (class, code) in [
        ("context-insufficiency", 11),
        ("coverage-gap", 12),
        ("dispatch-miss", 13),
        ("model-limitation", 14),
        ("contract-violation", 15),
    ] {
        let out = home
            .cmd(&["tick"])
            .env("HEARTH_TEST_FAIL", class)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(code), "{class}");
        assert_eq!(home.ticks().last().unwrap()["class"], class);
        // Keep the healer from healing in between.
        home.ok(&["heal", "--resume"]);
    }
    assert_eq!(home.output(&["tick"]).status.code(), Some(0));
}

#[test]
fn after_a_panic_a_restart_exits_2_before_any_other_check() {
    let home = TestHome::with_config("[healer]\nstreak = 1\nmax_heals = 0\n");
    let out = home
        .cmd(&["run", "--ticks", "1"])
        .env("HEARTH_TEST_FAIL", "contract-violation")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "healing exhausted");

    // Now the key is missing too: panic still speaks first, so systemd's
    // RestartPreventExitStatus=2 holds the unit.
    std::fs::write(
        home.file("hearth.toml"),
        "[model]\nprovider = \"anthropic\"\nmodel = \"claude-sonnet-4-5\"\n[healer]\nstreak = 1\nmax_heals = 0\n",
    )
    .unwrap();
    for cmd in [&["run"][..], &["tick"][..]] {
        let out = home.output(cmd);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{cmd:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(String::from_utf8_lossy(&out.stderr).contains("heal --resume"));
    }
}

#[test]
fn heal_refuses_when_nothing_failed_unless_forced() {
    let home = TestHome::with_config("");
    home.ok(&["run", "--ticks", "1"]);
    let out = home.output(&["heal"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("nothing to heal"), "{err}");
    assert!(err.contains("--force"), "{err}");
    assert!(home
        .list("outbox")
        .iter()
        .all(|n| !n.contains("flare-heal")));
    home.ok(&["heal", "--force"]);
    assert!(home.list("outbox").iter().any(|n| n.contains("flare-heal")));
}

#[test]
fn the_offline_quick_start_with_ten_messages_raises_no_flare() {
    let home = TestHome::with_config("");
    for n in 0..10 {
        home.ok(&[
            "say",
            &format!("question {n}: what do you know about topic {n}?"),
        ]);
        home.ok(&["run", "--ticks", "1"]);
    }
    let ticks = home.ticks();
    assert_eq!(ticks.len(), 10);
    assert!(ticks.iter().all(|t| t.get("quiet").is_none()), "{ticks:?}");
    let flares: Vec<String> = home
        .list("outbox")
        .into_iter()
        .filter(|n| n.contains("-flare-"))
        .collect();
    assert!(flares.is_empty(), "{flares:?}");
    assert!(home
        .ok(&["status"])
        .lines()
        .all(|l| !l.starts_with("flares:")));
}

#[test]
fn the_home_is_found_from_a_directory_inside_it_and_status_shows_unread_flares() {
    let home = TestHome::with_config("");
    home.ok(&["run", "--ticks", "1"]);
    let deep = home.file("memory/notes");
    std::fs::create_dir_all(&deep).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_hearth"))
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .arg("status")
        .current_dir(&deep)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(&format!("home:       {}", home.path.display())),
        "{text}"
    );

    // A hand-broken hearth.toml and a flare: both in status.
    std::fs::write(home.file("hearth.toml"), "[tick\n").unwrap();
    home.ok(&["say", "hi"]);
    let status = home.ok(&["status"]);
    assert!(
        status.contains("CONFIG:") && status.contains("hearth.toml:1"),
        "{status}"
    );
    // Not "no daily limit": the cap a running supervisor keeps is unknown.
    assert!(
        status.contains("the daily limit is unknown while hearth.toml does not parse")
            && !status.contains("no daily limit"),
        "{status}"
    );
    std::fs::write(home.file("hearth.toml"), "").unwrap();
    let supervisor = home.spawn(&["run", "--interval", "3600"]);
    // The message waiting at start is answered at once; then it waits.
    home.wait_for(Duration::from_secs(10), "the tick on \"hi\"", || {
        home.log().contains("tick 2: exit 0")
    });
    std::fs::write(home.file("hearth.toml"), "[tick\n").unwrap();
    home.ok(&["say", "wake up"]);
    home.wait_for(Duration::from_secs(10), "the config flare", || {
        home.list("outbox")
            .iter()
            .any(|n| n.contains("flare-config"))
    });
    crate::common::finish_after_term(supervisor);
    let status = home.ok(&["status"]);
    assert!(status.contains("flares:     1 unread"), "{status}");
}

#[test]
fn a_fresh_home_ticks_without_warnings() {
    let home = TestHome::new();
    let out = home.output(&["run", "--ticks", "3"]);
    assert!(out.status.success());
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(!log.contains("WARN"), "{log}");
}

#[test]
fn a_citation_of_lines_edited_since_the_last_commit_says_uncommitted() {
    let home = TestHome::with_config("");
    std::fs::write(
        home.file("memory/sea.md"),
        "# Sea\n\nThe keeper is named Orla.\n",
    )
    .unwrap();
    home.ok(&["run", "--ticks", "1"]);
    let committed = home.ok(&["recall", "keeper named", "--no-rerank"]);
    assert!(committed.contains("memory/sea.md:3@"), "{committed}");
    assert!(!committed.contains("@uncommitted"), "{committed}");

    std::fs::write(
        home.file("memory/sea.md"),
        "# Sea\n\nThe keeper is named Brigid now.\n",
    )
    .unwrap();
    let edited = home.ok(&["recall", "keeper named", "--no-rerank"]);
    assert!(edited.contains("memory/sea.md:3@uncommitted"), "{edited}");
}

#[test]
fn hearth_outbox_lists_what_the_agent_sent_and_marks_it_read() {
    let home = TestHome::with_config("");
    home.ok(&["say", "hello there"]);
    home.ok(&["run", "--ticks", "1"]);
    let listed = home.ok(&["outbox"]);
    assert!(listed.contains("Re: hello there"), "{listed}");
    assert!(
        listed.contains("> hello there"),
        "the body is shown: {listed}"
    );
    let json: serde_json::Value = serde_json::from_str(&home.ok(&["outbox", "--json"])).unwrap();
    assert_eq!(json.as_array().unwrap().len(), 1);
    assert!(json[0]["in_reply_to"]
        .as_str()
        .unwrap()
        .starts_with("inbox/"));
    home.ok(&["outbox", "--ack", "--all"]);
    assert!(home.ok(&["outbox"]).contains("no unread letters"));
    assert!(home.ok(&["outbox", "--all"]).contains("Re: hello there"));
    assert!(
        home.git(&["status", "--porcelain"]).stdout.is_empty(),
        "the marks are committed"
    );
}

#[test]
fn push_without_a_remote_is_an_error_naming_the_fix() {
    let home = TestHome::with_config("[git]\npush = true\n");
    let out = home.output(&["run", "--ticks", "1"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("[git] push") && err.contains("remote add origin"),
        "{err}"
    );
    assert!(home.ticks().is_empty());
}

#[test]
fn an_untrusted_flares_exec_does_not_run_and_says_so() {
    let home = TestHome::with_config("");
    // `exec` runs in the tool sandbox: it writes where [flares] grants.
    let granted = tempfile::tempdir().unwrap();
    let mark = granted.path().join("exec-ran");
    std::fs::write(
        home.file("hearth.toml"),
        format!(
            "[brake]\nmust_read = [\"memory/missing.md\"]\n[flares]\nexec = \"touch {}\"\n",
            mark.display()
        ),
    )
    .unwrap();
    let out = home.output(&["run", "--ticks", "1"]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("hearth trust"));
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        !mark.exists(),
        "a command from the home did not run untrusted"
    );
    assert!(home
        .list("outbox")
        .iter()
        .any(|n| n.contains("-flare-tools")));

    // Trusted, it runs, with the flare's notice as JSON on its stdin.
    std::fs::write(home.file("memory/other.md"), "x").unwrap();
    std::fs::write(
        home.file("hearth.toml"),
        format!(
            "[brake]\nmust_read = [\"memory/missing.md\", \"memory/gone.md\"]\n[flares]\nexec = \"sh -c 'cat > {}' --\"\nwrite = [{:?}]\n",
            mark.display(),
            granted.path()
        ),
    )
    .unwrap();
    home.ok(&["trust"]);
    home.ok(&["flares", "--ack", "--all"]);
    home.ok(&["run", "--ticks", "1"]);
    home.wait_for(Duration::from_secs(5), "the trusted exec", || {
        std::fs::read_to_string(&mark).is_ok_and(|t| t.ends_with('}'))
    });
    let notice: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&mark).unwrap()).unwrap();
    assert!(
        notice["flare"].as_str().unwrap().contains("-flare-"),
        "{notice}"
    );
    assert!(notice["state"].is_string(), "{notice}");
}

#[test]
fn offline_asks_answer_refresh_the_warm_digest_and_commit_beside_a_ticking_supervisor() {
    let home = TestHome::with_config("");
    std::fs::write(
        home.file("memory/sea.md"),
        "# Sea\n\nThe lighthouse keeper is Orla.\n",
    )
    .unwrap();
    let supervisor = home.spawn(&["run", "--interval", "0"]);
    for n in 0..5 {
        home.ok(&["say", &format!("message {n}")]);
        let answer = home.ok(&["ask", &format!("who keeps the lighthouse? ({n})")]);
        assert!(answer.contains("memory/sea.md:3"), "{answer}");
    }
    crate::common::finish_after_term(supervisor);
    let warm = home.read("state/warm.md");
    assert!(
        warm.starts_with("# Warm digest") && warm.contains("lighthouse (5)"),
        "{warm}"
    );
    let log = String::from_utf8_lossy(&home.git(&["log", "--format=%s"]).stdout).into_owned();
    assert_eq!(
        log.matches("ask: who keeps the lighthouse?").count(),
        5,
        "{log}"
    );
    assert!(log.contains("tick "), "the supervisor ticked meanwhile");
    assert!(home.git(&["fsck", "--strict"]).status.success());
    assert!(home.git(&["status", "--porcelain"]).stdout.is_empty());
    let sessions = home.read("state/sessions.jsonl");
    assert_eq!(sessions.matches("\"kind\":\"answer\"").count(), 5);
}

#[test]
fn a_supervised_homes_warm_boot_for_ask_goes_stale_with_any_memory_edit() {
    let home = TestHome::with_config("[tick]\ninterval_s = 3600\n");
    let supervisor = home.spawn(&["run"]);
    home.wait_for(Duration::from_secs(10), "the supervisor", || {
        home.log().contains("supervising")
    });
    let system = |home: &TestHome| {
        let out: serde_json::Value =
            serde_json::from_str(&home.ok(&["ask", "--json", "hello"])).unwrap();
        out["tokens"]["system"].as_u64().unwrap()
    };
    let before = system(&home);
    assert!(
        home.file(".hearth/boot-snapshot.json").exists(),
        "kept for the next ask"
    );
    assert_eq!(system(&home), before, "warm: the same boot");
    std::fs::write(
        home.file("memory/core/harbour.md"),
        format!(
            "---\ntags: [identity]\n---\n# Harbour\n\n{}\n",
            "I keep the harbour log. ".repeat(80)
        ),
    )
    .unwrap();
    let mut after = before;
    home.wait_for(
        Duration::from_secs(5),
        "the edit in the next ask's boot",
        || {
            after = system(&home);
            after > before
        },
    );
    assert!(after > before + 300, "{before} → {after}");
    crate::common::finish_after_term(supervisor);
}

#[test]
fn a_tick_whose_model_refused_the_key_never_says_it_answered() {
    use crate::common::model_server::{Answer, ModelServer};
    let server = ModelServer::start(vec![Answer::Status {
        status: 401,
        headers: vec![],
        body: crate::common::model_server::anthropic::error_body(
            "authentication_error",
            "invalid x-api-key",
        ),
    }]);
    let home = TestHome::with_config(&format!(
        "[model]\nprovider = \"anthropic\"\nmodel = \"claude-sonnet-4-5-20250929\"\n\
         base_url = \"{}\"\nmax_retries = 0\n",
        server.url
    ));
    home.ok(&["say", "When is high tide?"]);
    home.ok(&["say", "And low tide?"]);
    let _ = home
        .keyed(&["run", "--ticks", "1"], "sk-ant-revoked")
        .output()
        .unwrap();
    let subject = String::from_utf8(home.git(&["log", "-1", "--format=%s"]).stdout).unwrap();
    assert!(subject.starts_with("tick 1: exit 14"), "{subject}");
    assert!(!subject.contains("answered"), "{subject}");
    // A refused key is a setting: the messages go back to wait for a tick
    // that can answer them.
    assert_eq!(home.list("inbox").len(), 2, "{subject}");
    let day = home.ok(&["day"]);
    assert!(!day.contains("answered 2"), "{day}");
}

#[test]
fn a_service_started_on_a_broken_config_waits_flared_and_ticks_once_it_is_fixed() {
    let home = TestHome::with_config("[tick]\ninterval_s = \"30s\"\n");
    // At a terminal, the error is the command's.
    let out = home.output(&["run", "--ticks", "1"]);
    assert_eq!(out.status.code(), Some(1));
    // As a service: up, one flare naming the file, line and fix, shown in
    // status, nothing ticked.
    let supervisor = home.spawn(&["run"]);
    home.wait_for(Duration::from_secs(20), "the config flare", || {
        home.list("outbox")
            .iter()
            .any(|n| n.contains("flare-config"))
    });
    let flare = home
        .list("outbox")
        .into_iter()
        .find(|n| n.contains("flare-config"))
        .unwrap();
    let body = home.read(&format!("outbox/{flare}"));
    assert!(
        body.contains("hearth.toml:2:")
            && body.contains("2 | interval_s = \"30s\"")
            && body.contains("To fix:"),
        "{body}"
    );
    let status = home.ok(&["status"]);
    assert!(status.contains("hearth.toml does not parse"), "{status}");
    // Read whole from the command line, by a start of its id.
    let id = flare.trim_end_matches(".md");
    let shown = home.ok(&["flares", "show", &id[..16]]);
    assert!(
        shown.starts_with(id) && shown.contains("2 | interval_s = \"30s\""),
        "{shown}"
    );
    let full = home.ok(&["flares", "--full"]);
    assert!(full.contains("    2 | interval_s"), "{full}");
    std::thread::sleep(Duration::from_millis(1500));
    assert!(home.ticks().is_empty(), "nothing ticks meanwhile");
    assert_eq!(
        home.list("outbox")
            .iter()
            .filter(|n| n.contains("flare-config"))
            .count(),
        1,
        "one flare, not one a second"
    );
    // Fixed: it starts by itself.
    std::fs::write(home.file("hearth.toml"), "[tick]\ninterval_s = 30\n").unwrap();
    home.wait_for(Duration::from_secs(20), "a tick once it parses", || {
        !home.ticks().is_empty()
    });
    assert!(crate::common::finish_after_term(supervisor).success());
}

#[test]
fn a_deleted_conversation_is_restored_with_a_flare_never_committed_as_the_operators_deletion() {
    let home = TestHome::with_config("");
    home.ok(&["say", "Remember the tide tables."]);
    home.ok(&["run", "--ticks", "2"]);
    let before = home.read("state/messages.json");
    std::fs::remove_file(home.file("state/messages.json")).unwrap();
    home.ok(&["run", "--ticks", "1"]);
    let after = home.read("state/messages.json");
    let turns = |text: &str| {
        serde_json::from_str::<serde_json::Value>(text).unwrap()["messages"]
            .as_array()
            .unwrap()
            .len()
    };
    assert!(
        after.contains("Remember the tide tables.") && turns(&after) > turns(&before),
        "the conversation goes on from where it was:\n{after}"
    );
    let deleted = home.git(&["log", "--diff-filter=D", "--format=%s", "--", "state/"]);
    assert!(
        deleted.stdout.is_empty(),
        "no commit deletes them: {}",
        String::from_utf8_lossy(&deleted.stdout)
    );
    let flares: Vec<String> = home
        .list("outbox")
        .into_iter()
        .filter(|n| n.contains("flare-state"))
        .collect();
    assert_eq!(flares.len(), 1, "{flares:?}");
    let body = home.read(&format!("outbox/{}", flares[0]));
    assert!(
        body.contains("state/messages.json was gone") && body.contains("put back"),
        "{body}"
    );
}

#[test]
fn a_missing_identity_file_is_drift_and_fails_a_strict_audit() {
    let home = TestHome::with_config("");
    home.ok(&["run", "--ticks", "1"]);
    assert!(home.output(&["audit", "--strict"]).status.success());
    std::fs::remove_file(home.file("memory/identity.md")).unwrap();
    let out = home.output(&["audit", "--strict"]);
    assert_eq!(out.status.code(), Some(1));
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains("memory/identity.md") && said.contains("is gone"),
        "{said}"
    );
}

#[test]
fn status_check_exits_0_healthy_1_attention_2_trouble_with_the_reasons() {
    let home = TestHome::with_config("[tick]\ninterval_s = 3600\n");
    let supervisor = home.spawn(&["run"]);
    home.wait_for(Duration::from_secs(20), "a first tick", || {
        !home.ticks().is_empty()
    });
    let check = |expected: i32| {
        let out = home.output(&["status", "--check"]);
        let said = String::from_utf8_lossy(&out.stdout).into_owned();
        assert_eq!(out.status.code(), Some(expected), "{said}");
        let json: serde_json::Value =
            serde_json::from_slice(&home.output(&["status", "--json", "--check"]).stdout).unwrap();
        (said, json["verdict"].clone())
    };
    let (said, verdict) = check(0);
    assert_eq!(said.trim(), "healthy");
    assert_eq!(verdict["health"], "healthy");
    // A torn line in a state file: something for the operator to look at.
    let mut sessions = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(home.file("state/sessions.jsonl"))
        .unwrap();
    std::io::Write::write_all(&mut sessions, b"{\"torn\n").unwrap();
    let (said, verdict) = check(1);
    assert!(
        said.starts_with("attention: 1 problems in the state"),
        "{said}"
    );
    assert_eq!(verdict["health"], "attention");
    // Stopped: the agent is not working.
    assert!(crate::common::finish_after_term(supervisor).success());
    let (said, _) = check(2);
    assert!(
        said.starts_with("trouble: the supervisor is not running"),
        "{said}"
    );
}

#[test]
fn a_reply_that_claims_a_write_its_tools_never_made_is_named_on_the_ledger_the_subject_and_the_letter(
) {
    use crate::common::model_server::{anthropic, Answer, ModelServer};
    let config = |url: &str| {
        format!(
            "[model]\nprovider = \"anthropic\"\nmodel = \"claude-sonnet-4-5-20250929\"\n\
             base_url = \"{url}\"\nmax_retries = 0\n"
        )
    };
    // The model only says it saved the note.
    let claims = ModelServer::start(vec![Answer::Stream {
        events: anthropic::message("Done. I've saved that to memory.", &[], 10, 5),
        hang: None,
    }]);
    let home = TestHome::with_config(&config(&claims.url));
    home.ok(&["say", "Please note that high tide is at six."]);
    home.run_here(1, Some("sk-ant-test"));
    let tick = home.ticks().last().unwrap().clone();
    assert_eq!(
        tick["unbacked"],
        serde_json::json!(["I've saved that to memory"])
    );
    assert!(
        tick["quiet"]
            .as_str()
            .unwrap()
            .contains("claimed to have written to memory"),
        "{tick}"
    );
    let subject = String::from_utf8(home.git(&["log", "-1", "--format=%s"]).stdout).unwrap();
    assert!(
        subject.contains("claimed 1 act without doing it"),
        "{subject}"
    );
    let letter = home
        .list("outbox")
        .into_iter()
        .find(|n| !n.contains("flare"))
        .map(|n| home.read(&format!("outbox/{n}")))
        .unwrap();
    assert!(
        letter.contains(
            "_hearth saw this tick write nothing to memory; it claimed to have written to memory"
        ),
        "{letter}"
    );

    // The same words after a write that happened: no claim, and the letter
    // says what was written.
    let writes = ModelServer::start(vec![
        Answer::Stream {
            events: anthropic::message(
                "",
                &[(
                    "w1",
                    "write",
                    &[r#"{"path": "memory/tides.md", "content": "High tide at six.\n"}"#],
                )],
                10,
                5,
            ),
            hang: None,
        },
        Answer::Stream {
            events: anthropic::message("Done. I've saved that to memory.", &[], 10, 5),
            hang: None,
        },
    ]);
    std::fs::write(home.file("hearth.toml"), config(&writes.url)).unwrap();
    home.ok(&["say", "Please note that low tide is at noon."]);
    home.run_here(1, Some("sk-ant-test"));
    let tick = home.ticks().last().unwrap().clone();
    assert!(tick.get("unbacked").is_none(), "{tick}");
    let subject = String::from_utf8(home.git(&["log", "-1", "--format=%s"]).stdout).unwrap();
    assert!(!subject.contains("claimed"), "{subject}");
}

#[test]
fn a_hand_edit_is_committed_as_the_operators_within_seconds_not_at_the_next_tick() {
    let home = TestHome::with_config("[tick]\ninterval_s = 3600\n");
    let supervisor = home.spawn(&["run"]);
    home.wait_for(Duration::from_secs(20), "a first tick", || {
        !home.ticks().is_empty()
    });
    std::fs::write(home.file("memory/tides.md"), "High tide at six.\n").unwrap();
    home.wait_for(Duration::from_secs(10), "the edit committed", || {
        let log =
            String::from_utf8_lossy(&home.git(&["log", "--format=%s|%an"]).stdout).into_owned();
        log.lines()
            .any(|l| l == "edit: memory/tides.md (by hand)|operator")
    });
    assert_eq!(home.ticks().len(), 1, "committed without a tick");
    assert!(crate::common::finish_after_term(supervisor).success());
}

#[test]
fn a_shorter_interval_saved_while_the_supervisor_waits_re_plans_the_next_tick_at_once() {
    shorter_interval_re_plans(false);
}

/// The same on the system clock, where a wait that ends before the tick
/// it was planned for is told from one that ends for the new interval.
#[test]
fn a_shorter_interval_re_plans_the_next_tick_on_the_system_clock_too() {
    shorter_interval_re_plans(true);
}

fn shorter_interval_re_plans(system_clock: bool) {
    let home = TestHome::with_config("[tick]\ninterval_s = 3600\n");
    let supervisor = if system_clock {
        home.spawn_with(home.unpinned(&["run"]))
    } else {
        home.spawn(&["run"])
    };
    home.wait_for(Duration::from_secs(20), "a first tick", || {
        !home.ticks().is_empty()
    });
    // The tick planned an hour away moves to the new interval's time.
    std::fs::write(
        home.file("hearth.toml"),
        home.read("hearth.toml")
            .replace("interval_s = 3600", "interval_s = 1"),
    )
    .unwrap();
    home.wait_for(Duration::from_secs(15), "a second tick", || {
        home.ticks().len() >= 2
    });
    assert!(crate::common::finish_after_term(supervisor).success());
}
