//! OpenAI-compatible chat completions, streamed: OpenAI itself, Ollama,
//! llama.cpp server, vLLM, LM Studio, OpenRouter (`[model] base_url` as the
//! SDKs take it, e.g. `http://localhost:11434/v1`).
//!
//! Tool calls arrive as `delta.tool_calls` fragments keyed by `index`; some
//! servers reuse an index for the next call, so a new `id` on a used index
//! starts a new call. `choices: null` (usage-only chunks) is tolerated.
//! Usage comes with `stream_options.include_usage`. The stream must end
//! with `data: [DONE]`; one that stops short is an error.

use std::io::BufReader;

use serde_json::{json, Value};

use super::http::Endpoint;
use super::sse::Events;
use super::{ModelError, Provider, Reply, Request, Usage};
use crate::config::ModelConfig;
use crate::conversation::{self, Block, Message, Role};

const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

/// An OpenAI-compatible Chat Completions API, streamed.
pub struct OpenAi {
    api: Endpoint,
}

impl OpenAi {
    /// A provider for `[model]` with `key`.
    pub fn new(config: &ModelConfig, key: String) -> Result<OpenAi, ModelError> {
        Ok(OpenAi {
            api: Endpoint::new(config, key, DEFAULT_BASE_URL, "/chat/completions")?,
        })
    }
}

/// Our conversation in the chat-completions shape.
fn body(model: &str, request: &Request<'_>) -> Value {
    let mut messages = Vec::new();
    let system: Vec<&str> = request
        .system
        .iter()
        .map(|b| b.text.as_str())
        .filter(|t| !t.is_empty())
        .collect();
    if !system.is_empty() {
        messages.push(json!({"role": "system", "content": system.join("\n\n")}));
    }
    for message in request.messages {
        messages.extend(translate(message));
    }
    let tools: Vec<Value> = request
        .tools
        .iter()
        .map(|t| json!({"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.input_schema}}))
        .collect();
    json!({
        "model": model,
        "max_tokens": request.max_tokens,
        "stream": true,
        "stream_options": {"include_usage": true},
        "messages": messages,
        "tools": tools,
    })
}

fn translate(message: &Message) -> Vec<Value> {
    let text: Vec<&str> = conversation::texts(&message.content).collect();
    match message.role {
        Role::Assistant => {
            let calls: Vec<Value> = message
                .content
                .iter()
                .filter_map(|b| match b {
                    Block::ToolUse { id, name, input } => Some(json!({
                        "id": id, "type": "function",
                        "function": {"name": name, "arguments": input.to_string()},
                    })),
                    _ => None,
                })
                .collect();
            let mut m = json!({"role": "assistant", "content": text.join("\n")});
            if !calls.is_empty() {
                m["tool_calls"] = Value::Array(calls);
            }
            vec![m]
        }
        Role::User => {
            let mut out: Vec<Value> = message
                .content
                .iter()
                .filter_map(|b| match b {
                    Block::ToolResult {
                        tool_use_id,
                        content,
                        ..
                    } => Some(
                        json!({"role": "tool", "tool_call_id": tool_use_id, "content": content}),
                    ),
                    _ => None,
                })
                .collect();
            if !text.is_empty() {
                out.push(json!({"role": "user", "content": text.join("\n")}));
            }
            out
        }
    }
}

impl Provider for OpenAi {
    fn name(&self) -> &str {
        "openai"
    }

    fn complete(
        &mut self,
        request: &Request<'_>,
        on_text: &mut dyn FnMut(&str),
    ) -> Result<Reply, ModelError> {
        let body = body(&self.api.model, request);
        let auth = format!("Bearer {}", self.api.key);
        let response =
            self.api
                .http
                .post(&self.api.url, &[("authorization", auth.as_str())], &body)?;
        read_stream(BufReader::new(response), on_text)
    }
}

struct Call {
    id: String,
    name: String,
    arguments: String,
}

/// Folds the chunk stream into a reply.
pub fn read_stream(
    reader: impl std::io::BufRead,
    on_text: &mut dyn FnMut(&str),
) -> Result<Reply, ModelError> {
    let mut text = String::new();
    // (index, call), in order of appearance.
    let mut calls: Vec<(u64, Call)> = Vec::new();
    let mut usage = Usage::default();
    for event in Events::new(reader) {
        let event = event.map_err(super::stream_error)?;
        if event.data.trim() == "[DONE]" {
            let mut content = Vec::new();
            if !text.is_empty() {
                content.push(Block::Text { text });
            }
            for (_, call) in calls {
                let input = if call.arguments.trim().is_empty() {
                    json!({})
                } else {
                    serde_json::from_str(&call.arguments).map_err(|e| {
                        ModelError::Malformed(format!(
                            "the arguments of tool call {} are not JSON ({e}): {}",
                            call.name,
                            call.arguments.chars().take(200).collect::<String>()
                        ))
                    })?
                };
                content.push(Block::ToolUse {
                    id: call.id,
                    name: call.name,
                    input,
                });
            }
            return Ok(Reply { content, usage });
        }
        let chunk: Value = serde_json::from_str(&event.data)
            .map_err(|e| ModelError::Stream(format!("a chunk is not JSON: {e}")))?;
        if let Some(error) = chunk.get("error") {
            let message = error["message"].as_str().unwrap_or("unknown error");
            return Err(ModelError::Stream(format!(
                "the API sent an error: {message}"
            )));
        }
        if let Some(u) = chunk.get("usage").filter(|u| u.is_object()) {
            usage.input_tokens = u["prompt_tokens"].as_u64().unwrap_or(0);
            usage.output_tokens = u["completion_tokens"].as_u64().unwrap_or(0);
            usage.cache_read_tokens = u["prompt_tokens_details"]["cached_tokens"]
                .as_u64()
                .unwrap_or(0);
        }
        let Some(choices) = chunk["choices"].as_array() else {
            continue;
        };
        for choice in choices {
            let delta = &choice["delta"];
            if let Some(piece) = delta["content"].as_str() {
                on_text(piece);
                text.push_str(piece);
            }
            for fragment in delta["tool_calls"].as_array().into_iter().flatten() {
                let index = fragment["index"].as_u64().unwrap_or(0);
                let id = fragment["id"].as_str().filter(|s| !s.is_empty());
                let open = calls.iter().rposition(|(i, _)| *i == index);
                let starts_new = match (open, id) {
                    (None, _) => true,
                    (Some(pos), Some(id)) => calls[pos].1.id != id,
                    (Some(_), None) => false,
                };
                if starts_new {
                    calls.push((
                        index,
                        Call {
                            id: id.unwrap_or("").to_string(),
                            name: String::new(),
                            arguments: String::new(),
                        },
                    ));
                }
                let pos = calls
                    .iter()
                    .rposition(|(i, _)| *i == index)
                    .expect("just pushed");
                let call = &mut calls[pos].1;
                if let Some(name) = fragment["function"]["name"].as_str() {
                    call.name.push_str(name);
                }
                if let Some(arguments) = fragment["function"]["arguments"].as_str() {
                    call.arguments.push_str(arguments);
                }
            }
        }
    }
    Err(ModelError::Stream(
        "the stream ended before [DONE]: the reply is incomplete".into(),
    ))
}

#[cfg(test)]
mod tests {
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
}
