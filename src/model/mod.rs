//! The seam between a tick and a model. A provider takes the whole request
//! (system blocks, the conversation, the tool list) and returns the
//! assistant's turn; text is streamed to a callback as it arrives, so a real
//! provider can persist and show partial output, and tool calls come back as
//! [`Block::ToolUse`] for the tick's tool loop to dispatch.
//!
//! The conversation format is [`crate::conversation`]'s, the one
//! `state/messages.json` stores; real providers translate it to their wire
//! format (Anthropic's is nearly this).

pub mod anthropic;
pub mod cache;
mod http;
pub mod offline;
pub mod openai;
pub mod sse;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::config::{ModelConfig, ProviderKind};
use crate::conversation::{Block, Message};

/// One block of the system prompt. Blocks are byte-stable from tick to tick
/// when their files do not change, so providers can cache them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SystemBlock {
    /// Where the text came from (`memory/prompt.md`), for `hearth context`.
    pub source: String,
    /// The text, exactly as sent every tick.
    pub text: String,
    /// Where its outside words came from, as judged (never sent to a
    /// provider). Every block states it: the identity layer is assembled
    /// [`SystemBlock::unjudged`], so a door that shows it without judging
    /// it shows outside words, never the operator's by default; a block
    /// read back without the field (a snapshot) is unjudged too. An
    /// exchange is tainted by every mark of what its requests carry.
    #[serde(
        default = "unjudged",
        skip_serializing_if = "crate::outside::Outside::is_empty"
    )]
    pub outside: crate::outside::Outside,
}

/// The mark of a block no judge has looked at.
pub const UNJUDGED: &str = "the identity layer (not judged, so its origin is unproven)";

fn unjudged() -> crate::outside::Outside {
    crate::outside::Outside::of(UNJUDGED)
}

impl SystemBlock {
    /// A block of the operator's files that a judge must clear before it
    /// counts as theirs.
    pub fn unjudged(source: impl Into<String>, text: impl Into<String>) -> SystemBlock {
        SystemBlock {
            source: source.into(),
            text: text.into(),
            outside: unjudged(),
        }
    }

    /// hearth's own fixed wording (a rerank's instructions): nothing in it
    /// came from outside.
    pub fn hearths(source: impl Into<String>, text: impl Into<String>) -> SystemBlock {
        SystemBlock {
            source: source.into(),
            text: text.into(),
            outside: crate::outside::Outside::none(),
        }
    }
}

/// A tool as the model sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// Its name, as the model calls it.
    pub name: String,
    /// What it does, for the model.
    pub description: String,
    /// The JSON Schema of its arguments.
    pub input_schema: Value,
}

/// Tokens one call used.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Input tokens not read from or written to the cache.
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Input tokens read from the provider's prompt cache.
    #[serde(default)]
    pub cache_read_tokens: u64,
    /// Input tokens written to the provider's prompt cache with the
    /// 5-minute lifetime (or the provider's only one).
    #[serde(default)]
    pub cache_write_tokens: u64,
    /// Input tokens written to the prompt cache with the 1-hour lifetime
    /// (Anthropic's `ttl: "1h"`), priced apart: 2× input, not 1.25×.
    #[serde(default)]
    pub cache_write_1h_tokens: u64,
}

impl Usage {
    /// Dollars for this usage at `price`; a model without a price costs
    /// zero. Writes are priced by their lifetime.
    pub fn cost_usd(&self, price: Option<&crate::config::Price>) -> f64 {
        let Some(p) = price else { return 0.0 };
        let per = |tokens: u64, rate: f64| tokens as f64 * rate / 1_000_000.0;
        per(self.input_tokens, p.input_per_mtok)
            + per(self.output_tokens, p.output_per_mtok)
            + per(self.cache_read_tokens, p.cache_read())
            + per(self.cache_write_tokens, p.cache_write())
            + per(self.cache_write_1h_tokens, p.cache_write_1h())
    }

    /// Adds another call's usage.
    pub fn add(&mut self, other: Usage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cache_read_tokens += other.cache_read_tokens;
        self.cache_write_tokens += other.cache_write_tokens;
        self.cache_write_1h_tokens += other.cache_write_1h_tokens;
    }

    /// Every input token the requests sent: uncached, read from the cache
    /// and written to it.
    pub fn input_sent(&self) -> u64 {
        self.input_tokens
            + self.cache_read_tokens
            + self.cache_write_tokens
            + self.cache_write_1h_tokens
    }
}

