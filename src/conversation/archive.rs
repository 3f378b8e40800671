//! The conversation stays bounded (DESIGN 5). When `state/messages.json`
//! passes `[context] history_tokens`, its oldest turns move to
//! `state/archive/messages-<date>-<n>.json` (valid, self-contained JSON that
//! recall indexes), and a short pointer stays in their place. Nothing is
//! deleted, and the model always sees a conversation that fits.
//!
//! The cut is made only before a tick's own user turn, never between a tool
//! call and its result, so what is kept is still a valid conversation for
//! every provider. It keeps the newest turns up to half the budget, so a
//! conversation is not archived again on the very next tick.

use std::path::PathBuf;

use chrono::{DateTime, SecondsFormat, Utc};
use serde::{Deserialize, Serialize};

use super::store::{Conversation, VERSION};
use super::{estimate_tokens, Block, Message, Role};
use crate::atomic;
use crate::home::Home;

/// Every pointer turn starts with this, so readers can tell it from the
/// agent's own words.
pub const POINTER_PREFIX: &str = "[hearth: earlier conversation";

/// An archive file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Archive {
    /// The format version ([`super::store::VERSION`]).
    pub version: u32,
    /// When the turns moved here.
    pub archived_at: DateTime<Utc>,
    /// The turns, oldest first, as they were in `messages.json`.
    pub messages: Vec<Message>,
}

/// A planned move of the oldest turns into an archive.
#[derive(Debug, Clone, PartialEq)]
pub struct Compaction {
    /// Path inside the home of the new archive.
    pub archive: String,
    /// How many messages move.
    pub count: usize,
}

/// Estimated tokens of one message as a provider would receive it.
pub fn message_tokens(message: &Message) -> u64 {
    estimate_tokens(&serde_json::to_string(&message.content).unwrap_or_default())
}

/// What to archive so that `conversation` fits `budget` tokens, if it does
/// not fit now.
pub fn plan(
    home: &Home,
    conversation: &Conversation,
    budget: u64,
    now: DateTime<Utc>,
) -> Option<Compaction> {
    let messages = &conversation.messages;
    let tokens: Vec<u64> = messages.iter().map(message_tokens).collect();
    let total: u64 = tokens.iter().sum();
    if total <= budget {
        return None;
    }
    // Suffix sums: tokens kept if the cut is before message i.
    let mut kept_from = vec![0u64; messages.len() + 1];
    for i in (0..messages.len()).rev() {
        kept_from[i] = kept_from[i + 1] + tokens[i];
    }
    let cuts: Vec<usize> = (1..messages.len())
        .filter(|&i| is_tick_turn(&messages[i]))
        .collect();
    let cut = cuts
        .iter()
        .copied()
        .find(|&i| kept_from[i] <= budget / 2)
        .or_else(|| cuts.last().copied())?;
    Some(Compaction {
        archive: next_archive_name(home, now),
        count: cut,
    })
}

/// Applies `compaction` to the conversation in memory: the oldest turns
/// leave, and the pointer joins the first turn that stays. Returns the turns
/// that left.
pub fn apply(conversation: &mut Conversation, compaction: &Compaction) -> Vec<Message> {
    let archived: Vec<Message> = conversation.messages.drain(..compaction.count).collect();
    let pointer = format!(
        "{POINTER_PREFIX}: {} earlier messages are archived in {}; use `read` or `recall` to look back.]",
        archived.len(),
        compaction.archive
    );
    if let Some(first) = conversation.messages.first_mut() {
        first.content.insert(0, Block::Text { text: pointer });
    }
    archived
}

/// Takes out of the conversation every exchange (a tick's turn and what
/// followed it, up to the next) that holds a turn marked outside, and
/// plans their archive: a clean exchange must not carry a stranger's
/// words (`provenance`). The cut is at tick turns, as compaction's, so
/// what stays is a valid conversation. `None` when nothing is marked.
pub fn quarantine(
    home: &Home,
    conversation: &mut Conversation,
    now: DateTime<Utc>,
) -> Option<(Compaction, Vec<Message>)> {
    if conversation.messages.iter().all(|m| m.outside.is_empty()) {
        return None;
    }
    let mut exchanges: Vec<Vec<Message>> = vec![Vec::new()];
    for message in conversation.messages.drain(..) {
        if is_tick_turn(&message) && !exchanges.last().is_some_and(Vec::is_empty) {
            exchanges.push(Vec::new());
        }
        exchanges
            .last_mut()
            .expect("one exchange at least")
            .push(message);
    }
    let mut moved = Vec::new();
    for exchange in exchanges {
        if exchange.iter().any(|m| !m.outside.is_empty()) {
            moved.extend(exchange);
        } else {
            conversation.messages.extend(exchange);
        }
    }
    let archive = home.relative(&unique_name(home, "outside", now));
    Some((
        Compaction {
            archive,
            count: moved.len(),
        },
        moved,
    ))
}

/// Writes the archive file for `compaction` (before the shortened
/// conversation is saved, so a crash between the two duplicates turns but
/// never loses one).
pub fn write_archive(
    home: &Home,
    compaction: &Compaction,
    archived: Vec<Message>,
    now: DateTime<Utc>,
) -> Result<(), atomic::WriteError> {
    let archive = Archive {
        version: VERSION,
        archived_at: now,
        messages: archived,
    };
    let mut json = serde_json::to_vec_pretty(&archive).expect("an archive serialises");
    json.push(b'\n');
    atomic::write(&home.root().join(&compaction.archive), &json)
}

