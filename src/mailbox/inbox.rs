//! `inbox/`: what the operator says to the agent.
//!
//! Anything can land here (a 50 MB log, bytes that are not UTF-8), so reading
//! is defensive: the model sees at most [`MAX_MESSAGE_BYTES`] of a message,
//! decoded lossily, with a note saying what was cut or replaced; the file
//! itself is archived byte for byte.

use std::io::Read;
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};

use super::{unique_path, MailboxError};
use crate::atomic;
use crate::home::Home;

/// How much of one message the model sees.
pub const MAX_MESSAGE_BYTES: usize = 64 * 1024;

/// One inbox message as the tick reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct InboxMessage {
    /// Path inside the home, e.g. `inbox/20261121T101500Z-4242.md`.
    pub rel: String,
    /// Its text (cut at the inbox's size limit, and said so in `notes`).
    pub text: String,
    /// Size of the file in bytes.
    pub size: u64,
    /// What was done to make the message readable (truncated, not UTF-8).
    pub notes: Vec<String>,
    /// Who it is from, judged once by the tick that reads it
    /// (`tick::prepare`); every later step reads this, none judges again.
    pub sender: Sender,
}

/// Who an inbox message is from, as judged once.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Sender {
    /// Not judged: treated as outside, since nothing proved it the
    /// operator's.
    #[default]
    Unjudged,
    /// The operator: no sign of anyone else.
    Operator,
    /// Someone else.
    Outside {
        /// Who, for its source: `from mallory@example.org`, `a handoff
        /// from alice`.
        label: String,
        /// The sender's own name, when the message gave one (shown on its
        /// fence).
        from: Option<String>,
    },
}

impl Sender {
    /// What the message is as an outside source (`inbox/x.md (from …)`),
    /// or `None` for the operator's.
    pub fn source(&self, rel: &str) -> Option<String> {
        match self {
            Sender::Operator => None,
            Sender::Unjudged => Some(format!("{rel} (sender not judged)")),
            Sender::Outside { label, .. } => Some(format!("{rel} ({label})")),
        }
    }
}

/// Writes `text` as a new inbox message and returns its path.
pub fn say(home: &Home, text: &str, now: DateTime<Utc>) -> Result<PathBuf, MailboxError> {
    if text.trim().is_empty() {
        return Err(MailboxError::Empty);
    }
    let dir = home.inbox_dir();
    let stem = format!(
        "{}-{}",
        now.format("%Y%m%dT%H%M%S%.3fZ"),
        std::process::id()
    );
    let path = unique_path(&dir, &stem, "md");
    let mut body = text.trim_end().to_string();
    body.push('\n');
    atomic::write(&path, body.as_bytes())?;
    Ok(path)
}

/// Messages waiting, oldest name first. Only `.md` and `.txt` files count;
/// hidden files (editor and atomic-write temp files) are skipped.
pub fn pending(home: &Home) -> Result<Vec<PathBuf>, MailboxError> {
    let dir = home.inbox_dir();
    let entries = match std::fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(MailboxError::io(&dir)(e)),
    };
    let mut paths: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| is_message(p) && p.is_file())
        .collect();
    paths.sort();
    Ok(paths)
}

/// Whether `path` is a name the inbox treats as a message.
pub fn is_message(path: &Path) -> bool {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
        return false;
    };
    !name.starts_with('.') && (name.ends_with(".md") || name.ends_with(".txt"))
}

