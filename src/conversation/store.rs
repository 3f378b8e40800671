//! `state/messages.json`: the running conversation the model sees.
//!
//! Versioned (`{"version": 1, "messages": [...]}`) so a future format change
//! is detected instead of misread. A file that does not parse (truncated by a
//! disk-full, broken by a hand edit) does not stop the agent: the last
//! good copy (the newest committed copy that parses) is restored, and the broken file is kept beside it and named in a
//! flare, so nothing is lost and the operator knows.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::Message;
use crate::atomic;
use crate::home::Home;
use crate::io_hint::IoError;
use crate::repo::Repo;

/// The format version of `messages.json` and the archives.
pub const VERSION: u32 = 1;

/// How far back to look for a copy that parses.
const HISTORY_DEPTH: usize = 200;

/// `state/messages.json`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Conversation {
    /// Its format version ([`VERSION`]).
    pub version: u32,
    /// The turns the model sees, oldest first.
    pub messages: Vec<Message>,
}

/// Why the conversation could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum ConversationError {
    /// Written by a newer hearth.
    #[error("{path} has format version {found}; this hearth reads version {VERSION}")]
    Version {
        /// The file, relative to the home.
        path: String,
        /// The version in it.
        found: u32,
    },
    /// The file could not be read.
    #[error(transparent)]
    Io(#[from] IoError),
    /// The file could not be written.
    #[error(transparent)]
    Write(#[from] atomic::WriteError),
}

impl ConversationError {
    /// What to do about it.
    pub fn hint(&self) -> String {
        match self {
            ConversationError::Version { .. } => {
                "run the newer hearth that wrote it, or restore the file from history \
                 (`git log -p -- state/messages.json`)"
                    .into()
            }
            ConversationError::Io(e) => e.hint(),
            ConversationError::Write(e) => e.hint(),
        }
    }
}

/// A `messages.json` that did not parse, and what stands in for it.
#[derive(Debug, Clone, PartialEq)]
pub struct Broken {
    /// The broken file's bytes, to be kept beside it.
    pub bytes: Vec<u8>,
    /// The parse error, named by file, line and column.
    pub problem: String,
    /// The commit the stand-in came from (none: it starts empty).
    pub restored_from: Option<String>,
}

impl Conversation {
    /// A conversation of one user turn, `text`, carrying `outside`'s
    /// sources (an ask's, a consolidation's: none kept before it).
    pub fn asking(text: String, outside: crate::outside::Outside) -> Conversation {
        Conversation {
            messages: vec![super::Message {
                outside,
                role: super::Role::User,
                content: vec![super::Block::Text { text }],
            }],
            ..Conversation::default()
        }
    }

    /// Reads the conversation without changing anything. A broken file is
    /// replaced, in memory, by the newest committed copy that parses, and
    /// reported as [`Broken`] so the tick can keep it and say so.
    pub fn read(
        home: &Home,
        repo: Option<&Repo>,
    ) -> Result<(Conversation, Option<Broken>), ConversationError> {
        let path = home.messages_path();
        let rel = home.relative(&path);
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok((Conversation::new(), None))
            }
            Err(source) => {
                return Err(ConversationError::Io(
                    IoError::at(rel, source).framed("{} could not be read"),
                ))
            }
        };
        let problem = match parse(&bytes) {
            Ok(conversation) => return check_version(conversation, &rel).map(|c| (c, None)),
            Err(problem) => problem,
        };
        let from_history = repo
            .and_then(|r| {
                r.last_good_version(&rel, HISTORY_DEPTH, |b| parse(b).is_ok())
                    .ok()
                    .flatten()
            })
            .and_then(|(bytes, commit)| parse(&bytes).ok().map(|c| (c, commit)));
        let (conversation, restored_from) = match from_history {
            Some((conversation, commit)) => (conversation, Some(commit)),
            None => (Conversation::new(), None),
        };
        let conversation = check_version(conversation, &rel)?;
        Ok((
            conversation,
            Some(Broken {
                bytes,
                problem: format!("{rel}:{}: {problem}", problem.line()),
                restored_from,
            }),
        ))
    }

    /// An empty conversation of the current version.
    pub fn new() -> Conversation {
        Conversation {
            version: VERSION,
            messages: Vec::new(),
        }
    }

    /// Writes `messages.json` atomically.
    pub fn save(&self, home: &Home) -> Result<(), atomic::WriteError> {
        let mut json = serde_json::to_vec_pretty(self).expect("a conversation serialises");
        json.push(b'\n');
        atomic::write(&home.messages_path(), &json)
    }
}

impl Broken {
    /// Keeps the broken bytes beside the file and returns where.
    pub fn keep(&self, home: &Home, now: DateTime<Utc>) -> Result<String, atomic::WriteError> {
        let kept = home.messages_path().with_file_name(format!(
            "messages.json.broken-{}",
            now.format("%Y%m%dT%H%M%SZ")
        ));
        atomic::write(&kept, &self.bytes)?;
        Ok(home.relative(&kept))
    }
}

fn parse(bytes: &[u8]) -> Result<Conversation, serde_json::Error> {
    serde_json::from_slice(bytes)
}

fn check_version(mut c: Conversation, rel: &str) -> Result<Conversation, ConversationError> {
    if c.version != VERSION {
        return Err(ConversationError::Version {
            path: rel.to_string(),
            found: c.version,
        });
    }
    let dropped = c.drop_empty_turns();
    if dropped > 0 {
        tracing::warn!(
            "{rel}: dropped {dropped} turn(s) with nothing in them (the API refuses to be sent one)"
        );
    }
    Ok(c)
}

impl Conversation {
    /// Removes turns with no text, tool call or tool result: an older
    /// hearth kept a refusal or a thinking-only answer as `content: []`,
    /// which every later request would carry and the API answers with 400
    /// (and a heal would restore it from the good commit). Returns how
    /// many went.
    pub fn drop_empty_turns(&mut self) -> usize {
        let before = self.messages.len();
        self.messages.retain(|m| {
            m.content.iter().any(|b| match b {
                super::Block::Text { text } => !text.is_empty(),
                super::Block::ToolUse { .. } | super::Block::ToolResult { .. } => true,
                super::Block::Thinking { .. } | super::Block::RedactedThinking { .. } => false,
            })
        });
        before - self.messages.len()
    }
}
