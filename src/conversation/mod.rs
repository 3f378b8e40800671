//! The conversation: the message format the model sees and the agent keeps
//! (`Message`, `Block`, `Role`), the running store `state/messages.json`
//! ([`store`]) and the archives its oldest turns move to ([`archive`]).
//!
//! It sits below `model` and `recall`: providers translate it to their wire
//! format, recall indexes the archives, the tick appends to the store. None
//! of them owns it, so none of them has to import another to read it.

pub mod archive;
pub mod sessions;
pub mod store;
pub mod tail;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Who said a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The operator's side: the tick's user turn, and tool results.
    User,
    /// The model.
    Assistant,
}

/// One piece of a turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Block {
    /// Prose.
    Text {
        /// The text itself.
        text: String,
    },
    /// A call of one of the agent's tools.
    ToolUse {
        /// The provider's id for the call, echoed by its result.
        id: String,
        /// The tool's name.
        name: String,
        /// Its arguments, as the model wrote them.
        input: Value,
    },
    /// The model's extended thinking (Anthropic), kept with its signature
    /// and sent back unchanged in tool rounds, as the API requires; never
    /// shown as the answer.
    Thinking {
        /// The thinking text.
        thinking: String,
        /// The API's signature over it.
        signature: String,
    },
    /// Thinking the API encrypted; kept and sent back as it came.
    RedactedThinking {
        /// The encrypted thinking.
        data: String,
    },
    /// What a tool call returned.
    ToolResult {
        /// The id of the call it answers.
        tool_use_id: String,
        /// The tool's output, or why it did not run.
        content: String,
        /// Whether the call failed or was refused.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        is_error: bool,
    },
}

/// One turn of the conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// Who said it.
    pub role: Role,
    /// What was said, in order.
    pub content: Vec<Block>,
    /// Where the outside words this turn carries came from (chains, as
    /// `provenance` writes them): a third party's message in the turn,
    /// or anything the model said or was given after its exchange read
    /// outside content. Kept with the turn wherever it goes (the running
    /// conversation, an archive), never sent to a provider; an exchange
    /// that carries a marked turn is tainted by it.
    #[serde(default, skip_serializing_if = "crate::outside::Outside::is_empty")]
    pub outside: crate::outside::Outside,
}

impl Message {
    /// A turn with no outside words in it.
    pub fn new(role: Role, content: Vec<Block>) -> Message {
        Message {
            role,
            content,
            outside: crate::outside::Outside::none(),
        }
    }

    /// Its text blocks, joined by newlines.
    pub fn text(&self) -> String {
        texts(&self.content).collect::<Vec<_>>().join("\n")
    }

    /// Everything in it a person (or recall) should be able to read: its
    /// text, each tool call with its arguments' text (a `send`'s body, a
    /// `write`'s content), and each tool result.
    pub fn readable(&self) -> String {
        let mut parts = Vec::new();
        for block in &self.content {
            match block {
                Block::Text { text } => parts.push(text.clone()),
                Block::ToolUse { name, input, .. } => {
                    let args: Vec<String> = input
                        .as_object()
                        .into_iter()
                        .flatten()
                        .map(|(k, v)| match v {
                            serde_json::Value::String(s) => format!("{k}: {s}"),
                            other => format!("{k}: {other}"),
                        })
                        .collect();
                    parts.push(format!("[called {name}] {}", args.join("; ")));
                }
                Block::ToolResult { content, .. } => {
                    let cut: String = content.chars().take(600).collect();
                    parts.push(format!("[result] {cut}"));
                }
                _ => {}
            }
        }
        parts.join("\n")
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

/// The conversation as a model is sent it: turns that alternate. A tick
/// that failed before the model answered leaves its user turn unanswered,
/// and the next tick's turn follows it; strict chat templates (Gemma's, as
/// llama.cpp ships it) refuse two user turns in a row with a 400 on every
/// later request. Consecutive turns of one role are sent as one, their
/// blocks in order (tool results stay first, as they were) — what
/// Anthropic's API does by itself. `messages.json` keeps what happened.
pub fn alternating(messages: &[Message]) -> Vec<Message> {
    let mut out: Vec<Message> = Vec::with_capacity(messages.len());
    for message in messages {
        match out.last_mut() {
            Some(last) if last.role == message.role => {
                last.content.extend(message.content.iter().cloned());
            }
            _ => out.push(message.clone()),
        }
    }
    out
}

/// A rough token count (4 characters a token): enough to budget context and
/// to report the offline provider's "usage" honestly as an estimate.
pub fn estimate_tokens(text: &str) -> u64 {
    (text.chars().count() as u64).div_ceil(4)
}
