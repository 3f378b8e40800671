//! A conversation too long for the model's context window: the API's 400
//! ("prompt is too long: N tokens > M maximum", Anthropic's documented
//! `invalid_request_error`) or the stop reason
//! `model_context_window_exceeded`. The tick archives the oldest turns once
//! (recallable, nothing lost) and asks again; if that is not enough it is a
//! context-insufficiency, not a model-limitation.

use serde_json::json;

use super::stops::{message, text_block, usage};
use super::*;

fn answer(text: &str) -> Answer {
    message(text_block(0, text), "end_turn", usage(10, 1), usage(10, 5))
}

fn too_long() -> Answer {
    status(
        400,
        &[],
        json!({"type": "error", "error": {"type": "invalid_request_error", "message": "prompt is too long: 208656 tokens > 200000 maximum"}, "request_id": "req_1"}).to_string(),
    )
}

/// A home whose conversation already holds three ticks.
fn home_with_history(server: &ModelServer) -> TestHome {
    let home = home_for(server, "");
    for n in 0..3 {
        home.ok(&["say", &format!("remember the number {n}")]);
        assert!(run(&home, "1").status.success());
    }
    home
}

#[test]
fn a_prompt_too_long_archives_the_oldest_turns_and_asks_again() {
    let server = ModelServer::start(vec![
        answer("noted 0"),
        answer("noted 1"),
        answer("noted 2"),
        too_long(),
        answer("still here"),
    ]);
    let home = home_with_history(&server);
    home.ok(&["say", "what numbers do you remember?"]);
    let out = run(&home, "1");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let tick = &home.ticks()[3];
    assert_eq!(tick["class"], "ok", "one recovery within the tick: {tick}");
    let requests = server.received();
    assert_eq!(
        requests.len(),
        5,
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let sent = |i: usize| requests[i].body["messages"].as_array().unwrap().len();
    assert!(
        sent(4) < sent(3),
        "the retry sends a shorter conversation ({} < {})",
        sent(4),
        sent(3)
    );
    let archives = home.list("state/archive");
    assert_eq!(
        archives.len(),
        1,
        "the old turns are archived: {archives:?}"
    );
    let archived = home.read(&format!("state/archive/{}", archives[0]));
    assert!(archived.contains("noted 0"), "nothing is lost");
    assert!(
        home.git(&["status", "--porcelain"]).stdout.is_empty(),
        "the archive is committed with the tick"
    );
    let last = requests[4].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .cloned();
    assert!(
        last.unwrap()
            .to_string()
            .contains("what numbers do you remember"),
        "this tick's own turn is still asked"
    );
}

#[test]
fn a_full_context_window_twice_is_a_context_insufficiency() {
    let full = || {
        message(
            text_block(0, "I was say"),
            "model_context_window_exceeded",
            usage(10, 1),
            usage(10, 3),
        )
    };
    let server = ModelServer::start(vec![
        answer("noted 0"),
        answer("noted 1"),
        answer("noted 2"),
        full(),
        full(),
    ]);
    let home = home_with_history(&server);
    home.ok(&["say", "and now?"]);
    run(&home, "1");

    let tick = &home.ticks()[3];
    assert_eq!(tick["class"], "context-insufficiency", "{tick}");
    assert_eq!(tick["stop_reason"], "model_context_window_exceeded");
    assert_eq!(server.received().len(), 5, "one recovery, no more");
    assert!(
        !assistant_texts(&home)
            .iter()
            .any(|t| t.contains("I was say")),
        "a cut answer is never kept"
    );
}

fn assistant_texts(home: &TestHome) -> Vec<String> {
    super::stops::assistant_turns(home)
        .iter()
        .map(|m| m["content"].to_string())
        .collect()
}
