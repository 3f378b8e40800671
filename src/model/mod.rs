//! The seam between a tick and a model. A provider takes the whole request
//! (system blocks, the conversation, the tool list) and returns the
//! assistant's turn; text is streamed to a callback as it arrives, so a real
//! provider can persist and show partial output, and tool calls come back as
//! [`Block::ToolUse`] for the tick's tool loop to dispatch.
//!
//! The conversation format is the one `state/messages.json` stores; real
//! providers translate it to their wire format (Anthropic's is nearly this).

pub mod offline;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::config::{ModelConfig, ProviderKind};
use crate::mailbox::inbox::InboxMessage;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    User,
    Assistant,
}

/// One piece of a turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Block {
    Text {
        text: String,
    },
    ToolUse {
        id: String,
        name: String,
        input: Value,
    },
    ToolResult {
        tool_use_id: String,
        content: String,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        is_error: bool,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    pub content: Vec<Block>,
}

impl Message {
    pub fn text(&self) -> String {
        self.content
            .iter()
            .filter_map(|b| match b {
                Block::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// One block of the system prompt. Blocks are byte-stable from tick to tick
/// when their files do not change, so providers can cache them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SystemBlock {
    /// Where the text came from (`memory/prompt.md`), for `hearth context`.
    pub source: String,
    pub text: String,
}

/// A tool as the model sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    pub input_schema: Value,
}

/// Tokens one call used.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    #[serde(default)]
    pub cache_read_tokens: u64,
    #[serde(default)]
    pub cache_write_tokens: u64,
}

impl Usage {
    pub fn add(&mut self, other: Usage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cache_read_tokens += other.cache_read_tokens;
        self.cache_write_tokens += other.cache_write_tokens;
    }
}

/// Structured facts about the current turn, for providers that do not read
/// prose (the offline provider answers the inbox from these). Real models get
/// the same facts rendered in the user turn.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TurnFacts {
    pub tick: u64,
    pub inbox: Vec<InboxMessage>,
}

pub struct Request<'a> {
    pub system: &'a [SystemBlock],
    pub messages: &'a [Message],
    pub tools: &'a [ToolSpec],
    pub max_tokens: u32,
    pub facts: &'a TurnFacts,
}

/// The assistant's turn.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    pub content: Vec<Block>,
    pub usage: Usage,
}

impl Reply {
    pub fn tool_uses(&self) -> impl Iterator<Item = (&str, &str, &Value)> {
        self.content.iter().filter_map(|b| match b {
            Block::ToolUse { id, name, input } => Some((id.as_str(), name.as_str(), input)),
            _ => None,
        })
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    #[error("[model] provider = \"{0}\" is not available in this build of hearth")]
    Unavailable(&'static str),
    #[error("model call failed: {0}")]
    Call(String),
}

impl ModelError {
    pub fn hint(&self) -> Option<String> {
        match self {
            ModelError::Unavailable(_) => {
                Some("set [model] provider = \"offline\" in hearth.toml (or remove the key)".into())
            }
            ModelError::Call(_) => None,
        }
    }
}

/// A model the tick can call.
pub trait Provider {
    fn name(&self) -> &str;

    /// One model call. `on_text` receives text as it streams in.
    fn complete(
        &mut self,
        request: &Request<'_>,
        on_text: &mut dyn FnMut(&str),
    ) -> Result<Reply, ModelError>;
}

/// The provider `[model]` asks for.
pub fn provider_for(config: &ModelConfig) -> Result<Box<dyn Provider>, ModelError> {
    match config.provider {
        ProviderKind::Offline => Ok(Box::new(offline::Offline)),
        other => Err(ModelError::Unavailable(other.as_str())),
    }
}

/// A rough token count (4 characters a token): enough to budget context and
/// to report the offline provider's "usage" honestly as an estimate.
pub fn estimate_tokens(text: &str) -> u64 {
    (text.chars().count() as u64).div_ceil(4)
}
