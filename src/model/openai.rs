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
use super::{ModelError, Provider, Reply, Request, Stop, Usage};
use crate::config::ModelConfig;
use crate::conversation::{self, Block, Message, Role};

const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

/// An OpenAI-compatible Chat Completions API, streamed.
pub struct OpenAi {
    api: Endpoint,
    /// `max_tokens` or `max_completion_tokens`.
    max_tokens_field: &'static str,
    /// Whether the API is OpenAI's own, which documents
    /// `prompt_cache_key` and `prompt_cache_retention`; compatible servers
    /// (llama.cpp, vLLM, Ollama) get only the byte-stable prefix, which
    /// their prefix caches serve, and no field they might refuse.
    openai_itself: bool,
}

impl OpenAi {
    /// A provider for `[model]` with `key`.
    pub fn new(config: &ModelConfig, key: String) -> Result<OpenAi, ModelError> {
        Ok(OpenAi {
            api: Endpoint::new(config, key, DEFAULT_BASE_URL, "/chat/completions")?,
            max_tokens_field: max_tokens_field(config),
            openai_itself: is_openai_itself(&config.base_url),
        })
    }
}

/// The field that limits the answer. OpenAI's reasoning models (`o1`,
/// `o3`, `o4-mini`, `gpt-5`… with any suffix or provider prefix) refuse
/// `max_tokens` and take `max_completion_tokens`, on any host, since
/// gateways pass the field through; every other model gets `max_tokens`,
/// which Ollama's chat endpoint requires. `[model] max_tokens_field`
/// overrides the rule.
fn max_tokens_field(config: &ModelConfig) -> &'static str {
    match config.max_tokens_field.as_str() {
        "max_completion_tokens" => return "max_completion_tokens",
        "max_tokens" => return "max_tokens",
        _ => {}
    }
    let name = config
        .model
        .rsplit('/')
        .next()
        .unwrap_or("")
        .to_ascii_lowercase();
    let reasoning = ["o1", "o3", "o4", "gpt-5"].iter().any(|family| {
        name.strip_prefix(family)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with(['-', '.', ':', '_']))
    });
    if reasoning {
        "max_completion_tokens"
    } else {
        "max_tokens"
    }
}

/// Whether `base_url` is OpenAI's API (empty: the default, which is).
fn is_openai_itself(base_url: &str) -> bool {
    let base = base_url.trim();
    base.is_empty()
        || reqwest::Url::parse(base)
            .ok()
            .and_then(|u| {
                u.host_str()
                    .map(|h| h.eq_ignore_ascii_case("api.openai.com"))
            })
            .unwrap_or(false)
}

/// Whether OpenAI documents extended prompt-cache retention (`"24h"`) for
/// `model`: the GPT-4.1 and GPT-5 families ("Prompt caching", extended
/// retention). Others keep the in-memory default; an unknown value would
/// be refused.
fn keeps_a_day(model: &str) -> bool {
    let name = model.rsplit('/').next().unwrap_or("").to_ascii_lowercase();
    name == "gpt-4.1"
        || name.starts_with("gpt-4.1-20")
        || name == "gpt-5"
        || name.starts_with("gpt-5-")
        || name.starts_with("gpt-5.")
}

/// Our conversation in the chat-completions shape. Its prefix (system,
/// then the stored conversation, tools after) is byte-stable from tick to
/// tick, which every prefix cache (OpenAI's, llama.cpp's `cache_prompt`,
/// vLLM's) needs.
fn body(model: &str, max_tokens_field: &str, openai_itself: bool, request: &Request<'_>) -> Value {
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
    let mut body = json!({
        "model": model,
        "stream": true,
        "stream_options": {"include_usage": true},
        "messages": messages,
    });
    body[max_tokens_field] = json!(request.max_tokens);
    // OpenAI and DeepSeek answer 400 to `"tools": []`: no tools, no key.
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|t| json!({"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.input_schema}}))
            .collect();
        body["tools"] = Value::Array(tools);
    }
    if openai_itself {
        if let Some(key) = request.cache_key {
            body["prompt_cache_key"] = json!(key);
        }
        if request.cache == Some(super::cache::Lifetime::OneHour) && keeps_a_day(model) {
            body["prompt_cache_retention"] = json!("24h");
        }
    }
    body
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
        let body = body(
            &self.api.model,
            self.max_tokens_field,
            self.openai_itself,
            request,
        );
        let auth = format!("Bearer {}", self.api.key);
        self.api
            .http
            .post(
                &self.api.url,
                &[("authorization", auth.as_str())],
                &body,
                |response| {
                    super::expect_event_stream(&response)?;
                    read_stream(BufReader::new(response), on_text)
                },
            )
            .map(|reply| window_filled(reply, request.max_tokens))
    }
}

/// A `length` stop far short of the answer's own limit (under half of it)
/// means the context window filled: llama.cpp and vLLM stop there and say
/// `length`, and more room for the answer cannot help, a shorter
/// conversation can. Near the limit it is the limit.
fn window_filled(mut reply: Reply, max_tokens: u32) -> Reply {
    let output = reply.usage.output_tokens;
    if reply.stop == Stop::Truncated && output > 0 && output < u64::from(max_tokens) / 2 {
        reply.stop = Stop::Overflowed;
    }
    reply
}

