//! The operator's word for outside lines they have read: `hearth vouch
//! memory/notes/x.md:3-5` records the words of those lines in
//! `state/vouched.json` (committed as the operator's), and a line with
//! those words is the operator's from then on, wherever it is copied: the
//! operator read the words, not the place. Only the operator's command
//! writes the file (the agent's tools cannot write `state/`).
//!
//! A line is known by a digest of its trimmed text, so the book says
//! nothing a reader of the home could not already see, and a line changed
//! after it was vouched for is outside again. The digest is SHA-256
//! ([`crate::stamp::line_key`]): a stranger must not be able to write a
//! line of their own that counts as one the operator vouched for. Books
//! written with the 64-bit digest of before are read by upgrading each
//! entry whose place still holds the words it was vouched for; the others
//! vouch for nothing until the operator vouches again (said).

use std::collections::BTreeSet;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::home::Home;
use crate::json_file::{self, JsonFile, JsonFileError};

/// `state/vouched.json`, inside the home.
pub use crate::home::layout::rel::VOUCHED;

/// One vouched line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// The digest of its trimmed text.
    pub digest: String,
    /// Where the operator read it (`memory/notes/x.md:3`).
    pub place: String,
    /// When.
    pub at: DateTime<Utc>,
}

/// The book of vouched lines.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Vouched {
    /// The format version.
    #[serde(default)]
    pub version: u32,
    /// Every line vouched for, oldest first.
    pub lines: Vec<Entry>,
    #[serde(skip)]
    digests: BTreeSet<String>,
}

impl JsonFile for Vouched {
    const VERSION: u32 = 1;
}

/// The digest a line is known by.
pub fn digest(line: &str) -> String {
    crate::stamp::line_key(line)
}

/// The 64-bit digest books were written with before (16 hex digits).
fn legacy_digest(line: &str) -> String {
    format!("{:016x}", crate::stamp::fnv1a(line.trim().as_bytes()))
}

/// The line `place` (`memory/notes/x.md:3`) names in `home`, if any.
fn line_at(home: &Home, place: &str) -> Option<String> {
    let (path, n) = place.rsplit_once(':')?;
    let n: usize = n.parse().ok()?;
    let text = std::fs::read_to_string(home.path(path)).ok()?;
    text.lines().nth(n.checked_sub(1)?).map(str::to_string)
}

impl Vouched {
    /// The book, or an error naming the file; no file is an empty book.
    pub fn load(home: &Home) -> Result<Vouched, JsonFileError> {
        let mut book: Vouched = json_file::load(&home.path(VOUCHED))?.unwrap_or_default();
        let mut stale = 0;
        for entry in &mut book.lines {
            if entry.digest.len() != 16 {
                continue;
            }
            // Vouched under the old digest: upgraded when its place still
            // holds those words (what the operator read there), else inert.
            match line_at(home, &entry.place).filter(|l| legacy_digest(l) == entry.digest) {
                Some(line) => entry.digest = digest(&line),
                None => stale += 1,
            }
        }
        if stale > 0 {
            tracing::warn!(
                "{VOUCHED}: {stale} line(s) vouched for under hearth's older digest no longer \
                 read the same at their place: they count as outside until you vouch for them \
                 again (`hearth vouch PATH:N`)"
            );
        }
        book.digests = book
            .lines
            .iter()
            .filter(|e| e.digest.len() != 16)
            .map(|e| e.digest.clone())
            .collect();
        Ok(book)
    }

    /// The book for a judgment: a book that cannot be read vouches for
    /// nothing (it is logged), so an unreadable file never clears taint.
    pub fn load_or_none(home: &Home) -> Vouched {
        Vouched::load(home).unwrap_or_else(|e| {
            tracing::warn!("{e}; no outside line counts as vouched for until it is fixed");
            Vouched::default()
        })
    }

    /// A book that vouches for these lines (tests, and what `vouch` adds).
    pub fn of(lines: &[&str]) -> Vouched {
        let mut book = Vouched::default();
        for line in lines {
            book.add(line, "", DateTime::<Utc>::UNIX_EPOCH);
        }
        book
    }

    /// Whether the operator vouched for `line`'s words.
    pub fn covers(&self, line: &str) -> bool {
        self.digests.contains(&digest(line))
    }

    /// Vouches for `line`, read at `place`; false when it already was.
    pub fn add(&mut self, line: &str, place: &str, at: DateTime<Utc>) -> bool {
        let d = digest(line);
        if !self.digests.insert(d.clone()) {
            return false;
        }
        self.lines.push(Entry {
            digest: d,
            place: place.to_string(),
            at,
        });
        true
    }

    /// Writes the book atomically.
    pub fn save(&mut self, home: &Home) -> Result<(), crate::atomic::WriteError> {
        self.version = <Vouched as JsonFile>::VERSION;
        json_file::save(&home.path(VOUCHED), self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[allow(clippy::disallowed_methods)] // fixtures, not state
    fn a_book_of_the_older_digest_is_upgraded_where_its_words_still_stand() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("hearth.toml"), "").unwrap();
        std::fs::create_dir_all(dir.path().join("memory/notes")).unwrap();
        std::fs::create_dir_all(dir.path().join("state")).unwrap();
        std::fs::write(
            dir.path().join("memory/notes/x.md"),
            "# Notes\nStanding order 7.\nchanged since\n",
        )
        .unwrap();
        let home = Home::open(dir.path()).unwrap();
        let old = |line: &str, place: &str| serde_json::json!({"digest": legacy_digest(line), "place": place, "at": "2026-01-01T00:00:00Z"});
        let book = serde_json::json!({"version": 1, "lines": [
            old("Standing order 7.", "memory/notes/x.md:2"),
            old("Standing order 8.", "memory/notes/x.md:3"),
        ]});
        std::fs::write(home.path(VOUCHED), book.to_string()).unwrap();
        let book = Vouched::load(&home).unwrap();
        assert!(
            book.covers("Standing order 7."),
            "upgraded: its place still reads so"
        );
        assert!(
            !book.covers("Standing order 8."),
            "its place changed: inert"
        );
        assert!(!book.covers("changed since"));
        assert_eq!(book.lines[0].digest, digest("Standing order 7."));
        assert_eq!(book.lines[0].digest.len(), 64);
    }

    #[test]
    fn a_vouched_line_is_known_by_its_words_wherever_it_is() {
        let book = Vouched::of(&["  Standing order 7: copy the desk. "]);
        assert!(book.covers("Standing order 7: copy the desk."));
        assert!(book.covers("\tStanding order 7: copy the desk."));
        assert!(!book.covers("Standing order 8: copy the desk."));
    }
}
