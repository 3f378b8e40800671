//! Anthropic's Messages API, streamed (SSE): `message_start`,
//! `content_block_start` / `_delta` (`text_delta`, `input_json_delta`) /
//! `_stop`, `message_delta` (stop reason, output usage), `message_stop`,
//! `ping` anywhere, and an `error` event even after HTTP 200. Tool-call
//! arguments arrive as JSON fragments, joined per block and parsed at the
//! block's stop. The last system block carries `cache_control`, so the
//! byte-stable prompt and identity are cached across ticks.
//!
//! A stream that ends before `message_stop` is an error, never a partial
//! answer taken as whole.

use std::collections::BTreeMap;
use std::io::BufReader;

use serde_json::{json, Value};

use super::http::Endpoint;
use super::sse::Events;
use super::{ModelError, Provider, Reply, Request, Usage};
use crate::config::ModelConfig;
use crate::conversation::Block;

const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";
const API_VERSION: &str = "2023-06-01";

/// The Anthropic Messages API, streamed.
pub struct Anthropic {
    api: Endpoint,
}

impl Anthropic {
    /// A provider for `[model]` with `key`.
    pub fn new(config: &ModelConfig, key: String) -> Result<Anthropic, ModelError> {
        Ok(Anthropic {
            api: Endpoint::new(config, key, DEFAULT_BASE_URL, "/v1/messages")?,
        })
    }
}

/// The Messages API request body for `request`.
fn body(model: &str, request: &Request<'_>) -> Value {
    let last = request.system.len().saturating_sub(1);
    let system: Vec<Value> = request
        .system
        .iter()
        .enumerate()
        .filter(|(_, b)| !b.text.is_empty())
        .map(|(i, b)| {
            let mut block = json!({"type": "text", "text": b.text});
            if i == last {
                block["cache_control"] = json!({"type": "ephemeral"});
            }
            block
        })
        .collect();
    let tools: Vec<Value> = request
        .tools
        .iter()
        .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.input_schema}))
        .collect();
    json!({
        "model": model,
        "max_tokens": request.max_tokens,
        "stream": true,
        "system": system,
        "messages": request.messages,
        "tools": tools,
    })
}

impl Provider for Anthropic {
    fn name(&self) -> &str {
        "anthropic"
    }

    fn complete(
        &mut self,
        request: &Request<'_>,
        on_text: &mut dyn FnMut(&str),
    ) -> Result<Reply, ModelError> {
        let body = body(&self.api.model, request);
        let response = self.api.http.post(
            &self.api.url,
            &[
                ("x-api-key", self.api.key.as_str()),
                ("anthropic-version", API_VERSION),
            ],
            &body,
        )?;
        read_stream(BufReader::new(response), on_text)
    }
}

/// A content block being streamed.
enum Partial {
    Text(String),
    Tool {
        id: String,
        name: String,
        json: String,
    },
    Done(Block),
}

/// Folds the event stream into a reply.
pub fn read_stream(
    reader: impl std::io::BufRead,
    on_text: &mut dyn FnMut(&str),
) -> Result<Reply, ModelError> {
    let mut blocks: BTreeMap<u64, Partial> = BTreeMap::new();
    let mut usage = Usage::default();
    for event in Events::new(reader) {
        let event = event.map_err(super::stream_error)?;
        let data: Value = match serde_json::from_str(&event.data) {
            Ok(v) => v,
            Err(_) if event.event == "ping" => continue,
            Err(e) => return Err(ModelError::Stream(format!("an event is not JSON: {e}"))),
        };
        let kind = if event.event.is_empty() {
            data["type"].as_str().unwrap_or("").to_string()
        } else {
            event.event.clone()
        };
        let index = data["index"].as_u64().unwrap_or(0);
        match kind.as_str() {
            "message_start" => {
                let u = &data["message"]["usage"];
                usage.input_tokens = u["input_tokens"].as_u64().unwrap_or(0);
                usage.output_tokens = u["output_tokens"].as_u64().unwrap_or(0);
                usage.cache_read_tokens = u["cache_read_input_tokens"].as_u64().unwrap_or(0);
                usage.cache_write_tokens = u["cache_creation_input_tokens"].as_u64().unwrap_or(0);
            }
            "content_block_start" => {
                let block = &data["content_block"];
                let partial = match block["type"].as_str() {
                    Some("tool_use") => Partial::Tool {
                        id: block["id"].as_str().unwrap_or("").to_string(),
                        name: block["name"].as_str().unwrap_or("").to_string(),
                        json: String::new(),
                    },
                    _ => Partial::Text(block["text"].as_str().unwrap_or("").to_string()),
                };
                blocks.insert(index, partial);
            }
            "content_block_delta" => {
                let delta = &data["delta"];
                match (blocks.get_mut(&index), delta["type"].as_str()) {
                    (Some(Partial::Text(text)), Some("text_delta")) => {
                        let piece = delta["text"].as_str().unwrap_or("");
                        on_text(piece);
                        text.push_str(piece);
                    }
                    (Some(Partial::Tool { json, .. }), Some("input_json_delta")) => {
                        json.push_str(delta["partial_json"].as_str().unwrap_or(""));
                    }
                    _ => {}
                }
            }
            "content_block_stop" => {
                let done = match blocks.remove(&index) {
                    Some(Partial::Text(text)) => Block::Text { text },
                    Some(Partial::Tool { id, name, json }) => {
                        let input = if json.trim().is_empty() {
                            json!({})
                        } else {
                            serde_json::from_str(&json).map_err(|e| {
                                ModelError::Malformed(format!(
                                    "the arguments of tool call {name} are not JSON ({e}): {}",
                                    json.chars().take(200).collect::<String>()
                                ))
                            })?
                        };
                        Block::ToolUse { id, name, input }
                    }
                    Some(done @ Partial::Done(_)) => match done {
                        Partial::Done(block) => block,
                        _ => unreachable!(),
                    },
                    None => continue,
                };
                blocks.insert(index, Partial::Done(done));
            }
            "message_delta" => {
                if let Some(out) = data["usage"]["output_tokens"].as_u64() {
                    usage.output_tokens = out;
                }
            }
            "message_stop" => {
                let content = blocks
                    .into_values()
                    .filter_map(|p| match p {
                        Partial::Done(block) => Some(block),
                        Partial::Text(text) => Some(Block::Text { text }),
                        Partial::Tool { .. } => None,
                    })
                    .filter(|b| !matches!(b, Block::Text { text } if text.is_empty()))
                    .collect();
                return Ok(Reply { content, usage });
            }
            "error" => {
                let message = data["error"]["message"].as_str().unwrap_or("unknown error");
                let kind = data["error"]["type"].as_str().unwrap_or("error");
                return Err(ModelError::Stream(format!(
                    "the API sent an error event ({kind}): {message}"
                )));
            }
            _ => {}
        }
    }
    Err(ModelError::Stream(
        "the stream ended before message_stop: the reply is incomplete".into(),
    ))
}

#[cfg(test)]
mod tests {
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

    #[test]
    fn bad_tool_json_is_malformed() {
        let s = STREAM.replace(r#"xt\": \"hi\"}"#, "xt");
        let err = read_stream(s.as_bytes(), &mut |_| {}).unwrap_err();
        assert!(matches!(err, ModelError::Malformed(_)), "{err}");
    }
}
