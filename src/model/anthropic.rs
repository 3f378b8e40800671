//! Anthropic's Messages API, streamed (SSE): `message_start`,
//! `content_block_start` / `_delta` (`text_delta`, `input_json_delta`) /
//! `_stop`, `message_delta` (stop reason, output usage), `message_stop`,
//! `ping` anywhere, and an `error` event even after HTTP 200. Tool-call
//! arguments arrive as JSON fragments, joined per block and parsed at the
//! block's stop. Breakpoints (`cache_control`) mark the system and the
//! conversation with the lifetime the tick chose ([`super::cache`]), so
//! the byte-stable prefix is read from the cache by the next request.
//!
//! A stream that ends before `message_stop` is an error, never a partial
//! answer taken as whole.

use std::collections::BTreeMap;
use std::io::BufReader;

use serde_json::{json, Value};

use super::cache::Lifetime;
use super::http::Endpoint;
use super::sse::Events;
use super::{ModelError, Provider, Reply, Request, Stop, Usage};
use crate::config::ModelConfig;
use crate::conversation::{self, Block, Message, Role};

const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";
const API_VERSION: &str = "2023-06-01";

/// The Anthropic Messages API, streamed.
pub struct Anthropic {
    api: Endpoint,
    /// `[model] thinking_tokens`: extended thinking's budget (0: off).
    thinking_tokens: u32,
}

impl Anthropic {
    /// A provider for `[model]` with `key`.
    pub fn new(config: &ModelConfig, key: String) -> Result<Anthropic, ModelError> {
        Ok(Anthropic {
            api: Endpoint::new(config, key, DEFAULT_BASE_URL, "/v1/messages")?,
            thinking_tokens: config.thinking_tokens,
        })
    }
}

/// The Messages API request body for `request`.
fn body(model: &str, thinking_tokens: u32, request: &Request<'_>) -> Value {
    let system: Vec<Value> = request
        .system
        .iter()
        .filter(|b| !b.text.is_empty())
        .map(|b| json!({"type": "text", "text": b.text}))
        .collect();
    let mut body = json!({
        "model": model,
        "max_tokens": request.max_tokens,
        "stream": true,
        "system": system,
        // Role and content only: a turn's outside marks are hearth's own.
        "messages": request
            .messages
            .iter()
            .map(|m| json!({"role": m.role, "content": m.content}))
            .collect::<Vec<_>>(),
    });
    // The API refuses an empty tool list from some gateways; none is no key.
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.input_schema}))
            .collect();
        body["tools"] = Value::Array(tools);
    }
    if let Some(lifetime) = request.cache {
        breakpoints(&mut body, request.messages, lifetime);
    }
    if thinking_tokens > 0 {
        body["thinking"] = json!({"type": "enabled", "budget_tokens": thinking_tokens});
        // The answer's limit must leave room above the thinking budget.
        body["max_tokens"] = json!(request.max_tokens.max(thinking_tokens + 1024));
    }
    body
}

