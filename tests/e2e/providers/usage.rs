//! Usage that adds up, so the budget is true: counts reported only at the
//! end of an Anthropic stream, OpenAI's cached tokens charged once at the
//! cached price, reasoning tokens counted as output once.

use serde_json::json;

use super::stops::{assistant_turns, message, text_block};
use super::*;
use crate::common::model_server::openai;

#[test]
fn usage_sent_only_in_message_delta_is_charged() {
    let server = ModelServer::start(vec![message(
        text_block(0, "Hello."),
        "end_turn",
        json!({"input_tokens": 0, "output_tokens": 0}),
        json!({"input_tokens": 1200, "output_tokens": 30, "cache_read_input_tokens": 800, "cache_creation_input_tokens": 0}),
    )]);
    let home = home_for(
        &server,
        "[budget.prices.\"claude-test\"]\ninput_per_mtok = 3.0\noutput_per_mtok = 15.0\n",
    );
    home.ok(&["say", "hi"]);
    run(&home, "1");
    let tick = &home.ticks()[0];
    assert_eq!(tick["tokens"]["in"], 1200, "{tick}");
    assert_eq!(tick["tokens"]["out"], 30);
    assert_eq!(tick["tokens"]["cache_read"], 800);
    let expected = (1200.0 * 3.0 + 30.0 * 15.0 + 800.0 * 0.3) / 1e6;
    assert!(
        (tick["cost_usd"].as_f64().unwrap() - expected).abs() < 1e-9,
        "{tick}"
    );
}

#[test]
fn openai_cached_tokens_are_charged_once_at_the_cached_price() {
    let server = ModelServer::start(vec![stream(vec![
        openai::chunk(
            json!({"id": "c", "choices": [{"index": 0, "delta": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}]}),
        ),
        openai::chunk(
            json!({"id": "c", "choices": [], "usage": {"prompt_tokens": 1_000_000, "completion_tokens": 0, "total_tokens": 1_000_000, "prompt_tokens_details": {"cached_tokens": 800_000}, "completion_tokens_details": {"reasoning_tokens": 0}}}),
        ),
        "data: [DONE]\n\n".into(),
    ])]);
    let home = openai_home(&server, "llama3.1");
    home.ok(&["say", "hi"]);
    run_openai(&home);
    let tick = &home.ticks()[0];
    assert_eq!(tick["tokens"]["in"], 200_000, "{tick}");
    assert_eq!(tick["tokens"]["cache_read"], 800_000);
    let cost = tick["cost_usd"].as_f64().unwrap();
    // $1/M in: 200,000 uncached at $1/M and 800,000 at a tenth of that.
    assert!((cost - 0.28).abs() < 1e-9, "{cost}");
    assert!(cost <= 1.0);
}

#[test]
fn reasoning_tokens_are_output_and_counted_once() {
    let server = ModelServer::start(vec![stream(vec![
        openai::chunk(
            json!({"id": "c", "choices": [{"index": 0, "delta": {"role": "assistant", "reasoning_content": "thinking…"}, "finish_reason": null}]}),
        ),
        openai::chunk(
            json!({"id": "c", "choices": [{"index": 0, "delta": {"content": "ok"}, "finish_reason": "stop"}]}),
        ),
        openai::chunk(
            json!({"id": "c", "choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": 500, "total_tokens": 510, "completion_tokens_details": {"reasoning_tokens": 480}}}),
        ),
        "data: [DONE]\n\n".into(),
    ])]);
    let home = openai_home(&server, "o3-mini");
    home.ok(&["say", "hi"]);
    run_openai(&home);
    let tick = &home.ticks()[0];
    assert_eq!(tick["tokens"]["out"], 500, "{tick}");
    assert_eq!(assistant_turns(&home)[0]["content"][0]["text"], "ok");
}