struct WireCall {
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
    let mut refusal = String::new();
    let mut finish_reason: Option<String> = None;
    // (index, call), in order of appearance.
    let mut calls: Vec<(u64, WireCall)> = Vec::new();
    let mut usage = Usage::default();
    for event in Events::new(reader) {
        let event = event.map_err(super::stream_error)?;
        if event.data.trim() == "[DONE]" {
            return finish(text, refusal, calls, usage, finish_reason);
        }
        let chunk: Value = serde_json::from_str(&event.data)
            .map_err(|e| ModelError::Stream(format!("a chunk is not JSON: {e}")))?;
        if let Some(error) = chunk.get("error") {
            return Err(error_chunk(error));
        }
        if let Some(u) = chunk.get("usage").filter(|u| u.is_object()) {
            read_usage(u, &mut usage);
        }
        let Some(choices) = chunk["choices"].as_array() else {
            continue;
        };
        for choice in choices {
            if let Some(reason) = choice["finish_reason"].as_str() {
                finish_reason = Some(reason.to_string());
            }
            let delta = &choice["delta"];
            if let Some(piece) = delta["content"].as_str() {
                on_text(piece);
                text.push_str(piece);
            }
            // A refusal streams in its own field, never as content.
            if let Some(piece) = delta["refusal"].as_str() {
                refusal.push_str(piece);
            }
            for fragment in delta["tool_calls"].as_array().into_iter().flatten() {
                add_fragment(&mut calls, fragment);
            }
        }
    }
    Err(ModelError::Stream(
        "the stream ended before [DONE]: the reply is incomplete".into(),
    ))
}

/// Adds one `delta.tool_calls` fragment to the calls it belongs to.
fn add_fragment(calls: &mut Vec<(u64, WireCall)>, fragment: &Value) {
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
            WireCall {
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

/// The reply `[DONE]` closes.
fn finish(
    text: String,
    refusal: String,
    calls: Vec<(u64, WireCall)>,
    usage: Usage,
    finish_reason: Option<String>,
) -> Result<Reply, ModelError> {
    let mut stop = finish_reason.as_deref().map_or(Stop::Complete, Stop::of);
    if !refusal.is_empty() {
        stop = Stop::Refused;
    }
    let mut content = Vec::new();
    if !text.is_empty() {
        content.push(Block::Text { text });
    }
    for (_, call) in calls {
        let input = if call.arguments.trim().is_empty() {
            json!({})
        } else {
            match serde_json::from_str(&call.arguments) {
                Ok(input) => input,
                // Cut by the token limit: the step decides about the
                // truncated turn; it is never a call with half its input.
                Err(_) if stop.is_cut() => continue,
                Err(e) => {
                    return Err(ModelError::Malformed(format!(
                        "the arguments of tool call {} are not JSON ({e}): {}",
                        call.name,
                        call.arguments.chars().take(200).collect::<String>()
                    )))
                }
            }
        };
        content.push(Block::ToolUse {
            id: call.id,
            name: call.name,
            input,
        });
    }
    let refusal = (stop == Stop::Refused).then(|| {
        if refusal.is_empty() {
            conversation::texts(&content).collect()
        } else {
            refusal
        }
    });
    Ok(Reply {
        content,
        usage,
        stop,
        stop_reason: finish_reason,
        refusal,
    })
}

/// The usage chunk. `prompt_tokens` includes the cached ones, which are
/// charged at the cached price, so they are counted once, as cache reads;
/// `completion_tokens` includes the reasoning tokens.
fn read_usage(u: &Value, usage: &mut Usage) {
    let prompt = u["prompt_tokens"].as_u64().unwrap_or(0);
    let cached = u["prompt_tokens_details"]["cached_tokens"]
        .as_u64()
        .unwrap_or(0)
        .min(prompt);
    // GPT-5.6 and later charge writes (1.25× input) and report them here.
    let written = u["prompt_tokens_details"]["cache_write_tokens"]
        .as_u64()
        .unwrap_or(0)
        .min(prompt - cached);
    usage.input_tokens = prompt - cached - written;
    usage.cache_read_tokens = cached;
    usage.cache_write_tokens = written;
    usage.output_tokens = u["completion_tokens"].as_u64().unwrap_or(0);
}

/// An `{"error": …}` chunk. One of a server-side kind stands for the status
/// it would have had, so it is retried and counted as an outage.
fn error_chunk(error: &Value) -> ModelError {
    let message = error["message"].as_str().unwrap_or("unknown error");
    let kind = [&error["type"], &error["code"]]
        .iter()
        .filter_map(|v| v.as_str())
        .collect::<Vec<_>>()
        .join("/");
    let status = error["code"]
        .as_u64()
        .filter(|c| (400..600).contains(c))
        .or_else(|| {
            let k = kind.to_ascii_lowercase();
            if k.contains("rate_limit") {
                Some(429)
            } else if k.contains("overloaded") || k.contains("unavailable") {
                Some(503)
            } else if k.contains("server_error")
                || k.contains("internal")
                || k.contains("api_error")
            {
                Some(500)
            } else {
                None
            }
        });
    match status {
        Some(status) => ModelError::Http {
            status: status as u16,
            message: format!("an error after the stream began ({kind}): {message}"),
            attempts: 1,
        },
        None => ModelError::Stream(format!("the API sent an error ({kind}): {message}")),
    }
}

#[cfg(test)]
#[path = "openai_tests.rs"]
mod tests;
