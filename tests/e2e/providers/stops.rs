//! How real providers stop, as their API references and SDK types define
//! it: a turn cut by the token limit, a refusal, thinking with its
//! signature, usage reported at the end, an error event after 200, a
//! stored empty turn. Each stream is written to the documented format.

use serde_json::json;

use super::*;
use crate::common::model_server::openai;

pub(super) fn ev(name: &str, data: Value) -> String {
    anthropic::event(name, data)
}

/// An Anthropic message of the given blocks (already as events), ended by
/// `stop_reason`, with usage at start and in `message_delta`.
pub(super) fn message(
    blocks: Vec<String>,
    stop_reason: &str,
    start_usage: Value,
    end_usage: Value,
) -> Answer {
    let mut events = vec![ev(
        "message_start",
        json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "content": [], "model": "claude-test", "stop_reason": null, "usage": start_usage}}),
    )];
    events.extend(blocks);
    events.push(ev("message_delta", json!({"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": null}, "usage": end_usage})));
    events.push(ev("message_stop", json!({"type": "message_stop"})));
    stream(events)
}

pub(super) fn text_block(index: u64, text: &str) -> Vec<String> {
    vec![
        ev(
            "content_block_start",
            json!({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}),
        ),
        ev(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": text}}),
        ),
        ev(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": index}),
        ),
    ]
}

