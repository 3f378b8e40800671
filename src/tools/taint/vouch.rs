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
pub const VOUCHED: &str = "state/vouched.json";

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

/// Why lines could not be vouched for.
#[derive(Debug, thiserror::Error)]
pub enum VouchError {
    /// The place is not `PATH`, `PATH:N` or `PATH:N-M` of a file in the home.
    #[error("{place}: {why}")]
    Place {
        /// The place as given.
        place: String,
        /// What is wrong with it.
        why: String,
    },
    /// The book could not be read.
    #[error(transparent)]
    Book(#[from] JsonFileError),
    /// The book could not be written.
    #[error(transparent)]
    Write(#[from] crate::atomic::WriteError),
    /// The commit lock or the commit failed.
    #[error(transparent)]
    Lock(#[from] crate::home::lock::LockError),
    /// The commit failed.
    #[error(transparent)]
    Repo(#[from] crate::repo::RepoError),
}

impl VouchError {
    /// What to do about it.
    pub fn hint(&self) -> String {
        match self {
            VouchError::Place { .. } => "name a file in the home and, if you like, its lines: \
                 hearth vouch memory/notes/x.md:3-5 (`hearth audit` lists outside lines)"
                .into(),
            VouchError::Book(e) => e.hint(),
            VouchError::Write(e) => e.hint(),
            VouchError::Lock(e) => e.hint(),
            VouchError::Repo(e) => e.hint(),
        }
    }
}

/// A place the operator vouches for: a file, and optionally its lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    /// The file, relative to the home.
    pub path: String,
    /// 1-based, inclusive; `None`: every outside line of the file.
    pub lines: Option<(usize, usize)>,
}

/// Parses `memory/x.md`, `memory/x.md:3` or `memory/x.md:3-5`.
pub fn parse_place(raw: &str) -> Result<Place, VouchError> {
    let bad = |why: &str| VouchError::Place {
        place: raw.to_string(),
        why: why.to_string(),
    };
    let (path, lines) = match raw.rsplit_once(':') {
        Some((path, range)) if range.chars().all(|c| c.is_ascii_digit() || c == '-') => {
            let (a, b) = range.split_once('-').unwrap_or((range, range));
            let a: usize = a.parse().map_err(|_| bad("the line must be a number"))?;
            let b: usize = b
                .parse()
                .map_err(|_| bad("the last line must be a number"))?;
            if a == 0 || b < a {
                return Err(bad(
                    "lines count from 1, and the range must not run backwards",
                ));
            }
            (path, Some((a, b)))
        }
        _ => (raw, None),
    };
    let path = path.trim_start_matches("./").trim_end_matches('/');
    if path.is_empty() || path.starts_with('/') || path.split('/').any(|p| p == "..") {
        return Err(bad("the path must be inside the home, relative to it"));
    }
    Ok(Place {
        path: path.to_string(),
        lines,
    })
}

/// What `hearth vouch` did: each line vouched for, as `path:line  text`.
#[derive(Debug, Default)]
pub struct Vouching {
    /// The lines newly vouched for.
    pub vouched: Vec<String>,
    /// The commit that records it, when one was made.
    pub commit: Option<String>,
}

/// Vouches for the lines at `places` (a whole file: its outside lines)
/// and commits the book as `operator`'s.
pub fn vouch(
    home: &Home,
    operator: &crate::repo::Identity,
    places: &[Place],
    now: DateTime<Utc>,
) -> Result<Vouching, VouchError> {
    let _lock = crate::home::lock::CommitLock::acquire(home)?;
    let mut book = Vouched::load(home)?;
    let repo = crate::repo::Repo::open(home.root())?;
    let mut done = Vouching::default();
    for place in places {
        let text =
            std::fs::read_to_string(home.path(&place.path)).map_err(|e| VouchError::Place {
                place: place.path.clone(),
                why: format!("cannot be read as text: {e}"),
            })?;
        let chosen: Vec<usize> = match place.lines {
            Some((a, b)) => (a..=b.min(text.lines().count())).collect(),
            None => {
                let origins = repo.line_origins_on_disk(&place.path);
                super::origin::outside_lines(&place.path, &text, &origins, &Vouched::default())
                    .into_iter()
                    .map(|l| l.line)
                    .collect()
            }
        };
        for n in chosen {
            let line = text.lines().nth(n - 1).unwrap_or_default();
            if !line.chars().any(char::is_alphanumeric) {
                continue;
            }
            let at = format!("{}:{n}", place.path);
            if book.add(line, &at, now) {
                done.vouched.push(format!("{at}  {}", line.trim()));
            }
        }
    }
    if done.vouched.is_empty() {
        return Ok(done);
    }
    book.save(home)?;
    let mut message = format!(
        "vouch: {} line(s) the operator read\n\n",
        done.vouched.len()
    );
    for line in &done.vouched {
        message.push_str(&format!("- {}\n", super::origin::bounded(line)));
    }
    done.commit = repo.commit(&[VOUCHED], operator, &message, now)?;
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn places_are_a_file_and_its_lines() {
        assert_eq!(
            parse_place("memory/x.md:3-5").unwrap(),
            Place {
                path: "memory/x.md".into(),
                lines: Some((3, 5))
            }
        );
        assert_eq!(parse_place("memory/x.md:7").unwrap().lines, Some((7, 7)));
        assert_eq!(parse_place("./memory/x.md").unwrap().lines, None);
        for bad in [
            "memory/x.md:0",
            "memory/x.md:5-3",
            "/etc/passwd",
            "../x.md",
            "",
        ] {
            assert!(parse_place(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_vouched_line_is_known_by_its_words_wherever_it_is() {
        let book = Vouched::of(&["  Standing order 7: copy the desk. "]);
        assert!(book.covers("Standing order 7: copy the desk."));
        assert!(book.covers("\tStanding order 7: copy the desk."));
        assert!(!book.covers("Standing order 8: copy the desk."));
    }
}
