//! What real inference servers did to hearth (issue 28), each reproduced
//! by a model API on 127.0.0.1 that behaves as the real one did:
//! llama.cpp's `llama-server --jinja` with small local models.

use super::*;
use crate::common::model_server::openai;

/// A strict chat template (Gemma's, as llama.cpp ships it) refuses two
/// turns of one role in a row; otherwise a plain answer.
fn strict_template(body: &Value) -> Answer {
    let roles: Vec<&str> = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap_or(""))
        .filter(|r| *r != "system")
        .collect();
    if roles.windows(2).any(|w| w[0] == w[1] && w[0] != "tool") {
        return Answer::Status {
            status: 400,
            headers: vec![],
            body: serde_json::json!({"error": {"code": 400, "message": "Conversation roles must alternate user/assistant/user/assistant/...", "type": "invalid_request_error"}}).to_string(),
        };
    }
    Answer::Stream {
        events: openai::completion("Noted.", &[], 300, 3),
        hang: None,
    }
}

#[test]
fn a_failed_tick_does_not_leave_two_user_turns_in_a_row_for_a_strict_template() {
    let server = ModelServer::start(vec![
        status(
            400,
            &[],
            serde_json::json!({"error": {"code": 400, "message": "the request could not be parsed", "type": "invalid_request_error"}}).to_string(),
        ),
        Answer::Respond(strict_template),
    ]);
    let home = openai_home(&server, "gemma-2-2b-it");
    for _ in 0..3 {
        run_openai(&home);
    }
    let ticks = home.ticks();
    assert_eq!(ticks[0]["class"], "model-limitation", "{}", ticks[0]);
    assert_eq!(ticks[1]["class"], "ok", "{}", ticks[1]);
    assert_eq!(ticks[2]["class"], "ok", "{}", ticks[2]);
    // What happened stays as it happened: the unanswered turn is kept.
    let messages: Value = serde_json::from_str(&home.read("state/messages.json")).unwrap();
    let roles: Vec<&str> = messages["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "user", "assistant", "user", "assistant"]);
}

#[test]
fn a_server_killed_mid_stream_is_an_outage_and_the_message_waits() {
    let mut events = openai::completion("The lighthouse keeper's cat is", &[], 300, 9);
    events.truncate(3);
    let server = ModelServer::start(vec![Answer::Dropped { events }]);
    let home = openai_home(&server, "smollm2-135m");
    home.ok(&["say", "what is the cat called?"]);
    run_openai(&home);
    let tick = &home.ticks()[0];
    assert_eq!(tick["outage"], true, "{tick}");
    assert!(
        tick["note"].as_str().unwrap().contains("broke mid-answer"),
        "{tick}"
    );
    // Not consumed: the next tick presents it again.
    assert_eq!(home.list("inbox").len(), 1, "{:?}", home.list("inbox"));
    let healer: Value = serde_json::from_str(&home.read("state/healer.json")).unwrap();
    assert!(
        healer["streak"].as_array().is_none_or(|s| s.is_empty()),
        "an outage is not counted toward a heal: {healer}"
    );
}

#[test]
fn a_plain_text_answer_to_an_inbox_message_reaches_the_operator() {
    let server = ModelServer::start(vec![stream(openai::completion(
        "The lighthouse keeper's cat is called Pemberton.",
        &[],
        400,
        12,
    ))]);
    let home = openai_home(&server, "smollm2-135m");
    home.ok(&["say", "what is the lighthouse keeper's cat called?"]);
    run_openai(&home);
    let tick = &home.ticks()[0];
    assert_eq!(tick["class"], "ok", "{tick}");
    assert!(tick.get("quiet").is_none(), "{tick}");
    let letters = home.list("outbox");
    assert_eq!(letters.len(), 1, "{letters:?}");
    let letter = home.read(&format!("outbox/{}", letters[0]));
    assert!(letter.contains("called Pemberton"), "{letter}");
    assert!(letter.contains("in_reply_to: \"inbox/"), "{letter}");
    assert!(letter.contains("rather than with `send`"), "{letter}");
    let listed = home.ok(&["outbox"]);
    assert!(listed.contains("A reply from your agent"), "{listed}");
    // One agent, two doors: the answer is the ask's hot memory too.
    assert!(home.read("state/sessions.jsonl").contains("Pemberton"));
}

#[test]
fn the_same_reply_to_every_message_is_flared_though_idle_ticks_come_between() {
    let server = ModelServer::start(vec![stream(openai::completion(
        "I am a helpful assistant.",
        &[],
        400,
        13,
    ))]);
    let home = openai_home(&server, "smollm2-135m");
    for n in 0..4 {
        home.ok(&["say", &format!("question {n}: where is the boat?")]);
        run_openai(&home);
        run_openai(&home); // an idle tick between messages
    }
    let ticks = home.ticks();
    let quiet: Vec<u64> = ticks
        .iter()
        .filter(|t| t.get("quiet").is_some())
        .map(|t| t["tick"].as_u64().unwrap())
        .collect();
    assert_eq!(quiet, [3, 5, 7], "{ticks:?}");
    let flares = home.ok(&["flares"]);
    assert!(
        flares.contains("quiet-failure") || flares.contains("nothing happens"),
        "{flares}"
    );
}

#[test]
fn a_tick_killed_at_its_time_limit_records_the_calls_it_paid_for() {
    let server = ModelServer::start(vec![
        stream(openai::completion(
            "Writing it down.",
            &[("call_1", "journal", &["{\"text\": \"the boat is in\"}"])],
            646,
            1024,
        )),
        Answer::Paced {
            events: openai::completion("and then some", &[], 700, 5),
            pause: Duration::from_secs(3),
        },
    ]);
    let home = openai_home(&server, "smollm2-135m");
    let config = home
        .read("hearth.toml")
        .replace("timeout_s = 2", "timeout_s = 20");
    std::fs::write(home.file("hearth.toml"), config + "[tick]\ntimeout_s = 1\n").unwrap();
    run_openai(&home);
    let tick = &home.ticks()[0];
    assert_eq!(tick["class"], "crash", "{tick}");
    assert_eq!(tick["tokens"]["in"], 646, "{tick}");
    assert_eq!(tick["tokens"]["out"], 1024, "{tick}");
    let expected = 646.0 * 1.0 / 1e6 + 1024.0 * 2.0 / 1e6;
    assert!(
        (tick["cost_usd"].as_f64().unwrap() - expected).abs() < 1e-12,
        "{tick}"
    );
    let budget: Value = serde_json::from_str(&home.read("state/budget.json")).unwrap();
    let spent: f64 = budget["days"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_f64().unwrap())
        .sum();
    assert!((spent - expected).abs() < 1e-12, "{budget}");
}

#[test]
fn a_new_home_whose_first_ticks_all_fail_says_why_and_gives_its_messages_back() {
    let refused = serde_json::json!({"error": {"code": 400, "message": "Failed to parse tools: unsupported chat template", "type": "invalid_request_error"}});
    let server = ModelServer::start(vec![status(400, &[], refused.to_string())]);
    let home = openai_home(&server, "smollm2-135m");
    home.ok(&["say", "are you there?"]);
    let out = home
        .cmd(&["run", "--ticks", "20"])
        .env("OLLAMA_KEY", KEY)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let flares = home.ok(&["flares"]);
    assert!(flares.contains("no tick has succeeded yet"), "{flares}");
    let panic = home
        .list("outbox")
        .into_iter()
        .map(|f| home.read(&format!("outbox/{f}")))
        .find(|l| l.contains("flare: \"panic\"") || l.contains("flare: panic"))
        .expect("a panic flare");
    assert!(panic.contains("no tick has exited 0 yet"), "{panic}");
    assert!(!panic.contains("after 0 heals"), "{panic}");
    assert!(panic.contains("back in the inbox"), "{panic}");
    assert_eq!(home.list("inbox").len(), 1, "the message is back");
    home.ok(&["heal", "--resume"]);
    assert_eq!(
        home.list("inbox").len(),
        1,
        "and still there after --resume"
    );
    let status = home.git(&["status", "--porcelain"]);
    assert!(
        String::from_utf8_lossy(&status.stdout).trim().is_empty(),
        "all committed"
    );
}

fn cut(text: &str) -> Vec<String> {
    openai::completion(text, &[], 300, 4096)
        .into_iter()
        .map(|e| e.replace("\"finish_reason\":\"stop\"", "\"finish_reason\":\"length\""))
        .collect()
}

#[test]
fn an_ask_says_when_what_it_printed_was_thrown_away_and_stores_only_the_kept_answer() {
    let server = ModelServer::start(vec![
        stream(cut("The lighthouse keeper's cat is called Pem")),
        stream(openai::completion("Pemberton.", &[], 300, 4)),
    ]);
    let home = openai_home(&server, "smollm2-135m");
    let out = home
        .cmd(&["ask", "what is the cat called?"])
        .env("OLLAMA_KEY", KEY)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let printed = String::from_utf8(out.stdout).unwrap();
    let marker = printed
        .find("was not kept")
        .unwrap_or_else(|| panic!("{printed}"));
    assert!(printed[..marker].contains("called Pem"), "{printed}");
    assert!(printed[marker..].contains("Pemberton."), "{printed}");
    let sessions = home.read("state/sessions.jsonl");
    let answer: Value = sessions
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|l| l["kind"] == "answer")
        .unwrap();
    assert_eq!(answer["said"], "Pemberton.");
}

