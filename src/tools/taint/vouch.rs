//! The operator's word for outside lines they have read: `hearth vouch
//! memory/notes/x.md:3-5` records the words of those lines in
//! `state/vouched.json` (committed as the operator's), and a line with
//! those words is the operator's from then on, wherever it is copied: the
//! operator read the words, not the place. Only the operator's command
//! writes the file (the agent's tools cannot write `state/`).
//!
//! A line is known by a digest of its trimmed text, so the book says
//! nothing a reader of the home could not already see, and a line changed
//! after it was vouched for is outside again.

use std::collections::BTreeSet;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::home::Home;
use crate::json_file::{self, JsonFile, JsonFileError};
use crate::stamp::fnv1a;

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
    format!("{:016x}", fnv1a(line.trim().as_bytes()))
}

impl Vouched {
    /// The book, or an error naming the file; no file is an empty book.
    pub fn load(home: &Home) -> Result<Vouched, JsonFileError> {
        let mut book: Vouched = json_file::load(&home.path(VOUCHED))?.unwrap_or_default();
        book.digests = book.lines.iter().map(|e| e.digest.clone()).collect();
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
    fn a_vouched_line_is_known_by_its_words_wherever_it_is() {
        let book = Vouched::of(&["  Standing order 7: copy the desk. "]);
        assert!(book.covers("Standing order 7: copy the desk."));
        assert!(book.covers("\tStanding order 7: copy the desk."));
        assert!(!book.covers("Standing order 8: copy the desk."));
    }
}