/// Plain facts about the current turn, for providers that do not read prose
/// (the offline provider answers the inbox from these). Real models get the
/// same facts rendered in the user turn. Owned here, as plain strings, so a
/// provider never needs the inbox's or recall's own types.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TurnFacts {
    /// The tick's number.
    pub tick: u64,
    /// The inbox messages this turn answers, oldest first.
    pub inbox: Vec<InboxFact>,
    /// A question asked through `hearth ask` (its `rel` is `ask`), with
    /// what recall found for it.
    pub ask: Option<InboxFact>,
    /// The job this tick runs: its file as `rel`, its prompt as `text`.
    pub job: Option<InboxFact>,
}

/// One inbox message as a provider may see it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct InboxFact {
    /// `inbox/…md`, the name a reply goes `in_reply_to`.
    pub rel: String,
    /// The message's text.
    pub text: String,
    /// What hearth noticed about the file (cut short, not UTF-8 …).
    pub notes: Vec<String>,
    /// What recall found for it, best first.
    pub recalled: Vec<Recalled>,
}

/// One block recall found: where it is (`memory/x.md:3-9`) and its text.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Recalled {
    /// Where it is: `memory/x.md:3-9`, or an archive turn.
    pub place: String,
    /// The block's text.
    pub text: String,
}

/// One model call.
pub struct Request<'a> {
    /// The system blocks, in order.
    pub system: &'a [SystemBlock],
    /// The conversation, the new user turn last.
    pub messages: &'a [Message],
    /// The tools the model may call.
    pub tools: &'a [ToolSpec],
    /// The most the answer may use (`[model] max_tokens`).
    pub max_tokens: u32,
    /// The turn's facts; `None` for a call that is not a tick's turn (the
    /// rerank call).
    pub facts: Option<&'a TurnFacts>,
    /// How long the request's prefix should stay in the provider's cache
    /// ([`cache::for_request`]); `None` writes nothing (a one-off call, or a
    /// prefix that would die before anything reads it).
    pub cache: Option<cache::Lifetime>,
    /// A stable key for the provider's cache routing (OpenAI's
    /// `prompt_cache_key`): one per home, so its requests meet their
    /// prefixes.
    pub cache_key: Option<&'a str>,
}

/// The assistant's turn.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Reply {
    /// Its blocks, in order: text and tool calls.
    pub content: Vec<Block>,
    /// Tokens the call used.
    pub usage: Usage,
    /// Why the model stopped, by what it means for the tick.
    pub stop: Stop,
    /// The stop reason as the provider gave it (`end_turn`, `max_tokens`,
    /// `length`, `refusal`, …), for the ledger.
    pub stop_reason: Option<String>,
    /// What the model said when it refused (kept for the operator, never
    /// stored as an answer).
    pub refusal: Option<String>,
}

/// Why a model stopped, sorted by what the tick must do about it (DESIGN 6:
/// a truncated answer is an error, never a silent partial answer).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Stop {
    /// The turn is whole: Anthropic `end_turn`, `tool_use`,
    /// `stop_sequence`; OpenAI `stop`, `tool_calls`.
    #[default]
    Complete,
    /// The output was cut by the token limit (`max_tokens`, `length`).
    Truncated,
    /// The output was cut because the context window was full
    /// (`model_context_window_exceeded`): a truncation whose remedy is a
    /// shorter conversation, not a higher limit.
    Overflowed,
    /// The model declined: Anthropic `refusal`; OpenAI `delta.refusal` or
    /// `content_filter`.
    Refused,
    /// The server paused a long turn (`pause_turn`): send it back as it is
    /// and the model continues.
    Paused,
}

impl Stop {
    /// Anthropic's `stop_reason`, or OpenAI's `finish_reason`.
    pub fn of(reason: &str) -> Stop {
        match reason {
            "max_tokens" | "length" => Stop::Truncated,
            "model_context_window_exceeded" => Stop::Overflowed,
            "refusal" | "content_filter" => Stop::Refused,
            "pause_turn" => Stop::Paused,
            _ => Stop::Complete,
        }
    }

    /// Whether the output was cut short (by the token limit or the context
    /// window), so a tool call it holds may be missing half its input.
    pub fn is_cut(self) -> bool {
        matches!(self, Stop::Truncated | Stop::Overflowed)
    }
}

impl Reply {
    /// Its tool calls, in order, as (id, name, input).
    pub fn tool_uses(&self) -> impl Iterator<Item = (&str, &str, &Value)> {
        self.content.iter().filter_map(|b| match b {
            Block::ToolUse { id, name, input } => Some((id.as_str(), name.as_str(), input)),
            _ => None,
        })
    }
}