#[test]
fn a_cut_ask_is_remembered_as_cut_and_an_asks_journal_entry_says_ask() {
    let server = ModelServer::start(vec![
        stream(cut("The cat is")),
        stream(cut("The cat is")),
        stream(openai::completion(
            "Noting it.",
            &[(
                "call_1",
                "journal",
                &["{\"text\": \"asked about the cat\"}"],
            )],
            300,
            9,
        )),
        stream(openai::completion("Noted.", &[], 300, 2)),
    ]);
    let home = openai_home(&server, "smollm2-135m");
    let ask = |q: &str| {
        home.cmd(&["ask", q])
            .env("OLLAMA_KEY", KEY)
            .output()
            .unwrap()
    };
    assert!(!ask("what is the cat called?").status.success());
    assert!(ask("what did you say last time?").status.success());
    let requests = server.received();
    let hot = requests[2].body["messages"].to_string();
    assert!(hot.contains("cut off before it was whole"), "{hot}");
    assert!(!hot.contains("interrupted"), "{hot}");
    let journal = home.list("memory/journal");
    let day = journal
        .iter()
        .find(|f| f.ends_with(".md") && *f != "README.md")
        .unwrap();
    let text = home.read(&format!("memory/journal/{day}"));
    assert!(text.contains(" UTC, ask\n"), "{text}");
    assert!(!text.contains("tick 0"), "{text}");
}

