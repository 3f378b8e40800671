//! Outages speak and lose nothing: a model API that stays down is flared
//! once after `[healer] outage_flare_min`, its ticks leave no empty turn and
//! consume no message, and the message is answered when it is back. A
//! refused key is not an outage: it is flared at once, with the fix.

use super::*;

fn overloaded() -> Answer {
    status(
        529,
        &[],
        anthropic::error_body("overloaded_error", "Overloaded"),
    )
}

fn flares_of(home: &TestHome, kind: &str) -> Vec<String> {
    home.list("outbox")
        .into_iter()
        .filter(|n| n.contains(&format!("-flare-{kind}")))
        .collect()
}

#[test]
fn a_long_outage_is_flared_once_loses_nothing_and_the_message_is_answered_after() {
    let mut script: Vec<Answer> = (0..6).map(|_| overloaded()).collect();
    script.push(stream(anthropic::message(
        "Back: the answer is 42.",
        &[],
        10,
        5,
    )));
    let server = ModelServer::start(script);
    let home = home_for(
        &server,
        "max_retries = 0\n[healer]\noutage_flare_min = 0\noutage_backoff_ms = 1\noutage_backoff_max_ms = 2\n",
    );
    std::fs::write(
        home.file("hearth.toml"),
        home.read("hearth.toml").replace("max_retries = 2\n", ""),
    )
    .unwrap();
    home.ok(&["say", "what is the answer?"]);
    let out = run(&home, "6");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let ticks = home.ticks();
    assert!(ticks.iter().all(|t| t["outage"] == true), "{ticks:?}");
    assert_eq!(flares_of(&home, "outage").len(), 1, "one flare per outage");
    let flare = home.read(&format!("outbox/{}", flares_of(&home, "outage")[0]));
    assert!(flare.contains("HTTP 529"), "the last error: {flare}");
    assert!(flare.contains("since"), "{flare}");
    assert_eq!(home.list("inbox").len(), 1, "the message still waits");
    let messages = home.read("state/messages.json");
    assert!(
        !messages.contains("what is the answer"),
        "no user turn piles up during an outage: {messages}"
    );
    let status = home.ok(&["status"]);
    assert!(status.contains("OUTAGE"), "{status}");
    assert!(
        home.read("state/healer.json").contains("\"streak\": []"),
        "outages are not counted"
    );

    let out = run(&home, "1");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("answers again"),
        "one line says it is back: {stderr}"
    );
    let last = home.ticks().pop().unwrap();
    assert_eq!(last["class"], "ok", "{last}");
    assert_eq!(
        last["inbox"].as_array().unwrap().len(),
        1,
        "answered now: {last}"
    );
    assert!(home
        .read("state/messages.json")
        .contains("the answer is 42"));
    assert!(home.list("inbox").is_empty());
    assert!(!home.ok(&["status"]).contains("OUTAGE"));
    assert_eq!(flares_of(&home, "outage").len(), 1);
}

#[test]
fn a_refused_key_is_not_an_outage_and_is_flared_at_once_with_the_fix() {
    let refused = || {
        status(
            401,
            &[],
            anthropic::error_body("authentication_error", "invalid x-api-key"),
        )
    };
    let server = ModelServer::start(vec![refused(), refused(), refused()]);
    let home = home_for(&server, "");
    home.ok(&["say", "hello"]);
    run(&home, "2");

    let ticks = home.ticks();
    assert!(ticks.iter().all(|t| t.get("outage").is_none()), "{ticks:?}");
    let flares = flares_of(&home, "model");
    assert_eq!(flares.len(), 1, "at once, and once: {flares:?}");
    let flare = home.read(&format!("outbox/{}", flares[0]));
    assert!(flare.contains("HTTP 401"), "{flare}");
    assert!(flare.contains("api_key_env"), "names the fix: {flare}");
    assert!(flares_of(&home, "outage").is_empty());
}

#[test]
fn a_missing_key_waits_without_heals_says_so_and_the_message_is_answered_once_it_is_set() {
    let server = ModelServer::start(vec![stream(anthropic::message(
        "Answered once the key was set.",
        &[],
        10,
        5,
    ))]);
    // Started offline (no key needed), then switched to a remote model
    // while it runs: the key is not in the supervisor's environment.
    let home = TestHome::with_config("[healer]\nstreak = 2\n");
    let supervisor = home.spawn_with(home.unpinned(&["run", "--interval", "1"]));
    home.wait_for(Duration::from_secs(20), "the first tick", || {
        !home.ticks().is_empty()
    });
    std::fs::write(
        home.file("hearth.toml"),
        format!(
            "[model]\nprovider = \"anthropic\"\nmodel = \"claude-test\"\nbase_url = \"{}\"\n\
             [healer]\nstreak = 2\noutage_flare_min = 0\noutage_backoff_ms = 1\noutage_backoff_max_ms = 2\n",
            server.url
        ),
    )
    .unwrap();
    home.ok(&["say", "are you there?"]);
    home.wait_for(Duration::from_secs(30), "four failed ticks", || {
        home.ticks().iter().filter(|t| t["class"] != "ok").count() >= 4
    });
    crate::common::finish_after_term(supervisor);
    let flares = flares_of(&home, "model");
    assert_eq!(flares.len(), 1, "{flares:?}");
    let flare = home.read(&format!("outbox/{}", flares[0]));
    assert!(
        flare.contains("the model's API key is missing") && flare.contains("No request was sent"),
        "{flare}"
    );
    assert!(!flare.contains("refuses"), "{flare}");
    assert!(
        flares_of(&home, "outage").is_empty(),
        "not called an outage"
    );
    assert!(
        !home
            .history()
            .iter()
            .any(|c| c.summary.starts_with("heal:")),
        "no heal for a missing key"
    );
    assert_eq!(home.list("inbox").len(), 1, "the message waits");
    assert!(server.received().is_empty(), "no request without a key");
    // The operator sets the key: the message is answered.
    run(&home, "1");
    assert!(home.list("inbox").is_empty());
    let sent: Vec<String> = home
        .list("outbox")
        .into_iter()
        .map(|n| home.read(&format!("outbox/{n}")))
        .collect();
    assert!(
        sent.iter()
            .any(|l| l.contains("Answered once the key was set.")),
        "{sent:?}"
    );
}
