//! Tests of `model/openai.rs`.

use super::*;

fn chunk(v: Value) -> String {
    format!("data: {v}\n\n")
}

#[test]
fn text_tool_fragments_reused_index_and_usage() {
    let s = [
        chunk(json!({"choices": [{"index": 0, "delta": {"role": "assistant", "content": "Hi"}}]})),
        chunk(json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "c1", "type": "function", "function": {"name": "journal", "arguments": "{\"te"}}]}}]})),
        chunk(json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": "xt\": \"a\"}"}}]}}]})),
        chunk(json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "c2", "type": "function", "function": {"name": "sleep", "arguments": "{\"minutes\": 5}"}}]}}]})),
        chunk(json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})),
        chunk(json!({"choices": null, "usage": {"prompt_tokens": 9, "completion_tokens": 4}})),
        "data: [DONE]\n\n".to_string(),
    ]
    .concat();
    let reply = read_stream(s.as_bytes(), &mut |_| {}).unwrap();
    assert_eq!(reply.content.len(), 3);
    assert_eq!(
        reply.content[1],
        Block::ToolUse {
            id: "c1".into(),
            name: "journal".into(),
            input: json!({"text": "a"})
        }
    );
    assert_eq!(
        reply.content[2],
        Block::ToolUse {
            id: "c2".into(),
            name: "sleep".into(),
            input: json!({"minutes": 5})
        }
    );
    assert_eq!(
        (reply.usage.input_tokens, reply.usage.output_tokens),
        (9, 4)
    );
}

#[test]
fn no_done_is_an_error() {
    let s = chunk(json!({"choices": [{"index": 0, "delta": {"content": "Hi"}}]}));
    assert!(matches!(
        read_stream(s.as_bytes(), &mut |_| {}),
        Err(ModelError::Stream(_))
    ));
}

#[test]
fn an_error_chunk_of_a_server_side_kind_stands_for_its_status() {
    let chunk = |e: &str| format!("data: {{\"error\": {e}}}\n\n");
    let overloaded = chunk(r#"{"message": "The server is overloaded", "type": "server_error"}"#);
    let err = read_stream(overloaded.as_bytes(), &mut |_| {}).unwrap_err();
    assert!(matches!(err, ModelError::Http { status: 500, .. }), "{err}");
    assert!(err.is_outage());
    let limited = chunk(r#"{"message": "slow down", "code": "rate_limit_exceeded"}"#);
    let err = read_stream(limited.as_bytes(), &mut |_| {}).unwrap_err();
    assert!(matches!(err, ModelError::Http { status: 429, .. }), "{err}");
    let bad = chunk(r#"{"message": "bad schema", "type": "invalid_request_error"}"#);
    let err = read_stream(bad.as_bytes(), &mut |_| {}).unwrap_err();
    assert!(
        matches!(err, ModelError::Stream(_)) && !err.is_outage(),
        "{err}"
    );
}

#[test]
fn openai_itself_gets_the_homes_cache_key_and_a_days_retention_where_documented() {
    let messages = [Message {
        outside: crate::outside::Outside::none(),
        role: Role::User,
        content: vec![Block::Text {
            text: "Tick 1".into(),
        }],
    }];
    let request = Request {
        system: &[],
        messages: &messages,
        tools: &[],
        max_tokens: 100,
        facts: None,
        cache: Some(crate::model::cache::Lifetime::OneHour),
        cache_key: Some("hearth-0123456789abcdef"),
    };
    let b = body("gpt-5.1", "max_completion_tokens", true, &request);
    assert_eq!(b["prompt_cache_key"], "hearth-0123456789abcdef");
    assert_eq!(b["prompt_cache_retention"], "24h");
    let b = body("gpt-4o", "max_tokens", true, &request);
    assert_eq!(b["prompt_cache_key"], "hearth-0123456789abcdef");
    assert!(b.get("prompt_cache_retention").is_none(), "{b}");
    // llama.cpp, vLLM, Ollama: no field they might refuse.
    let b = body("gpt-5.1", "max_tokens", false, &request);
    assert!(b.get("prompt_cache_key").is_none() && b.get("prompt_cache_retention").is_none());
    assert!(is_openai_itself("") && is_openai_itself("https://api.openai.com/v1"));
    assert!(!is_openai_itself("http://127.0.0.1:8080/v1"));
}

#[test]
fn the_token_limit_field_follows_the_model_family() {
    let field = |model: &str, set: &str| {
        max_tokens_field(&ModelConfig {
            model: model.into(),
            max_tokens_field: set.into(),
            ..ModelConfig::default()
        })
    };
    assert_eq!(field("o4-mini", ""), "max_completion_tokens");
    assert_eq!(field("gpt-5", ""), "max_completion_tokens");
    assert_eq!(field("gpt-5-nano-2025-08-07", ""), "max_completion_tokens");
    assert_eq!(field("openrouter/o3", ""), "max_completion_tokens");
    assert_eq!(field("gpt-4o", ""), "max_tokens");
    assert_eq!(field("o1x", ""), "max_tokens");
    assert_eq!(field("qwen3:8b", ""), "max_tokens");
    assert_eq!(field("o3", "max_tokens"), "max_tokens");
}

/// OpenAI's usage chunk (`stream_options.include_usage`: `choices` empty,
/// the request's whole usage): cached prompt tokens are counted once, as
/// cache reads, and the rest as input, so the recorded cost is the bill.
#[test]
fn the_usage_chunk_counts_cached_prompt_tokens_once() {
    let s = [
        chunk(json!({"choices": [{"index": 0, "delta": {"role": "assistant", "content": "Hi"}}]})),
        chunk(json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})),
        chunk(json!({"choices": [], "usage": {"prompt_tokens": 2006, "completion_tokens": 300, "total_tokens": 2306, "prompt_tokens_details": {"cached_tokens": 1920, "audio_tokens": 0}, "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0, "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0}}})),
        "data: [DONE]\n\n".to_string(),
    ]
    .concat();
    let reply = read_stream(s.as_bytes(), &mut |_| {}).unwrap();
    assert_eq!(
        (
            reply.usage.input_tokens,
            reply.usage.cache_read_tokens,
            reply.usage.cache_write_tokens,
            reply.usage.output_tokens
        ),
        (86, 1920, 0, 300)
    );
    assert_eq!(reply.usage.input_sent(), 2006);
}