/// Reads a message for the model: at most [`MAX_MESSAGE_BYTES`], lossily.
pub fn read(home: &Home, path: &Path) -> Result<InboxMessage, MailboxError> {
    let file = std::fs::File::open(path).map_err(MailboxError::io(path))?;
    let size = file.metadata().map_err(MailboxError::io(path))?.len();
    let mut bytes = Vec::with_capacity((size as usize).min(MAX_MESSAGE_BYTES));
    file.take(MAX_MESSAGE_BYTES as u64)
        .read_to_end(&mut bytes)
        .map_err(MailboxError::io(path))?;
    let rel = home.relative(path);
    let mut notes = Vec::new();
    let truncated = size > bytes.len() as u64;
    if truncated {
        // Do not cut a UTF-8 sequence in half and then blame the sender.
        let cut = match std::str::from_utf8(&bytes) {
            Ok(_) => bytes.len(),
            Err(e) if e.error_len().is_none() => e.valid_up_to(),
            Err(_) => bytes.len(),
        };
        bytes.truncate(cut);
        notes.push(format!(
            "{rel} is {size} bytes; only the first {} are shown here (the whole file is archived)",
            bytes.len()
        ));
    }
    let text = match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => {
            notes.push(format!(
                "{rel} is not valid UTF-8; undecodable bytes are shown as U+FFFD (the original bytes are archived)"
            ));
            String::from_utf8_lossy(e.as_bytes()).into_owned()
        }
    };
    Ok(InboxMessage {
        rel,
        text,
        size,
        notes,
        sender: Sender::Unjudged,
    })
}

/// Moves a consumed message to `state/inbox-archive/` and returns its new
/// path inside the home. The file is in one place or the other at every
/// instant.
pub fn archive(home: &Home, rel: &str) -> Result<String, MailboxError> {
    let to = archive_path(home, rel);
    archive_to(home, rel, &to)
}

/// Where [`archive`] would move the message `rel` now (a free name in
/// `state/inbox-archive/`), so a caller can record it before the move: a
/// What a message is about, in a line: its front matter's `subject` or
/// `title`, else the first line of its body (never the `---` fence), at
/// most 60 characters.
pub fn subject_of(text: &str) -> String {
    let split = crate::memory::front_matter::split(text).ok();
    let named = split.as_ref().and_then(|s| s.yaml).and_then(|yaml| {
        yaml.lines().find_map(|line| {
            let (key, value) = line.split_once(':')?;
            let key = key.trim().to_ascii_lowercase();
            let value = value.trim().trim_matches(['"', '\'']);
            (["subject", "title"].contains(&key.as_str()) && !value.is_empty()).then_some(value)
        })
    });
    let body = split.as_ref().map_or(text, |s| s.body);
    let first = named
        .or_else(|| body.lines().map(str::trim).find(|l| !l.is_empty()))
        .unwrap_or("a message");
    let mut subject: String = first.chars().take(60).collect();
    if first.chars().count() > 60 {
        subject.push('…');
    }
    subject
}

/// process killed between the two then knows where to look.
pub fn archive_path(home: &Home, rel: &str) -> String {
    let from = home.root().join(rel);
    let name = from
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "message.md".into());
    let (stem, ext) = match name.rsplit_once('.') {
        Some((stem, ext)) => (stem.to_string(), ext.to_string()),
        None => (name.clone(), "md".to_string()),
    };
    home.relative(&unique_path(&home.inbox_archive_dir(), &stem, &ext))
}

/// Moves the message `rel` to `to` (from [`archive_path`]).
pub fn archive_to(home: &Home, rel: &str, to: &str) -> Result<String, MailboxError> {
    atomic::rename(&home.root().join(rel), &home.root().join(to))?;
    Ok(to.to_string())
}

/// Puts a consumed message back in `inbox/` (a tick that never answered
/// it: an outage, a crash, a heal), under a fresh name if its old one was
/// taken meanwhile. Returns its path in the inbox, or `None` when it is no
/// longer in the archive (given back already).
fn requeue(home: &Home, archived: &str) -> Result<Option<String>, MailboxError> {
    let from = home.root().join(archived);
    if !from.is_file() {
        return Ok(None);
    }
    let name = archived.rsplit('/').next().unwrap_or(archived);
    let (stem, ext) = name.rsplit_once('.').unwrap_or((name, "md"));
    let to = unique_path(&home.inbox_dir(), stem, ext);
    atomic::rename(&from, &to)?;
    Ok(Some(home.relative(&to)))
}

