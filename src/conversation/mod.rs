//! The conversation: the message format the model sees and the agent keeps
//! (`Message`, `Block`, `Role`), the running store `state/messages.json`
//! ([`store`]) and the archives its oldest turns move to ([`archive`]).
//!
//! It sits below `model` and `recall`: providers translate it to their wire
//! format, recall indexes the archives, the tick appends to the store. None
//! of them owns it, so none of them has to import another to read it.

pub mod archive;
pub mod store;

use serde::{Deserialize, Serialize};
use serde_json::Value;

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
        texts(&self.content).collect::<Vec<_>>().join("\n")
    }
}

/// The text blocks among `content`, in order (tool calls and results left
/// out).
pub fn texts(content: &[Block]) -> impl Iterator<Item = &str> {
    content.iter().filter_map(|b| match b {
        Block::Text { text } => Some(text.as_str()),
        _ => None,
    })
}

/// A rough token count (4 characters a token): enough to budget context and
/// to report the offline provider's "usage" honestly as an estimate.
pub fn estimate_tokens(text: &str) -> u64 {
    (text.chars().count() as u64).div_ceil(4)
}