fn tool_block(index: u64, id: &str, name: &str, partial_json: &str) -> Vec<String> {
    vec![
        ev(
            "content_block_start",
            json!({"type": "content_block_start", "index": index, "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}}),
        ),
        ev(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": partial_json}}),
        ),
        ev(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": index}),
        ),
    ]
}

pub(super) fn usage(input: u64, output: u64) -> Value {
    json!({"input_tokens": input, "output_tokens": output})
}

pub(super) fn assistant_turns(home: &TestHome) -> Vec<Value> {
    let messages: Value = serde_json::from_str(&home.read("state/messages.json")).unwrap();
    messages["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "assistant")
        .cloned()
        .collect()
}

#[test]
fn a_tool_call_cut_by_max_tokens_never_runs_and_the_tick_fails_naming_the_stop_reason() {
    let cut = || {
        let mut blocks = text_block(0, "Let me write that down.");
        blocks.extend(tool_block(
            1,
            "toolu_1",
            "write",
            "{\"path\": \"memory/a.md\", \"content\": \"half",
        ));
        message(blocks, "max_tokens", usage(100, 1), usage(100, 4096))
    };
    let server = ModelServer::start(vec![cut(), cut()]);
    let home = home_for(&server, "");
    home.ok(&["say", "write a long note"]);
    run(&home, "1");

    let tick = &home.ticks()[0];
    assert_eq!(tick["class"], "model-limitation", "{tick}");
    assert_eq!(tick["stop_reason"], "max_tokens", "{tick}");
    assert!(!home.file("memory/a.md").exists(), "the cut call never ran");
    assert!(
        assistant_turns(&home).is_empty(),
        "a cut turn is never kept"
    );
    let requests = server.received();
    assert_eq!(requests.len(), 2, "one retry");
    assert_eq!(requests[0].body["max_tokens"], 4096);
    assert_eq!(
        requests[1].body["max_tokens"], 5096,
        "[recovery] extra_tokens more"
    );
    assert_eq!(tick["tokens"]["out"], 8192, "both calls are paid for");
}

#[test]
fn a_cut_answer_whose_retry_fits_keeps_only_the_whole_answer() {
    let server = ModelServer::start(vec![
        message(
            text_block(0, "The answer is"),
            "max_tokens",
            usage(100, 1),
            usage(100, 10),
        ),
        message(
            text_block(0, "The answer is 42."),
            "end_turn",
            usage(100, 1),
            usage(100, 12),
        ),
    ]);
    let home = home_for(&server, "");
    home.ok(&["say", "what is the answer?"]);
    run(&home, "1");
    let tick = &home.ticks()[0];
    assert_eq!(tick["class"], "ok", "{tick}");
    let turns = assistant_turns(&home);
    assert_eq!(turns.len(), 1);
    assert_eq!(turns[0]["content"][0]["text"], "The answer is 42.");
}

#[test]
fn an_openai_answer_cut_by_length_is_not_stored_as_the_answer() {
    let cut = || {
        stream(vec![
            openai::chunk(
                json!({"id": "c", "choices": [{"index": 0, "delta": {"role": "assistant", "content": "{\""}, "finish_reason": null}]}),
            ),
            openai::chunk(
                json!({"id": "c", "choices": [{"index": 0, "delta": {}, "finish_reason": "length"}]}),
            ),
            openai::chunk(
                json!({"id": "c", "choices": [], "usage": {"prompt_tokens": 50, "completion_tokens": 4096, "total_tokens": 4146}}),
            ),
            "data: [DONE]\n\n".into(),
        ])
    };
    let server = ModelServer::start(vec![cut(), cut()]);
    let home = openai_home(&server, "llama3.1");
    home.ok(&["say", "answer in JSON"]);
    run_openai(&home);
    let tick = &home.ticks()[0];
    assert_eq!(tick["class"], "model-limitation", "{tick}");
    assert_eq!(tick["stop_reason"], "length");
    assert!(assistant_turns(&home).is_empty(), "`{{\"` is not an answer");
}

#[test]
fn an_anthropic_refusal_is_recorded_with_its_words_and_not_kept() {
    let server = ModelServer::start(vec![message(
        text_block(0, "I can't help with that."),
        "refusal",
        usage(100, 1),
        usage(100, 8),
    )]);
    let home = home_for(&server, "");
    home.ok(&["say", "do something bad"]);
    run(&home, "1");
    let tick = &home.ticks()[0];
    assert_eq!(tick["class"], "model-limitation", "{tick}");
    assert_eq!(tick["stop_reason"], "refusal");
    assert_eq!(tick["refusal"], "I can't help with that.");
    assert!(assistant_turns(&home).is_empty());
}

#[test]
fn a_refusal_gives_the_fallback_model_one_try() {
    let server = ModelServer::start(vec![
        message(
            text_block(0, "I can't."),
            "refusal",
            usage(100, 1),
            usage(100, 3),
        ),
        message(
            text_block(0, "Here you are."),
            "end_turn",
            usage(100, 1),
            usage(100, 3),
        ),
    ]);
    let home = home_for(&server, "fallback_model = \"claude-other\"\n");
    home.ok(&["say", "please"]);
    run(&home, "1");
    let tick = &home.ticks()[0];
    assert_eq!(tick["class"], "ok", "{tick}");
    assert_eq!(
        tick["refusal"], "I can't.",
        "the refusal is still on record"
    );
    let requests = server.received();
    assert_eq!(requests[1].body["model"], "claude-other");
    assert_eq!(
        assistant_turns(&home)[0]["content"][0]["text"],
        "Here you are."
    );
}

#[test]
fn an_openai_refusal_streams_in_its_own_field_and_is_not_the_answer() {
    let server = ModelServer::start(vec![stream(vec![
        openai::chunk(
            json!({"id": "c", "choices": [{"index": 0, "delta": {"role": "assistant", "content": null, "refusal": ""}, "finish_reason": null}]}),
        ),
        openai::chunk(
            json!({"id": "c", "choices": [{"index": 0, "delta": {"refusal": "I'm sorry, "}, "finish_reason": null}]}),
        ),
        openai::chunk(
            json!({"id": "c", "choices": [{"index": 0, "delta": {"refusal": "I can't do that."}, "finish_reason": null}]}),
        ),
        openai::chunk(
            json!({"id": "c", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
        ),
        "data: [DONE]\n\n".into(),
    ])]);
    let home = openai_home(&server, "gpt-4.1");
    home.ok(&["say", "do something bad"]);
    run_openai(&home);
    let tick = &home.ticks()[0];
    assert_eq!(tick["class"], "model-limitation", "{tick}");
    assert_eq!(tick["refusal"], "I'm sorry, I can't do that.");
    assert!(assistant_turns(&home).is_empty());
}

#[test]
fn thinking_and_its_signature_go_back_unchanged_in_the_tool_round() {
    let thinking = "The operator wants a note. I should journal it.";
    let signature = "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds";
    let mut first = vec![
        ev(
            "content_block_start",
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": "", "signature": ""}}),
        ),
        ev(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": &thinking[..20]}}),
        ),
        ev(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": &thinking[20..]}}),
        ),
        ev(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": signature}}),
        ),
        ev(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": 0}),
        ),
    ];
    first.extend(tool_block(1, "toolu_1", "journal", "{\"text\": \"noted\"}"));
    let server = ModelServer::start(vec![
        message(first, "tool_use", usage(100, 1), usage(100, 40)),
        message(
            text_block(0, "Done."),
            "end_turn",
            usage(150, 1),
            usage(150, 2),
        ),
    ]);
    let home = home_for(&server, "thinking_tokens = 2000\n");
    home.ok(&["say", "note this"]);
    run(&home, "1");
    assert_eq!(home.ticks()[0]["class"], "ok");
    let requests = server.received();
    assert_eq!(
        requests[0].body["thinking"],
        json!({"type": "enabled", "budget_tokens": 2000})
    );
    let sent_back = &requests[1].body["messages"].as_array().unwrap();
    let assistant = sent_back.iter().find(|m| m["role"] == "assistant").unwrap();
    assert_eq!(
        assistant["content"][0],
        json!({"type": "thinking", "thinking": thinking, "signature": signature})
    );
    let reply = home.history()[0].message.clone();
    assert!(
        !reply.contains(thinking),
        "thinking is never the answer: {reply}"
    );
}

#[test]
fn reasoning_models_get_max_completion_tokens_and_others_max_tokens() {
    for (model, extra, field, other) in [
        ("o3-mini", "", "max_completion_tokens", "max_tokens"),
        ("openai/gpt-5.1", "", "max_completion_tokens", "max_tokens"),
        ("o1", "", "max_completion_tokens", "max_tokens"),
        ("gpt-4.1", "", "max_tokens", "max_completion_tokens"),
        ("llama3.1", "", "max_tokens", "max_completion_tokens"),
        (
            "llama3.1",
            "max_tokens_field = \"max_completion_tokens\"\n",
            "max_completion_tokens",
            "max_tokens",
        ),
    ] {
        let server = ModelServer::start(vec![stream(openai::completion("hi", &[], 10, 2))]);
        let home = TestHome::with_config(&format!(
            "[model]\nprovider = \"openai\"\nmodel = \"{model}\"\nbase_url = \"{}/v1\"\napi_key_env = \"OLLAMA_KEY\"\n{extra}",
            server.url
        ));
        run_openai(&home);
        let body = &server.received()[0].body;
        assert_eq!(body[field], 4096, "{model}: {body}");
        assert!(body.get(other).is_none(), "{model}: {body}");
    }
}

#[test]
fn a_request_without_tools_carries_no_tools_key() {
    let server = ModelServer::start(vec![stream(openai::completion(
        "{\"results\": [{\"id\": 1, \"note\": \"the heron\"}]}",
        &[],
        50,
        10,
    ))]);
    let home = openai_home(&server, "gpt-4.1");
    std::fs::write(
        home.file("memory/birds.md"),
        "the heron waits by the river\n",
    )
    .unwrap();
    let out = home.ok_with_env(&["recall", "--json", "heron"], &[("OLLAMA_KEY", KEY)]);
    let found: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(found["order"], "reranked", "{found}");
    let body = &server.received()[0].body;
    assert!(body.get("tools").is_none(), "{body}");
}

#[test]
fn an_overloaded_error_event_after_200_is_retried_and_is_an_outage() {
    let overloaded = || {
        stream(vec![
            ev(
                "message_start",
                json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "content": [], "model": "claude-test", "usage": usage(10, 1)}}),
            ),
            anthropic::error_event("overloaded_error", "Overloaded"),
        ])
    };
    let server = ModelServer::start(vec![overloaded(), overloaded(), overloaded()]);
    let home = home_for(&server, "");
    home.ok(&["say", "hi"]);
    run(&home, "1");
    let tick = &home.ticks()[0];
    assert_eq!(tick["class"], "model-limitation", "{tick}");
    assert_eq!(tick["outage"], true, "not the agent's failure: {tick}");
    assert_eq!(server.received().len(), 3, "retried as a 529 would be");
}

#[test]
fn an_empty_assistant_turn_stored_by_an_older_hearth_is_dropped_and_never_sent() {
    let server = ModelServer::start(vec![message(
        text_block(0, "Hello."),
        "end_turn",
        usage(10, 1),
        usage(10, 2),
    )]);
    let home = home_for(&server, "");
    let poisoned = json!({"version": 1, "messages": [
        {"role": "user", "content": [{"type": "text", "text": "hi"}]},
        {"role": "assistant", "content": []},
    ]});
    std::fs::write(home.file("state/messages.json"), poisoned.to_string()).unwrap();
    home.ok(&["say", "hello again"]);
    run(&home, "1");
    assert_eq!(home.ticks()[0]["class"], "ok");
    let sent = &server.received()[0].body["messages"];
    for m in sent.as_array().unwrap() {
        assert!(!m["content"].as_array().unwrap().is_empty(), "{sent}");
    }
}

#[test]
fn cache_breakpoints_sit_on_the_system_the_last_requests_end_and_the_newest_message() {
    let server = ModelServer::start(vec![
        stream(anthropic::message(
            "Noting.",
            &[("toolu_1", "journal", &["{\"text\": \"x\"}"])],
            100,
            5,
        )),
        stream(anthropic::message("Done.", &[], 120, 2)),
    ]);
    let home = home_for(&server, "");
    home.ok(&["say", "note x"]);
    run(&home, "1");
    let requests = server.received();
    let system = requests[0].body["system"].as_array().unwrap();
    assert_eq!(system.last().unwrap()["cache_control"]["type"], "ephemeral");
    assert!(system
        .iter()
        .all(|b| !b["text"].as_str().unwrap().is_empty()));
    let marked = |message: &Value| {
        message["content"]
            .as_array()
            .unwrap()
            .last()
            .unwrap()
            .get("cache_control")
            .is_some()
    };
    // The first request caches itself whole for the tool round after it.
    let first = requests[0].body["messages"].as_array().unwrap();
    assert!(marked(first.last().unwrap()));
    // The round reads it back where it ended, and caches itself whole.
    let round = requests[1].body["messages"].as_array().unwrap();
    let newest = round.last().unwrap()["content"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(newest["type"], "tool_result");
    assert_eq!(newest["cache_control"]["type"], "ephemeral", "{newest}");
    assert!(
        marked(&round[round.len() - 3]),
        "the previous request's end"
    );
    let count = requests[1]
        .body
        .to_string()
        .matches("cache_control")
        .count();
    assert!(count <= 4, "{count} breakpoints");
}

#[test]
fn a_paused_turn_is_sent_back_and_the_model_continues() {
    let server = ModelServer::start(vec![
        message(
            text_block(0, "Searching…"),
            "pause_turn",
            usage(100, 1),
            usage(100, 5),
        ),
        message(
            text_block(0, "Found it."),
            "end_turn",
            usage(120, 1),
            usage(120, 3),
        ),
    ]);
    let home = home_for(&server, "");
    home.ok(&["say", "find it"]);
    run(&home, "1");
    assert_eq!(home.ticks()[0]["class"], "ok");
    let requests = server.received();
    assert_eq!(requests.len(), 2);
    let sent = requests[1].body["messages"].as_array().unwrap();
    assert_eq!(sent.last().unwrap()["role"], "assistant");
    assert_eq!(sent.last().unwrap()["content"][0]["text"], "Searching…");
    let turns = assistant_turns(&home);
    assert_eq!(turns.len(), 2);
}

#[test]
fn a_200_that_is_not_an_event_stream_says_so() {
    let server = ModelServer::start(vec![status(
        200,
        &[],
        json!({"id": "msg_1", "type": "message", "content": []}).to_string(),
    )]);
    let home = home_for(&server, "");
    home.ok(&["say", "hi"]);
    let out = run(&home, "1");
    let tick = &home.ticks()[0];
    assert_eq!(tick["class"], "model-limitation", "{tick}");
    let note = tick["note"].as_str().unwrap_or("");
    assert!(
        note.contains("not the event stream"),
        "{note} / {}",
        String::from_utf8_lossy(&out.stderr)
    );
}
