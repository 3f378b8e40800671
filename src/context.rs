//! The tick's user turn (DESIGN 5): the time, the tick number and the new
//! inbox messages, with a token estimate per part for the tick's ledger line.
//! Tier context (recent turns, the directive, recall results picked by a
//! keyword classifier) joins here when boot and recall land.

use std::collections::BTreeMap;

use chrono::{DateTime, SecondsFormat, Utc};

use crate::mailbox::inbox::InboxMessage;
use crate::model::{estimate_tokens, Block, Message, Role};

/// The user turn and its estimated tokens by part.
pub fn user_turn(
    now: DateTime<Utc>,
    tick: u64,
    inbox: &[InboxMessage],
) -> (Message, BTreeMap<String, u64>) {
    let mut parts = BTreeMap::new();
    let header = format!(
        "Tick {tick} at {}.",
        now.to_rfc3339_opts(SecondsFormat::Secs, true)
    );
    let mut text = header.clone();
    parts.insert("header".to_string(), estimate_tokens(&header));
    if inbox.is_empty() {
        text.push_str("\n\nNo new inbox messages.");
    } else {
        let mut section = format!("\n\nNew inbox messages ({}):", inbox.len());
        for message in inbox {
            section.push_str(&format!(
                "\n\n<inbox-message path=\"{}\" bytes=\"{}\">\n{}\n</inbox-message>",
                message.rel,
                message.size,
                message.text.trim_end()
            ));
            for note in &message.notes {
                section.push_str(&format!("\n(note: {note})"));
            }
        }
        section.push_str("\n\nAnswer each message with `send` (in_reply_to: its path).");
        parts.insert("inbox".to_string(), estimate_tokens(&section));
        text.push_str(&section);
    }
    (
        Message {
            role: Role::User,
            content: vec![Block::Text { text }],
        },
        parts,
    )
}
