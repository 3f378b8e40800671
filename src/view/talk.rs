//! The thread (`/talk`): what the operator said and asked, and what the
//! agent answered and sent, in order, newest last — one read model over
//! the records each door already keeps: `state/sessions.jsonl` (asks, and
//! each tick's inbox and letters), the messages a tick read as archived,
//! the letters in `outbox/`, and `inbox/` for what no tick has read yet.
//!
//! A page reads back from the end of the sessions (or from where the page
//! after it began) only as far as it shows, so it costs the same on a
//! year's history as on a day's.

use std::collections::BTreeSet;
use std::io::Read;

use chrono::{DateTime, NaiveDateTime, Utc};

use crate::conversation::sessions::{Line, ReadMessage};
use crate::conversation::tail;
use crate::home::layout::rel;
use crate::home::Home;
use crate::mailbox::{flares, inbox, read_through};
use crate::memory::front_matter;

/// Session lines a page shows (an ask is two, a tick one).
pub const PAGE_LINES: usize = 30;

/// How much of one message or letter a page shows; the rest is named.
pub const SHOWN_BYTES: usize = 16 * 1024;

/// Who said it, and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Voice {
    /// A message in the inbox a tick read (from the page, `hearth say`,
    /// a file, mail).
    Told,
    /// A message no tick has read yet.
    Waiting,
    /// A question asked (`hearth ask`, the page, the chat API).
    Asked,
    /// The agent's answer to an ask; `whole: false` when it was cut.
    Answered {
        /// It arrived whole.
        whole: bool,
    },
    /// A letter the agent sent (`outbox/`).
    Letter {
        /// Its id, as `hearth outbox` lists it.
        id: String,
        /// Its subject.
        subject: String,
    },
}

impl Voice {
    /// The agent said it (an answer, a letter).
    pub fn by_agent(&self) -> bool {
        matches!(self, Voice::Answered { .. } | Voice::Letter { .. })
    }
}

/// One thing said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadEntry {
    /// When it was recorded.
    pub time: DateTime<Utc>,
    /// Who said it, and how.
    pub said: Voice,
    /// The words, at most [`SHOWN_BYTES`] of them.
    pub text: String,
    /// Where the rest is, when the words were cut.
    pub cut_from: Option<String>,
    /// The tick that read or wrote it.
    pub tick: Option<u64>,
    /// Words from outside the operator, and from whom.
    pub outside: Option<String>,
    /// A letter the operator has not marked read.
    pub unread: bool,
}

/// One page of the thread.
#[derive(Debug, Clone, Default)]
pub struct Thread {
    /// Oldest first, newest last.
    pub entries: Vec<ThreadEntry>,
    /// The cursor of the page before (`?before=N`), when there is one.
    pub older: Option<u64>,
    /// The cursor this page was read at (none: the newest page).
    pub at: Option<u64>,
    /// What could not be read, said on the page.
    pub problems: Vec<String>,
}

impl Thread {
    /// The newest time the page shows: what "read" marks up to.
    pub fn newest(&self) -> Option<DateTime<Utc>> {
        self.entries.iter().map(|e| e.time).max()
    }

    /// The ids of the letters shown unread.
    pub fn unread_letters(&self) -> Vec<String> {
        self.entries
            .iter()
            .filter(|e| e.unread)
            .filter_map(|e| match &e.said {
                Voice::Letter { id, .. } => Some(id.clone()),
                _ => None,
            })
            .collect()
    }
}

/// The page of the thread that ends before `before` (the newest page
/// when `None`, with the inbox's waiting messages after it).
pub fn thread(home: &Home, before: Option<u64>) -> Thread {
    let mut problems = Vec::new();
    let back = tail::read_back(&home.path(rel::SESSIONS), before, PAGE_LINES).unwrap_or_else(|e| {
        problems.push(format!("{} could not be read: {e}", rel::SESSIONS));
        tail::Back::default()
    });
    let mut entries: Vec<ThreadEntry> = back
        .lines
        .iter()
        .flat_map(|(_, line)| entries_of(home, line))
        .collect();
    if before.is_none() {
        entries.extend(waiting(home));
    }
    mark_unread(home, &mut entries);
    Thread {
        entries,
        older: back.older,
        at: before,
        problems,
    }
}

/// The letters newer than the thread's read mark and not marked read
/// themselves; the letters' marks are read only when some letter is past
/// the thread's mark.
fn mark_unread(home: &Home, entries: &mut [ThreadEntry]) {
    let through = read_through::through(home);
    let past = |e: &ThreadEntry| e.said.by_agent() && through.is_none_or(|t| e.time > t);
    if !entries
        .iter()
        .any(|e| matches!(e.said, Voice::Letter { .. }) && past(e))
    {
        return;
    }
    let read: BTreeSet<String> = flares::read_ids(home);
    for entry in entries.iter_mut() {
        if let Voice::Letter { id, .. } = &entry.said {
            entry.unread = past(entry) && !read.contains(id);
        }
    }
}