/// Marks the request's prefix for the cache, all with one lifetime (so the
/// rule that 1-hour breakpoints come first always holds), at most three of
/// the API's four:
///
/// 1. the last system block (the last tool when there is no system): tools
///    and system, which change only when memory does, are read even on the
///    tick after a compaction moved the conversation;
/// 2. the end of the previous request, the message before the newest
///    assistant turn: exactly where the last request (of this tick, or the
///    last tick's final one) wrote, so it is read however many blocks were
///    added since (a breakpoint looks back at most 20 blocks);
/// 3. the end of the request, so the next one reads all of it.
fn breakpoints(body: &mut Value, messages: &[Message], lifetime: Lifetime) {
    let mark = match lifetime {
        Lifetime::FiveMinutes => json!({"type": "ephemeral"}),
        Lifetime::OneHour => json!({"type": "ephemeral", "ttl": "1h"}),
    };
    let head = if body["system"].as_array().is_some_and(|s| !s.is_empty()) {
        body["system"].as_array_mut().and_then(|s| s.last_mut())
    } else {
        body.get_mut("tools")
            .and_then(Value::as_array_mut)
            .and_then(|t| t.last_mut())
    };
    if let Some(block) = head {
        block["cache_control"] = mark.clone();
    }
    let last = messages.len().checked_sub(1);
    let previous = messages
        .iter()
        .rposition(|m| m.role == Role::Assistant)
        .and_then(|i| i.checked_sub(1));
    for at in [previous, last].into_iter().flatten() {
        let Some(content) = body["messages"][at]["content"].as_array_mut() else {
            continue;
        };
        // Thinking blocks cannot carry a breakpoint, nor can empty text.
        let unmarkable = |b: &Value| {
            matches!(b["type"].as_str(), Some("thinking" | "redacted_thinking"))
                || (b["type"] == "text" && b["text"].as_str().is_some_and(str::is_empty))
        };
        let markable = content.iter_mut().rev().find(|b| !unmarkable(b));
        if let Some(block) = markable {
            block["cache_control"] = mark.clone();
        }
    }
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
        let body = body(&self.api.model, self.thinking_tokens, request);
        self.api.http.post(
            &self.api.url,
            &[
                ("x-api-key", self.api.key.as_str()),
                ("anthropic-version", API_VERSION),
            ],
            &body,
            |response| {
                super::expect_event_stream(&response)?;
                read_stream(BufReader::new(response), on_text)
            },
        )
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
    Thinking {
        thinking: String,
        signature: String,
    },
    /// A tool call whose arguments stopped mid-way (cut by the token
    /// limit, or malformed): which of the two, `message_delta` says.
    Cut {
        name: String,
        json: String,
        error: String,
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
    let mut stop_reason: Option<String> = None;
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
            "message_start" => read_usage(&data["message"]["usage"], &mut usage),
            "content_block_start" => {
                let block = &data["content_block"];
                let text = |key: &str| block[key].as_str().unwrap_or("").to_string();
                let partial = match block["type"].as_str() {
                    Some("tool_use") => Partial::Tool {
                        id: text("id"),
                        name: text("name"),
                        json: String::new(),
                    },
                    Some("thinking") => Partial::Thinking {
                        thinking: text("thinking"),
                        signature: text("signature"),
                    },
                    Some("redacted_thinking") => {
                        Partial::Done(Block::RedactedThinking { data: text("data") })
                    }
                    Some("text") | None => Partial::Text(text("text")),
                    // Server tools' blocks: not ours to keep or send back.
                    Some(_) => continue,
                };
                blocks.insert(index, partial);
            }
            "content_block_delta" => {
                let delta = &data["delta"];
                let piece = |key: &str| delta[key].as_str().unwrap_or("");
                match (blocks.get_mut(&index), delta["type"].as_str()) {
                    (Some(Partial::Text(text)), Some("text_delta")) => {
                        on_text(piece("text"));
                        text.push_str(piece("text"));
                    }
                    (Some(Partial::Tool { json, .. }), Some("input_json_delta")) => {
                        json.push_str(piece("partial_json"));
                    }
                    (Some(Partial::Thinking { thinking, .. }), Some("thinking_delta")) => {
                        thinking.push_str(piece("thinking"));
                    }
                    (Some(Partial::Thinking { signature, .. }), Some("signature_delta")) => {
                        signature.push_str(piece("signature"));
                    }
                    _ => {}
                }
            }
            "content_block_stop" => {
                let done = match blocks.remove(&index) {
                    Some(Partial::Text(text)) => Partial::Done(Block::Text { text }),
                    Some(Partial::Thinking {
                        thinking,
                        signature,
                    }) => Partial::Done(Block::Thinking {
                        thinking,
                        signature,
                    }),
                    Some(Partial::Tool { id, name, json }) if json.trim().is_empty() => {
                        Partial::Done(Block::ToolUse {
                            id,
                            name,
                            input: json!({}),
                        })
                    }
                    Some(Partial::Tool { id, name, json }) => match serde_json::from_str(&json) {
                        Ok(input) => Partial::Done(Block::ToolUse { id, name, input }),
                        Err(e) => Partial::Cut {
                            name,
                            json,
                            error: e.to_string(),
                        },
                    },
                    Some(other) => other,
                    None => continue,
                };
                blocks.insert(index, done);
            }
            "message_delta" => {
                if let Some(reason) = data["delta"]["stop_reason"].as_str() {
                    stop_reason = Some(reason.to_string());
                }
                // Its counts are cumulative: they replace message_start's
                // (a gateway may send 0 there and the real count here).
                read_usage(&data["usage"], &mut usage);
            }
            "message_stop" => return finish(blocks, usage, stop_reason),
            "error" => {
                let message = data["error"]["message"].as_str().unwrap_or("unknown error");
                let kind = data["error"]["type"].as_str().unwrap_or("error");
                return Err(error_event(kind, message));
            }
            _ => {}
        }
    }
    Err(ModelError::Stream(
        "the stream ended before message_stop: the reply is incomplete".into(),
    ))
}