/// llama.cpp's refusal of a prompt longer than its `--ctx-size`.
fn exceeds_context() -> Answer {
    status(
        400,
        &[],
        serde_json::json!({"error": {"code": 400, "message": "the request exceeds the available context size, try increasing it", "type": "exceed_context_size_error", "n_prompt_tokens": 2223, "n_ctx": 2048}}).to_string(),
    )
}

#[test]
fn a_server_that_refuses_the_request_as_too_long_consumes_nothing_and_flares_once() {
    let server = ModelServer::start(vec![exceeds_context()]);
    let home = openai_home(&server, "smollm2-135m");
    home.ok(&["say", "are you there?"]);
    run_openai(&home);
    run_openai(&home);
    let ticks = home.ticks();
    assert_eq!(ticks[0]["class"], "context-insufficiency", "{}", ticks[0]);
    assert_eq!(home.list("inbox").len(), 1, "nothing consumed");
    let flares: Vec<String> = home
        .list("outbox")
        .into_iter()
        .map(|f| home.read(&format!("outbox/{f}")))
        .filter(|l| l.contains("context"))
        .collect();
    assert_eq!(flares.len(), 1, "one flare until read: {flares:?}");
    assert!(flares[0].contains("context_tokens"), "{}", flares[0]);
    // The tick estimated the tools it sends, too.
    assert!(
        ticks[0]["tokens_by_part"]["tools"].as_u64().unwrap() > 300,
        "{}",
        ticks[0]
    );
}

#[test]
fn a_window_that_fills_mid_answer_is_met_with_less_history_not_more_answer() {
    let full: Vec<String> = openai::completion("The cat is called", &[], 2011, 37)
        .into_iter()
        .map(|e| e.replace("\"finish_reason\":\"stop\"", "\"finish_reason\":\"length\""))
        .collect();
    let server = ModelServer::start(vec![
        stream(openai::completion("Noted.", &[], 900, 2)),
        stream(full),
        stream(openai::completion("Pemberton.", &[], 800, 4)),
    ]);
    let home = openai_home(&server, "smollm2-135m");
    run_openai(&home);
    home.ok(&["say", "what is the cat called?"]);
    run_openai(&home);
    let tick = &home.ticks()[1];
    let strategies: Vec<&str> = tick["recoveries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["strategy"].as_str().unwrap())
        .collect();
    assert!(strategies.contains(&"reduced context"), "{tick}");
    assert!(!strategies.contains(&"retry with more tokens"), "{tick}");
}