/// Why a model call failed.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ModelError {
    /// This build has no such provider.
    #[error("[model] provider = \"{0}\" is not available in this build of hearth")]
    Unavailable(&'static str),
    /// The provider needs a key the environment does not hold.
    #[error("[model] provider = \"{provider}\" needs an API key in the environment variable {variable}, which is not set")]
    MissingKey {
        /// The provider's name.
        provider: &'static str,
        /// The variable that should hold the key.
        variable: String,
    },
    /// The API answered with an error status.
    #[error("the model API answered HTTP {status} (after {attempts} attempt(s)): {message}")]
    Http {
        /// The HTTP status.
        status: u16,
        /// The API's own message.
        message: String,
        /// How many attempts were made.
        attempts: u32,
    },
    /// The API could not be reached.
    #[error("cannot reach the model API (after {attempts} attempt(s)): {message}")]
    Connect {
        /// What the connection said.
        message: String,
        /// How many attempts were made.
        attempts: u32,
    },
    /// The API did not answer in time.
    #[error("the model API timed out: {0}")]
    Timeout(String),
    /// The stream broke before it ended.
    #[error("the model's stream broke: {0}")]
    Stream(String),
    /// The connection broke mid-answer (the server died or restarted, a
    /// proxy dropped it): the API went away, like a refused connection a
    /// moment later would say, so it is an outage, not the model's answer.
    #[error("the connection to the model API broke mid-answer: {0}")]
    Dropped(String),
    /// A tool call's arguments were not valid JSON.
    #[error("the model sent a malformed tool call: {0}")]
    Malformed(String),
    /// Anything else.
    #[error("model call failed: {0}")]
    Call(String),
}

impl ModelError {
    /// What the operator can do about it.
    pub fn hint(&self) -> String {
        match self {
            ModelError::Unavailable(_) => {
                "set [model] provider = \"offline\" in hearth.toml (or remove the key)".into()
            }
            ModelError::MissingKey { variable, .. } => format!(
                "export {variable}=… in the supervisor's environment (for systemd: /etc/hearth/env), \
                 or name another variable with [model] api_key_env"
            ),
            // A refused key or a wrong address is a setting to fix; the
            // rest is an outage.
            ModelError::Http { .. }
            | ModelError::Connect { .. }
            | ModelError::Timeout(_)
            | ModelError::Stream(_)
            | ModelError::Dropped(_) => self.fix().unwrap_or_else(|| {
                "an outage of the model API: hearth retries, waits and keeps every message \
                 meanwhile; `hearth status` shows since when, and `hearth recall` still \
                 answers from memory"
                    .into()
            }),
            ModelError::Malformed(_) | ModelError::Call(_) => "the model's answer is in the \
                 tick's log (`hearth status`); a smaller or local model may need [model] \
                 max_tokens raised, or another model"
                .into(),
        }
    }

    pub(crate) fn with_attempts(self, n: u32) -> ModelError {
        match self {
            ModelError::Http {
                status, message, ..
            } => ModelError::Http {
                status,
                message,
                attempts: n,
            },
            ModelError::Connect { message, .. } => ModelError::Connect {
                message,
                attempts: n,
            },
            other => other,
        }
    }

    /// What the operator must fix when the error is a setting, not the
    /// agent or an outage: a key the API refuses (401, 403), an address or
    /// model it does not have (404), a key missing from the environment.
    pub fn fix(&self) -> Option<String> {
        match self {
            ModelError::Http {
                status: 401 | 403, ..
            } => Some(
                "the API refused the key: check the key in the environment variable named by \
                 [model] api_key_env (or the provider's usual one) and that it may use this model"
                    .into(),
            ),
            ModelError::Http { status: 404, .. } => Some(
                "the API has no such address or model: check [model] base_url and [model] model \
                 in hearth.toml"
                    .into(),
            ),
            ModelError::MissingKey { variable, .. } => Some(format!(
                "set {variable} in the supervisor's environment (for systemd: an \
                 EnvironmentFile= line in the unit), then restart it"
            )),
            _ => None,
        }
    }

    /// The request did not fit the model's context window, as the servers
    /// say it: Anthropic "prompt is too long: N tokens > M maximum" (400) or
    /// `request_too_large` (413); OpenAI and vLLM "maximum context length"
    /// (`context_length_exceeded`); Ollama and llama.cpp "context length" /
    /// "context size". The remedy is a shorter conversation.
    pub fn is_context_overflow(&self) -> bool {
        let ModelError::Http {
            status, message, ..
        } = self
        else {
            return false;
        };
        let lower = message.to_lowercase();
        *status == 413
            || (*status == 400
                && [
                    "prompt is too long",
                    "maximum context length",
                    "context_length_exceeded",
                    "context length",
                    "context size",
                    "context window",
                ]
                .iter()
                .any(|w| lower.contains(w)))
    }