/// The reply `message_stop` closes.
fn finish(
    blocks: BTreeMap<u64, Partial>,
    usage: Usage,
    stop_reason: Option<String>,
) -> Result<Reply, ModelError> {
    let stop = stop_reason.as_deref().map_or(Stop::Complete, Stop::of);
    let mut content = Vec::new();
    for partial in blocks.into_values() {
        match partial {
            Partial::Done(block) => content.push(block),
            Partial::Text(text) => content.push(Block::Text { text }),
            // Cut by the token limit: the step decides what to do about
            // the truncated turn; it is never a call with half its input.
            Partial::Cut { .. } | Partial::Tool { .. } if stop.is_cut() => {}
            Partial::Cut { name, json, error } => {
                return Err(ModelError::Malformed(format!(
                    "the arguments of tool call {name} are not JSON ({error}): {}",
                    json.chars().take(200).collect::<String>()
                )))
            }
            Partial::Tool { name, .. } => {
                return Err(ModelError::Stream(format!(
                    "tool call {name} never ended: the reply is incomplete"
                )))
            }
            Partial::Thinking {
                thinking,
                signature,
            } => content.push(Block::Thinking {
                thinking,
                signature,
            }),
        }
    }
    content.retain(|b| !matches!(b, Block::Text { text } if text.is_empty()));
    let refusal = (stop == Stop::Refused).then(|| conversation::texts(&content).collect());
    Ok(Reply {
        content,
        usage,
        stop,
        stop_reason,
        refusal,
    })
}

/// Usage counts present in `u` replace those in `usage`.
fn read_usage(u: &Value, usage: &mut Usage) {
    let set = |key: &str, field: &mut u64| {
        if let Some(n) = u[key].as_u64() {
            *field = n;
        }
    };
    set("input_tokens", &mut usage.input_tokens);
    set("output_tokens", &mut usage.output_tokens);
    set("cache_read_input_tokens", &mut usage.cache_read_tokens);
    // Writes by lifetime, when the API says (`message_start` does since the
    // 1-hour lifetime exists): the 1-hour ones are priced at 2× input, not
    // 1.25×. `message_delta` carries only the cumulative total
    // (`MessageDeltaUsage` has no `cache_creation`): the 1-hour part known
    // from the start stands, and the 5-minute part is the rest.
    let by_lifetime = &u["cache_creation"];
    if let (Some(five), Some(hour)) = (
        by_lifetime["ephemeral_5m_input_tokens"].as_u64(),
        by_lifetime["ephemeral_1h_input_tokens"].as_u64(),
    ) {
        usage.cache_write_tokens = five;
        usage.cache_write_1h_tokens = hour;
    } else if let Some(total) = u["cache_creation_input_tokens"].as_u64() {
        usage.cache_write_1h_tokens = usage.cache_write_1h_tokens.min(total);
        usage.cache_write_tokens = total - usage.cache_write_1h_tokens;
    }
}

/// An `error` event, which can arrive after HTTP 200: the status it stands
/// for, so an `overloaded_error` is retried and counted as an outage like
/// the 529 it would have been.
fn error_event(kind: &str, message: &str) -> ModelError {
    let status = match kind {
        "invalid_request_error" => 400,
        "authentication_error" => 401,
        "permission_error" => 403,
        "not_found_error" => 404,
        "request_too_large" => 413,
        "rate_limit_error" => 429,
        "api_error" => 500,
        "timeout_error" => 504,
        "overloaded_error" => 529,
        _ => return ModelError::Stream(format!("the API sent an error event ({kind}): {message}")),
    };
    ModelError::Http {
        status,
        message: format!("an error event after the stream began ({kind}): {message}"),
        attempts: 1,
    }
}

#[cfg(test)]
#[path = "anthropic_tests.rs"]
mod tests;
