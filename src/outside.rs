//! What came from outside the operator, as one list of sources: the
//! exchange's taint, a shown tool result's origin, a line's commit
//! trailers, a proposal's or a request's grounds, the ledger's record.
//! Each source is a chain (`memory/notes/x.md:3 ← tick 212 ← inbox/a.md
//! (from news@example.com)`); the list is bounded (one line each, at most
//! [`MAX_CHAIN`] characters, at most [`MAX_SOURCES`] of them, the first
//! ones), deduplicated, and rendered one way. It is stored as a plain JSON
//! array of strings, so every record written before it reads the same, and
//! what is read is bounded again: a record that lists too much keeps its
//! first sources, never none. Empty means proven the operator's (or
//! hearth's, or a clean exchange's) — nothing else does.
//!
//! It sits at the bottom of the house because the history (`repo`), the
//! conversation and the books all carry it; the rules that fill it are
//! `provenance`'s.

use serde::{Deserialize, Serialize};

/// The longest a source chain is stored: enough for a few hops.
pub const MAX_CHAIN: usize = 400;

/// The most sources one list keeps: enough to show why, few enough for a
/// commit's trailers.
pub const MAX_SOURCES: usize = 12;

/// Where outside content came from, in the order it was met.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "Vec<String>", into = "Vec<String>")]
pub struct Outside(Vec<String>);

impl Outside {
    /// No outside content: proven.
    pub fn none() -> Outside {
        Outside(Vec::new())
    }

    /// One source.
    pub fn of(source: impl Into<String>) -> Outside {
        let mut outside = Outside::none();
        outside.add(source);
        outside
    }

    /// Adds a source, bounded, unless it is already there or the list is
    /// full.
    pub fn add(&mut self, source: impl Into<String>) {
        let source = bounded(&source.into());
        if !self.0.contains(&source) && self.0.len() < MAX_SOURCES {
            self.0.push(source);
        }
    }

    /// Adds every source of `other`.
    pub fn add_all<S: Into<String>>(&mut self, other: impl IntoIterator<Item = S>) {
        for source in other {
            self.add(source);
        }
    }

    /// Adds every source of `other` (a later hop carries an earlier one's).
    pub fn add_from(&mut self, other: &Outside) {
        self.add_all(other.iter());
    }

    /// Whether nothing came from outside.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// How many sources are kept.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// The first source, the one a chain of a later hop names.
    pub fn first(&self) -> Option<&str> {
        self.0.first().map(String::as_str)
    }

    /// The sources, in order.
    pub fn iter(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(String::as_str)
    }

    /// The sources as stored.
    pub fn as_slice(&self) -> &[String] {
        &self.0
    }
}

/// The one rendering in prose: `a; b; c`.
impl std::fmt::Display for Outside {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0.join("; "))
    }
}

/// Compared with a list of sources as written: `outside == ["inbox/a.md (from x)"]`.
impl<const N: usize> PartialEq<[&str; N]> for Outside {
    fn eq(&self, other: &[&str; N]) -> bool {
        self.0.iter().map(String::as_str).eq(other.iter().copied())
    }
}

impl From<Vec<String>> for Outside {
    fn from(sources: Vec<String>) -> Outside {
        sources.into_iter().collect()
    }
}

impl From<Outside> for Vec<String> {
    fn from(outside: Outside) -> Vec<String> {
        outside.0
    }
}

impl<S: Into<String>> FromIterator<S> for Outside {
    fn from_iter<I: IntoIterator<Item = S>>(sources: I) -> Outside {
        let mut outside = Outside::none();
        outside.add_all(sources);
        outside
    }
}

/// A source as it is stored: one line, at most [`MAX_CHAIN`] characters.
pub fn bounded(source: &str) -> String {
    let flat: String = source
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if flat.chars().count() <= MAX_CHAIN {
        return flat;
    }
    let cut: String = flat.chars().take(MAX_CHAIN - 1).collect();
    format!("{cut}…")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_are_kept_once_bounded_and_at_most_max() {
        let mut outside = Outside::none();
        assert!(outside.is_empty());
        outside.add("inbox/a.md (from x@y)\nHearth-Tick: 1");
        outside.add("inbox/a.md (from x@y) Hearth-Tick: 1");
        assert_eq!(outside.len(), 1, "{outside:?}");
        assert_eq!(
            outside.first(),
            Some("inbox/a.md (from x@y) Hearth-Tick: 1")
        );
        outside.add_all((0..40).map(|i| format!("s{i}")));
        assert_eq!(outside.len(), MAX_SOURCES);
        outside.add("x".repeat(MAX_CHAIN * 2));
        let long = Outside::of("y".repeat(MAX_CHAIN * 2));
        assert_eq!(long.first().unwrap().chars().count(), MAX_CHAIN);
        assert_eq!(
            Outside::from(vec!["a".into(), "b".into()]).to_string(),
            "a; b"
        );
    }

    #[test]
    fn it_is_a_plain_json_array_and_what_is_read_is_bounded_again() {
        let outside = Outside::from(vec!["a".to_string(), "b".to_string()]);
        let json = serde_json::to_string(&outside).unwrap();
        assert_eq!(json, r#"["a","b"]"#);
        let many: Vec<String> = (0..50).map(|i| format!("s{i}\n")).collect();
        let read: Outside = serde_json::from_str(&serde_json::to_string(&many).unwrap()).unwrap();
        assert_eq!(read.len(), MAX_SOURCES);
        assert_eq!(read.first(), Some("s0 "), "kept first, flattened");
    }
}