/// Gives back every message of `archived` a tick consumed without
/// answering — the one way a message returns to `inbox/`, whoever decides
/// it (the tick that never reached the model, the supervisor after a
/// crash, a signal or an outage, a heal). Each comes back once: one given
/// back already is skipped. Returns their paths in the inbox.
pub fn give_back<'a>(
    home: &Home,
    archived: impl IntoIterator<Item = &'a str>,
) -> Result<Vec<String>, MailboxError> {
    let mut back = Vec::new();
    for rel in archived {
        back.extend(requeue(home, rel)?);
    }
    Ok(back)
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // fixtures, not state
mod tests {
    use super::*;

    fn home() -> (tempfile::TempDir, Home) {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::at(dir.path()).unwrap();
        (dir, home)
    }

    #[test]
    fn say_then_pending_then_archive() {
        let (_dir, home) = home();
        let now = DateTime::from_timestamp(1_700_000_000, 0).unwrap();
        let path = say(&home, "hello", now).unwrap();
        std::fs::write(home.inbox_dir().join(".hello.md.swp"), "x").unwrap();
        std::fs::write(home.inbox_dir().join("notes.json"), "x").unwrap();
        assert_eq!(pending(&home).unwrap(), vec![path.clone()]);
        let msg = read(&home, &path).unwrap();
        assert_eq!(msg.text, "hello\n");
        assert!(msg.notes.is_empty());
        let archived = archive(&home, &msg.rel).unwrap();
        assert!(archived.starts_with("state/inbox-archive/"));
        assert!(pending(&home).unwrap().is_empty());
        assert_eq!(
            std::fs::read_to_string(home.root().join(&archived)).unwrap(),
            "hello\n"
        );
    }

    #[test]
    fn empty_message_is_refused() {
        let (_dir, home) = home();
        let now = DateTime::from_timestamp(1_700_000_000, 0).unwrap();
        assert!(matches!(say(&home, "  \n", now), Err(MailboxError::Empty)));
    }

    #[test]
    fn invalid_utf8_is_read_lossily_and_named() {
        let (_dir, home) = home();
        let path = home.inbox_dir().join("bad.txt");
        std::fs::create_dir_all(home.inbox_dir()).unwrap();
        std::fs::write(&path, b"caf\xe9 ok").unwrap();
        let msg = read(&home, &path).unwrap();
        assert_eq!(msg.text, "caf\u{fffd} ok");
        assert!(msg.notes[0].contains("inbox/bad.txt"), "{:?}", msg.notes);
    }

    #[test]
    fn huge_message_is_cut_on_a_char_boundary() {
        let (_dir, home) = home();
        let path = home.inbox_dir().join("big.md");
        std::fs::create_dir_all(home.inbox_dir()).unwrap();
        let text = "é".repeat(MAX_MESSAGE_BYTES); // 2 bytes each
        std::fs::write(&path, &text).unwrap();
        let msg = read(&home, &path).unwrap();
        assert_eq!(msg.text.len(), MAX_MESSAGE_BYTES);
        assert_eq!(msg.notes.len(), 1, "truncated, but no UTF-8 complaint");
    }

    #[test]
    fn archive_never_overwrites() {
        let (_dir, home) = home();
        std::fs::create_dir_all(home.inbox_dir()).unwrap();
        std::fs::write(home.inbox_dir().join("m.md"), "one").unwrap();
        let a = archive(&home, "inbox/m.md").unwrap();
        std::fs::write(home.inbox_dir().join("m.md"), "two").unwrap();
        let b = archive(&home, "inbox/m.md").unwrap();
        assert_ne!(a, b);
        assert_eq!(std::fs::read_to_string(home.root().join(a)).unwrap(), "one");
    }
}