/// What one session line says on the thread.
fn entries_of(home: &Home, line: &Line) -> Vec<ThreadEntry> {
    let tick = line.id.strip_prefix("tick-").and_then(|n| n.parse().ok());
    let entry = |said: Voice, text: &str| ThreadEntry {
        time: line.time,
        said,
        text: text.trim().to_string(),
        cut_from: None,
        tick,
        outside: None,
        unread: false,
    };
    let outside = (!line.outside.is_empty()).then(|| line.outside.to_string());
    match line.kind.as_str() {
        "question" => vec![ThreadEntry {
            outside,
            ..entry(Voice::Asked, &line.asked)
        }],
        "answer" => vec![entry(
            Voice::Answered {
                whole: line.complete != Some(false),
            },
            &line.said,
        )],
        "tick" => {
            let mut entries: Vec<ThreadEntry> = match line.read.is_empty() {
                // A line from before ticks named what they read.
                true if !line.asked.trim().is_empty() => vec![ThreadEntry {
                    outside,
                    ..entry(Voice::Told, &line.asked)
                }],
                _ => line
                    .read
                    .iter()
                    .map(|m| told(home, line, m, tick))
                    .collect(),
            };
            entries.extend(line.letters.iter().map(|rel| letter(home, line, rel, tick)));
            if line.letters.is_empty() {
                entries.extend(sent_before_letters_were_named(&line.said).map(
                    |(subject, body)| {
                        entry(
                            Voice::Letter {
                                id: String::new(),
                                subject,
                            },
                            &body,
                        )
                    },
                ));
            }
            entries
        }
        _ => Vec::new(),
    }
}

/// A message a tick read, from its archived copy.
fn told(home: &Home, line: &Line, message: &ReadMessage, tick: Option<u64>) -> ThreadEntry {
    let (text, cut_from) = shown(home, &message.archived);
    ThreadEntry {
        time: line.time,
        said: Voice::Told,
        text: body_of(&text),
        cut_from,
        tick,
        outside: message.outside.clone(),
        unread: false,
    }
}

/// A letter a tick posted, from `outbox/`.
fn letter(home: &Home, line: &Line, rel: &str, tick: Option<u64>) -> ThreadEntry {
    let (text, cut_from) = shown(home, rel);
    let subject = front_matter::split(&text)
        .ok()
        .and_then(|s| s.yaml)
        .and_then(|yaml| yaml_rust2::YamlLoader::load_from_str(yaml).ok())
        .and_then(|docs| docs.first()?["subject"].as_str().map(str::to_string))
        .unwrap_or_default();
    let id = rel
        .rsplit('/')
        .next()
        .unwrap_or(rel)
        .trim_end_matches(".md")
        .to_string();
    ThreadEntry {
        time: line.time,
        said: Voice::Letter { id, subject },
        text: body_of(&text),
        cut_from,
        tick,
        outside: None,
        unread: false,
    }
}

/// The `[sent: SUBJECT] BODY` lines of a tick recorded before its
/// letters were named.
fn sent_before_letters_were_named(said: &str) -> impl Iterator<Item = (String, String)> + '_ {
    said.lines().filter_map(|l| {
        let rest = l.strip_prefix("[sent: ")?;
        let (subject, body) = rest.split_once("] ")?;
        Some((subject.to_string(), body.to_string()))
    })
}

/// The inbox's messages no tick has read yet, oldest first.
fn waiting(home: &Home) -> Vec<ThreadEntry> {
    inbox::pending(home)
        .unwrap_or_default()
        .into_iter()
        .map(|path| {
            let rel = home.relative(&path);
            let (text, cut_from) = shown(home, &rel);
            // Judged by the tick's one rule (a handoff, a named sender);
            // a message that cannot be read is not the operator's.
            let sender = inbox::read(home, &path)
                .map(|message| crate::tick::sender::of(&message, &[]))
                .unwrap_or_default();
            ThreadEntry {
                time: stamped(&rel).unwrap_or_else(|| modified(&path)),
                said: Voice::Waiting,
                text: body_of(&text),
                cut_from,
                tick: None,
                outside: match sender {
                    inbox::Sender::Operator => None,
                    inbox::Sender::Outside { label, .. } => Some(label),
                    inbox::Sender::Unjudged => Some("sender not judged".into()),
                },
                unread: false,
            }
        })
        .collect()
}

/// The time a message's name carries (`20261121T101500.000Z-4242.md`).
fn stamped(rel: &str) -> Option<DateTime<Utc>> {
    let name = rel.rsplit('/').next()?;
    let stamp = name.get(..19)?;
    NaiveDateTime::parse_from_str(stamp, "%Y%m%dT%H%M%S%.3f")
        .ok()
        .map(|t| t.and_utc())
}

fn modified(path: &std::path::Path) -> DateTime<Utc> {
    std::fs::metadata(path)
        .and_then(|m| m.modified())
        .map(DateTime::<Utc>::from)
        .unwrap_or_default()
}

/// The text after a file's front matter (all of it when there is none).
fn body_of(text: &str) -> String {
    front_matter::split(text)
        .map(|s| s.body.trim().to_string())
        .unwrap_or_else(|_| text.trim().to_string())
}

/// At most [`SHOWN_BYTES`] of the file `rel`, decoded lossily, and the
/// file named when there is more; a file that cannot be read says so.
fn shown(home: &Home, rel: &str) -> (String, Option<String>) {
    let mut bytes = Vec::new();
    let read = std::fs::File::open(home.path(rel))
        .and_then(|file| file.take(SHOWN_BYTES as u64 + 1).read_to_end(&mut bytes));
    match read {
        Err(e) => (format!("({rel} could not be read: {e})"), None),
        Ok(_) if bytes.len() > SHOWN_BYTES => {
            bytes.truncate(SHOWN_BYTES);
            (
                String::from_utf8_lossy(&bytes).into_owned(),
                Some(rel.to_string()),
            )
        }
        Ok(_) => (String::from_utf8_lossy(&bytes).into_owned(), None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_name_carries_its_time_and_old_ticks_their_sends() {
        let t = stamped("inbox/20261121T101500.250Z-4242.md").unwrap();
        assert_eq!(t.to_rfc3339(), "2026-11-21T10:15:00.250+00:00");
        assert_eq!(stamped("inbox/note.md"), None);
        let sent: Vec<_> =
            sent_before_letters_were_named("done\n[sent: hi] Hello there.\n[write a] x").collect();
        assert_eq!(sent, [("hi".to_string(), "Hello there.".to_string())]);
    }
}
