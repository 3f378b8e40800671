//! What a user notices of spend, outages and quiet failures: the budget,
//! outage backoff that never heals, a kill mid-stream, layer 1 and quiet
//! ticks.

use super::*;

#[test]
fn past_the_daily_budget_ticks_are_skipped_with_exit_3_after_a_warning_and_one_stop_flare() {
    let server = ModelServer::start(vec![stream(anthropic::message("ok", &[], 1000, 0))]);
    let home = home_for(
        &server,
        "[budget]\ndaily_usd = 1.5\n[budget.prices.\"claude-test\"]\ninput_per_mtok = 1000.0\noutput_per_mtok = 0.0\n",
    );
    // Morning (UTC): the burn-rate warning must not hang on the hour.
    let out = home
        .keyed(&["run", "--ticks", "4"], KEY)
        .env("HEARTH_NOW", "2026-11-23T06:00:00Z")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let classes: Vec<String> = home
        .ticks()
        .iter()
        .map(|t| t["class"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(classes, ["ok", "ok", "skipped", "skipped"]);
    assert_eq!(home.ticks()[2]["exit"], 3);
    assert_eq!(server.received().len(), 2, "skipped ticks call no model");
    let budget: Value = serde_json::from_str(&home.read("state/budget.json")).unwrap();
    let spent: f64 = budget["days"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_f64().unwrap())
        .sum();
    assert!((spent - 2.0).abs() < 1e-9, "{budget}");
    let flares: Vec<String> = home
        .list("outbox")
        .into_iter()
        .filter(|n| n.contains("flare-budget"))
        .collect();
    // $1 in the last hour of a $1.50 day: warned after tick 1, stopped at
    // tick 3 with one flare that says so; tick 4 says nothing more.
    assert_eq!(flares.len(), 2, "{flares:?}");
    let bodies: Vec<String> = flares
        .iter()
        .map(|f| home.read(&format!("outbox/{f}")))
        .collect();
    let warnings = bodies
        .iter()
        .filter(|b| b.contains("will run out today"))
        .count();
    let stops = bodies
        .iter()
        .filter(|b| b.contains("the daily budget is spent") && b.contains("exit 3"))
        .count();
    assert_eq!((warnings, stops), (1, 1), "{bodies:?}");
    assert_eq!(home.history()[0].summary, "tick 4: exit 3 (skipped)");
}

#[test]
fn provider_outages_back_off_and_never_heal_but_a_real_failure_streak_does() {
    let mut script = vec![stream(anthropic::message("fine", &[], 10, 1))];
    script.extend((0..20).map(|_| {
        status(
            529,
            &[],
            anthropic::error_body("overloaded_error", "Overloaded"),
        )
    }));
    script.push(stream(anthropic::message(
        "x",
        &[("t1", "journal", &["{not json"])],
        10,
        1,
    )));
    let server = ModelServer::start(script);
    let home = home_for(
        &server,
        "[healer]\noutage_backoff_ms = 1\noutage_backoff_max_ms = 8\n",
    );
    std::fs::write(
        home.file("hearth.toml"),
        home.read("hearth.toml")
            .replace("max_retries = 2", "max_retries = 0"),
    )
    .unwrap();
    let out = run(&home, "26");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let ticks = home.ticks();
    assert_eq!(ticks[0]["class"], "ok");
    let outages: Vec<&Value> = ticks.iter().filter(|t| t["outage"] == true).collect();
    assert_eq!(outages.len(), 20, "every 529 tick is an outage");
    assert!(outages.iter().all(|t| t["class"] == "model-limitation"));
    let backoffs: Vec<u64> = outages
        .iter()
        .map(|t| t["backoff_ms"].as_u64().unwrap())
        .collect();
    assert_eq!(&backoffs[..5], &[1, 2, 4, 8, 8], "doubling, capped");

    let heals: Vec<String> = home
        .history()
        .iter()
        .filter(|c| c.summary.starts_with("heal: "))
        .map(|c| c.summary.clone())
        .collect();
    assert_eq!(
        heals.len(),
        1,
        "20 outages heal nothing; 5 contract violations heal once"
    );
    assert!(heals[0].ends_with("after 5 failed ticks"), "{heals:?}");
}

#[test]
fn killed_mid_stream_the_question_is_on_disk_and_no_half_reply() {
    let mut events = anthropic::message("this reply never finishes", &[], 10, 1);
    events.truncate(4);
    let server = ModelServer::start(vec![Answer::Stream {
        events,
        hang: Some(Duration::from_secs(30)),
    }]);
    let home = home_for(&server, "[tick]\ntimeout_s = 60\n");
    std::fs::write(
        home.file("hearth.toml"),
        home.read("hearth.toml")
            .replace("timeout_s = 2", "timeout_s = 60"),
    )
    .unwrap();
    home.ok(&["say", "the question that must survive"]);
    let cmd = home.keyed(&["run", "--ticks", "1"], KEY);
    let child = home.spawn_with(cmd);
    home.wait_for(Duration::from_secs(10), "the model call", || {
        server.received().len() == 1
    });
    std::thread::sleep(Duration::from_millis(300));
    crate::common::signal(&child, libc::SIGKILL);
    crate::common::finish(child, Duration::from_secs(5));

    let messages: Value = serde_json::from_str(&home.read("state/messages.json")).expect("parses");
    let turns = messages["messages"].as_array().unwrap();
    assert_eq!(turns.len(), 1, "only the user turn: {turns:?}");
    assert!(turns[0]["content"][0]["text"]
        .as_str()
        .unwrap()
        .contains("the question that must survive"));
    assert!(!home.read("state/messages.json").contains("never finishes"));
}

#[test]
fn a_429_for_a_spent_account_is_not_retried() {
    let (tick, requests, _) = fault(
        vec![status(
            429,
            &[("retry-after", "0")],
            r#"{"error":{"type":"insufficient_quota","code":"insufficient_quota","message":"You exceeded your current quota, please check your plan and billing details."}}"#.into(),
        )],
        "",
    );
    assert_eq!(tick["class"], "model-limitation");
    assert_eq!(requests, 1, "waiting does not refill an account");
}

#[test]
fn layer_1_restores_a_core_memory_a_tick_broke_and_flares() {
    let server = ModelServer::start(vec![
        stream(anthropic::message(
            "Rewriting my values.",
            &[(
                "t1",
                "write",
                &[
                    r#"{"path": "memory/core/values.md", "content": "---\ntags: [identity\n---\nbroken\n"}"#,
                ],
            )],
            10,
            1,
        )),
        stream(anthropic::message("Done.", &[], 10, 1)),
    ]);
    let home = home_for(&server, "");
    let before = home.read("memory/core/values.md");
    assert!(run(&home, "1").status.success());
    assert_eq!(home.read("memory/core/values.md"), before, "restored");
    let flare = home
        .list("outbox")
        .into_iter()
        .find(|n| n.contains("flare-layer1"))
        .expect("a layer1 flare");
    let flare = home.read(&format!("outbox/{flare}"));
    assert!(flare.contains("memory/core/values.md:"), "{flare}");
    assert!(
        flare.contains("tags: [identity"),
        "what the tick wrote is quoted"
    );
    let status = home.git(&["status", "--porcelain"]);
    assert_eq!(
        String::from_utf8_lossy(&status.stdout),
        "",
        "the restore is committed with the tick"
    );
}

#[test]
fn ticks_that_ignore_the_inbox_are_quiet_and_three_flare_once() {
    let server = ModelServer::start(vec![stream(anthropic::message(
        "I am thinking about it.",
        &[],
        10,
        1,
    ))]);
    let home = home_for(&server, "");
    for n in 0..4 {
        home.ok(&["say", &format!("please answer me ({n})")]);
        assert!(run(&home, "1").status.success());
    }
    let ticks = home.ticks();
    assert!(ticks.iter().all(|t| t["class"] == "ok"));
    // The first answer is an answer; the same one again while the inbox
    // waits is a loop.
    assert!(ticks[0].get("quiet").is_none(), "{}", ticks[0]);
    for tick in &ticks[1..] {
        assert!(
            tick["quiet"]
                .as_str()
                .unwrap()
                .contains("same calls, same reply"),
            "{tick}"
        );
    }
    let flares: Vec<String> = home
        .list("outbox")
        .into_iter()
        .filter(|n| n.contains("flare-quiet-failure"))
        .collect();
    assert_eq!(flares.len(), 1, "one flare for the streak of 3: {flares:?}");
}