    /// The provider was unreachable, rate-limited or overloaded: not the
    /// agent's fault (the healer does not count these).
    pub fn is_outage(&self) -> bool {
        match self {
            ModelError::Http { status, .. } => matches!(status, 408 | 409 | 429 | 500..=599),
            ModelError::Connect { .. } | ModelError::Timeout(_) | ModelError::Dropped(_) => true,
            _ => false,
        }
    }
}

/// The environment variable that holds the key for `config`'s provider.
pub fn key_variable(config: &ModelConfig) -> Option<String> {
    if !config.api_key_env.is_empty() {
        return Some(config.api_key_env.clone());
    }
    match config.provider {
        ProviderKind::Offline => None,
        ProviderKind::Anthropic => Some("ANTHROPIC_API_KEY".into()),
        ProviderKind::Openai => Some("OPENAI_API_KEY".into()),
    }
}

/// A model the tick can call.
pub trait Provider {
    /// The provider's name, for logs.
    fn name(&self) -> &str;

    /// One model call. `on_text` receives text as it streams in.
    fn complete(
        &mut self,
        request: &Request<'_>,
        on_text: &mut dyn FnMut(&str),
    ) -> Result<Reply, ModelError>;
}

/// The provider `[model]` asks for, with the key read from the
/// environment by the caller (the library never reads it).
pub fn provider_for(
    config: &ModelConfig,
    api_key: Option<&str>,
) -> Result<Box<dyn Provider>, ModelError> {
    let key = || {
        api_key
            .filter(|k| !k.trim().is_empty())
            .map(str::to_string)
            .ok_or_else(|| ModelError::MissingKey {
                provider: config.provider.as_str(),
                variable: key_variable(config).unwrap_or_default(),
            })
    };
    match config.provider {
        ProviderKind::Offline => Ok(Box::new(offline::Offline)),
        ProviderKind::Anthropic => Ok(Box::new(anthropic::Anthropic::new(config, key()?)?)),
        ProviderKind::Openai => Ok(Box::new(openai::OpenAi::new(config, key()?)?)),
    }
}

/// A 200 whose body is not an event stream (a gateway that ignored
/// `"stream": true`, a proxy's HTML page) is said plainly, not read as a
/// stream that ended early.
fn expect_event_stream(response: &reqwest::blocking::Response) -> Result<(), ModelError> {
    let kind = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if kind.is_empty() || kind.starts_with("text/event-stream") {
        return Ok(());
    }
    Err(ModelError::Stream(format!(
        "the API answered 200 with {kind}, not the event stream (text/event-stream) \
         that was asked for; is [model] base_url an API that streams?"
    )))
}

/// A read error in a streamed body: a stall past `[model] timeout_s`, or a
/// broken stream.
fn stream_error(e: std::io::Error) -> ModelError {
    let mut text = e.to_string();
    let mut timed_out = e.kind() == std::io::ErrorKind::TimedOut;
    let mut source = std::error::Error::source(&e);
    while let Some(inner) = source {
        text.push_str(": ");
        text.push_str(&inner.to_string());
        if let Some(r) = inner.downcast_ref::<reqwest::Error>() {
            timed_out |= r.is_timeout();
        }
        source = inner.source();
    }
    if let Some(r) = e.get_ref().and_then(|r| r.downcast_ref::<reqwest::Error>()) {
        timed_out |= r.is_timeout();
    }
    if timed_out || text.contains("timed out") {
        return ModelError::Timeout(format!("the stream stalled past [model] timeout_s: {text}"));
    }
    // A body cut by the transport: hyper's "unexpected EOF during chunk
    // size line" when llama-server is killed mid-stream, a reset, a close.
    let lower = text.to_lowercase();
    let dropped = matches!(
        e.kind(),
        std::io::ErrorKind::UnexpectedEof
            | std::io::ErrorKind::ConnectionReset
            | std::io::ErrorKind::ConnectionAborted
            | std::io::ErrorKind::BrokenPipe
    ) || [
        "unexpected eof",
        "connection reset",
        "connection closed",
        "error decoding response body",
    ]
    .iter()
    .any(|w| lower.contains(w));
    if dropped {
        ModelError::Dropped(text)
    } else {
        ModelError::Stream(text)
    }
}