/// A turn a tick wrote: a user message that is not a tool result.
fn is_tick_turn(message: &Message) -> bool {
    message.role == Role::User
        && !message
            .content
            .iter()
            .any(|b| matches!(b, Block::ToolResult { .. }))
}

fn archive_dir(home: &Home) -> PathBuf {
    home.archive_dir()
}

fn next_archive_name(home: &Home, now: DateTime<Utc>) -> String {
    home.relative(&unique_name(home, "messages", now))
}

fn unique_name(home: &Home, kind: &str, now: DateTime<Utc>) -> PathBuf {
    let date = now.to_rfc3339_opts(SecondsFormat::Secs, true)[..10].to_string();
    let dir = archive_dir(home);
    (1..)
        .map(|n| dir.join(format!("{kind}-{date}-{n}.json")))
        .find(|p| !p.exists())
        .expect("an unused name exists")
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // fixtures, not state
mod tests {
    use super::*;
    use serde_json::json;

    fn text(role: Role, text: String) -> Message {
        Message {
            outside: crate::outside::Outside::none(),
            role,
            content: vec![Block::Text { text }],
        }
    }

    /// One tick: the user turn, a tool call, its result, the reply.
    fn tick(n: usize) -> Vec<Message> {
        vec![
            text(Role::User, format!("Tick {n}: {}", "news ".repeat(20))),
            Message {
                outside: crate::outside::Outside::none(),
                role: Role::Assistant,
                content: vec![Block::ToolUse {
                    id: format!("t{n}"),
                    name: "journal".into(),
                    input: json!({"text": format!("entry {n}")}),
                }],
            },
            Message {
                outside: crate::outside::Outside::none(),
                role: Role::User,
                content: vec![Block::ToolResult {
                    tool_use_id: format!("t{n}"),
                    content: "ok".into(),
                    is_error: false,
                }],
            },
            text(Role::Assistant, format!("done with tick {n}")),
        ]
    }

    fn without_pointers(messages: &[Message]) -> Vec<Message> {
        messages
            .iter()
            .map(|m| Message {
                outside: crate::outside::Outside::none(),
                role: m.role,
                content: m
                    .content
                    .iter()
                    .filter(
                        |b| !matches!(b, Block::Text { text } if text.starts_with(POINTER_PREFIX)),
                    )
                    .cloned()
                    .collect(),
            })
            .collect()
    }

    #[test]
    fn two_thousand_ticks_stay_bounded_and_every_turn_is_archived_once() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("hearth.toml"), "").unwrap();
        let home = Home::open(dir.path()).unwrap();
        let budget = 3_000;
        let mut conversation = Conversation::new();
        let mut everything = Vec::new();
        let start = DateTime::from_timestamp(1_700_000_000, 0).unwrap();
        for n in 0..2_000 {
            let now = start + chrono::Duration::minutes(15 * n as i64);
            if let Some(c) = plan(&home, &conversation, budget, now) {
                let archived = apply(&mut conversation, &c);
                write_archive(&home, &c, archived, now).unwrap();
            }
            let turns = tick(n);
            everything.extend(turns.clone());
            conversation.messages.extend(turns);
            conversation.save(&home).unwrap();
            let live: u64 = conversation.messages.iter().map(message_tokens).sum();
            assert!(live <= budget + 200, "tick {n}: {live} tokens live");
        }

        let mut names: Vec<_> = std::fs::read_dir(home.state_dir().join("archive"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        names.sort_by_key(|p| {
            let meta = std::fs::read(p).unwrap();
            serde_json::from_slice::<Archive>(&meta)
                .unwrap()
                .archived_at
        });
        assert!(names.len() > 10, "{} archives", names.len());
        let mut replay = Vec::new();
        for path in &names {
            let archive: Archive = serde_json::from_slice(&std::fs::read(path).unwrap())
                .expect("each archive parses on its own");
            replay.extend(archive.messages);
        }
        let saved: Conversation =
            serde_json::from_slice(&std::fs::read(home.messages_path()).unwrap()).unwrap();
        replay.extend(saved.messages);
        assert_eq!(
            without_pointers(&replay),
            everything,
            "every turn exactly once, in order"
        );
    }

    #[test]
    fn a_conversation_under_budget_is_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("hearth.toml"), "").unwrap();
        let home = Home::open(dir.path()).unwrap();
        let mut conversation = Conversation::new();
        conversation.messages.extend(tick(1));
        let now = DateTime::from_timestamp(1_700_000_000, 0).unwrap();
        assert_eq!(plan(&home, &conversation, 10_000, now), None);
    }

    #[test]
    fn cuts_never_split_a_tool_call_from_its_result() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("hearth.toml"), "").unwrap();
        let home = Home::open(dir.path()).unwrap();
        let mut conversation = Conversation::new();
        for n in 0..10 {
            conversation.messages.extend(tick(n));
        }
        let now = DateTime::from_timestamp(1_700_000_000, 0).unwrap();
        let c = plan(&home, &conversation, 200, now).unwrap();
        assert_eq!(c.count % 4, 0, "cut before a tick's user turn");
        apply(&mut conversation, &c);
        assert!(
            matches!(&conversation.messages[0].content[0], Block::Text { text } if text.starts_with(POINTER_PREFIX))
        );
    }
}
