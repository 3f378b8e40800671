//! Tests of `model/anthropic.rs`.

use super::*;

const STREAM: &str = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":12,\"output_tokens\":1,\"cache_read_input_tokens\":7}}}\n\n\
event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n\
event: ping\ndata: {\"type\": \"ping\"}\n\n\
event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hel\"}}\n\n\
event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"lo\"}}\n\n\
event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n\
event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"journal\",\"input\":{}}}\n\n\
event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"te\"}}\n\n\
event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"xt\\\": \\\"hi\\\"}\"}}\n\n\
event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":1}\n\n\
event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{\"output_tokens\":30}}\n\n\
event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";

#[test]
fn text_and_a_fragmented_tool_call() {
    let mut streamed = String::new();
    let reply = read_stream(STREAM.as_bytes(), &mut |t| streamed.push_str(t)).unwrap();
    assert_eq!(streamed, "Hello");
    assert_eq!(
        reply.content[0],
        Block::Text {
            text: "Hello".into()
        }
    );
    assert_eq!(
        reply.content[1],
        Block::ToolUse {
            id: "toolu_1".into(),
            name: "journal".into(),
            input: json!({"text": "hi"})
        }
    );
    assert_eq!(reply.usage.input_tokens, 12);
    assert_eq!(reply.usage.output_tokens, 30);
    assert_eq!(reply.usage.cache_read_tokens, 7);
}

#[test]
fn a_cut_stream_is_an_error() {
    let cut = &STREAM[..STREAM.find("event: message_delta").unwrap()];
    let err = read_stream(cut.as_bytes(), &mut |_| {}).unwrap_err();
    assert!(matches!(err, ModelError::Stream(_)), "{err}");
}

#[test]
fn an_error_event_after_200_is_an_error() {
    let s = "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n";
    let err = read_stream(s.as_bytes(), &mut |_| {}).unwrap_err();
    assert!(err.to_string().contains("overloaded_error"), "{err}");
}

fn text(role: Role, text: &str) -> Message {
    Message {
        outside: crate::outside::Outside::none(),
        role,
        content: vec![Block::Text { text: text.into() }],
    }
}

fn marks(body: &Value) -> Vec<(String, Value)> {
    let mut found = Vec::new();
    for (i, b) in body["system"].as_array().unwrap().iter().enumerate() {
        if !b["cache_control"].is_null() {
            found.push((format!("system {i}"), b["cache_control"].clone()));
        }
    }
    for (i, m) in body["messages"].as_array().unwrap().iter().enumerate() {
        for b in m["content"].as_array().unwrap() {
            if !b["cache_control"].is_null() {
                found.push((format!("message {i}"), b["cache_control"].clone()));
            }
        }
    }
    found
}

#[test]
fn a_tick_marks_the_system_the_last_requests_end_and_its_own_end() {
    let system = [crate::model::SystemBlock::unjudged(
        "memory/prompt.md",
        "You are Kit.",
    )];
    let messages = [
        text(Role::User, "Tick 1"),
        text(Role::Assistant, "Noted."),
        text(Role::User, "Tick 2"),
    ];
    let mut request = Request {
        system: &system,
        messages: &messages,
        tools: &[],
        max_tokens: 100,
        facts: None,
        cache: Some(Lifetime::OneHour),
        cache_key: None,
    };
    let hour = json!({"type": "ephemeral", "ttl": "1h"});
    let b = body("claude-sonnet-4-5", 0, &request);
    assert_eq!(
        marks(&b),
        vec![
            ("system 0".to_string(), hour.clone()),
            ("message 0".to_string(), hour.clone()),
            ("message 2".to_string(), hour),
        ]
    );
    request.cache = Some(Lifetime::FiveMinutes);
    let b = body("claude-sonnet-4-5", 0, &request);
    assert!(marks(&b)
        .iter()
        .all(|(_, m)| *m == json!({"type": "ephemeral"})));
    request.cache = None;
    assert!(marks(&body("claude-sonnet-4-5", 0, &request)).is_empty());
}

#[test]
fn thinking_blocks_never_carry_a_breakpoint() {
    let messages = [
        text(Role::User, "Tick 1"),
        Message {
            outside: crate::outside::Outside::none(),
            role: Role::Assistant,
            content: vec![Block::Thinking {
                thinking: "hm".into(),
                signature: "s".into(),
            }],
        },
        text(Role::User, "Tick 2"),
    ];
    let request = Request {
        system: &[],
        messages: &messages,
        tools: &[],
        max_tokens: 100,
        facts: None,
        cache: Some(Lifetime::OneHour),
        cache_key: None,
    };
    let b = body("claude-sonnet-4-5", 0, &request);
    assert!(b["messages"][1]["content"][0]["cache_control"].is_null());
    assert_eq!(marks(&b).len(), 2);
}

#[test]
fn one_hour_writes_are_read_apart_from_five_minute_ones() {
    let s = STREAM.replace(
        "\"cache_read_input_tokens\":7}",
        "\"cache_read_input_tokens\":7,\"cache_creation_input_tokens\":900,\"cache_creation\":{\"ephemeral_5m_input_tokens\":100,\"ephemeral_1h_input_tokens\":800}}",
    );
    let reply = read_stream(s.as_bytes(), &mut |_| {}).unwrap();
    assert_eq!(reply.usage.cache_write_tokens, 100);
    assert_eq!(reply.usage.cache_write_1h_tokens, 800);
    assert_eq!(reply.usage.input_sent(), 12 + 7 + 900);
}

/// The shapes the API sends: `message_start` with the breakdown by
/// lifetime, then `message_delta` with the cumulative totals only (the
/// SDK's `MessageDeltaUsage` has no `cache_creation`). The totals must not
/// turn the 1-hour writes into 5-minute ones (that recorded 1.25× + 2×).
#[test]
fn the_deltas_totals_keep_the_starts_split_by_lifetime() {
    let start = STREAM.replace(
        "\"cache_read_input_tokens\":7}",
        "\"cache_read_input_tokens\":7,\"cache_creation_input_tokens\":900,\"cache_creation\":{\"ephemeral_5m_input_tokens\":100,\"ephemeral_1h_input_tokens\":800}}",
    );
    let s = start.replace(
        "\"usage\":{\"output_tokens\":30}",
        "\"usage\":{\"input_tokens\":12,\"cache_creation_input_tokens\":900,\"cache_read_input_tokens\":7,\"output_tokens\":30}",
    );
    assert_ne!(s, start, "the delta carries the totals");
    let reply = read_stream(s.as_bytes(), &mut |_| {}).unwrap();
    assert_eq!(
        (
            reply.usage.cache_write_tokens,
            reply.usage.cache_write_1h_tokens
        ),
        (100, 800)
    );
    assert_eq!(reply.usage.output_tokens, 30);
    // Only 5-minute writes, no breakdown anywhere (an older API): all of
    // the total is 5-minute.
    let s = STREAM
        .replace(
            "\"cache_read_input_tokens\":7}",
            "\"cache_read_input_tokens\":7,\"cache_creation_input_tokens\":50}",
        )
        .replace(
            "\"usage\":{\"output_tokens\":30}",
            "\"usage\":{\"cache_creation_input_tokens\":50,\"output_tokens\":30}",
        );
    let reply = read_stream(s.as_bytes(), &mut |_| {}).unwrap();
    assert_eq!(
        (
            reply.usage.cache_write_tokens,
            reply.usage.cache_write_1h_tokens
        ),
        (50, 0)
    );
}

#[test]
fn bad_tool_json_is_malformed() {
    let s = STREAM.replace(r#"xt\": \"hi\"}"#, "xt");
    let err = read_stream(s.as_bytes(), &mut |_| {}).unwrap_err();
    assert!(matches!(err, ModelError::Malformed(_)), "{err}");
}
