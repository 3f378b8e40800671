//! `state/proposals.json`: every proposal and what became of it. The book
//! is a record, not the truth: the truth is the refs
//! (`refs/hearth/proposals/N-slug`, whose commits carry their title, why,
//! maker and sources as trailers) and `main`'s history (`proposal N
//! accepted|rejected|needs review`). A book that is lost, emptied or broken
//! is rebuilt from them ([`reconcile`]), and numbers are never reused.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::{Proposal, State, REF_PREFIX};
use crate::home::layout::rel;
use crate::home::Home;
use crate::json_file::{self, JsonFile, JsonFileError};
use crate::repo::{trailers, Identity, Repo};

/// The book of proposals, oldest first.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Book {
    /// Every proposal.
    #[serde(default)]
    pub proposals: Vec<Proposal>,
}

impl JsonFile for Book {
    const VERSION: u32 = 1;
}

impl Book {
    /// The book (empty when there is none yet).
    pub fn load(home: &Home) -> Result<Book, JsonFileError> {
        Ok(json_file::load(&home.path(rel::PROPOSALS))?.unwrap_or_default())
    }

    /// Writes it atomically.
    pub fn save(&self, home: &Home) -> Result<(), crate::atomic::WriteError> {
        json_file::save(&home.path(rel::PROPOSALS), self)
    }

    /// Proposal `n`.
    pub fn get(&self, n: u64) -> Option<&Proposal> {
        self.proposals.iter().find(|p| p.n == n)
    }

    /// The number the next proposal takes.
    pub fn next_number(&self) -> u64 {
        self.proposals.iter().map(|p| p.n).max().unwrap_or(0) + 1
    }

    /// Adds `proposal`, or replaces the one with its number.
    pub fn put(&mut self, proposal: Proposal) {
        match self.proposals.iter_mut().find(|p| p.n == proposal.n) {
            Some(p) => *p = proposal,
            None => self.proposals.push(proposal),
        }
    }
}

/// How far back `main`'s history is read for decisions.
const HISTORY_LIMIT: usize = 100_000;

/// The number in a proposal ref's name (`refs/hearth/proposals/12-slug`).
pub fn ref_number(name: &str) -> Option<u64> {
    name.strip_prefix(REF_PREFIX)?
        .split('-')
        .next()?
        .parse()
        .ok()
}

/// The decisions `main`'s history records, by proposal: the newest for
/// each (status, when, the subject's title).
fn decisions(repo: &Repo) -> BTreeMap<u64, (State, chrono::DateTime<chrono::Utc>, String)> {
    let mut out = BTreeMap::new();
    for (message, time) in repo.subjects_starting("proposal ", HISTORY_LIMIT) {
        let subject = message.lines().next().unwrap_or("");
        let Some(rest) = subject.strip_prefix("proposal ") else {
            continue;
        };
        let (number, rest) = rest.split_once(' ').unwrap_or((rest, ""));
        let Ok(n) = number.parse::<u64>() else {
            continue;
        };
        let (status, title) = if let Some(t) = rest.strip_prefix("accepted: ") {
            (State::Accepted, t)
        } else if let Some(t) = rest.strip_prefix("rejected: ") {
            (State::Rejected, t)
        } else if rest.starts_with("needs review") {
            (State::NeedsReview, "")
        } else {
            continue;
        };
        // Newest first: the first seen for a number is its decision.
        out.entry(n).or_insert((status, time, title.to_string()));
    }
    out
}

/// The highest proposal number the refs and `main`'s history know.
pub fn highest_known(repo: &Repo) -> u64 {
    let refs = repo
        .refs_under(REF_PREFIX)
        .iter()
        .filter_map(|r| ref_number(&r.name))
        .max()
        .unwrap_or(0);
    refs.max(decisions(repo).keys().copied().max().unwrap_or(0))
}

/// A trailer's value in a commit message.
/// `book` with every proposal the refs and history know that it does not
/// (each rebuilt from its ref's commit, or from the decision's commit when
/// its ref is gone), and the numbers added. Entries the book has stand.
pub fn reconcile(mut book: Book, repo: &Repo) -> (Book, Vec<u64>) {
    let decided = decisions(repo);
    let mut added = Vec::new();
    for r in repo.refs_under(REF_PREFIX) {
        let Some(n) = ref_number(&r.name) else {
            continue;
        };
        if book.get(n).is_some() {
            continue;
        }
        let subject = r.message.lines().next().unwrap_or("");
        let title = subject
            .split_once(": ")
            .map_or(subject, |(_, t)| t)
            .to_string();
        let why: Vec<&str> = r
            .message
            .lines()
            .skip(1)
            .filter(|l| !trailers::is_trailer(l))
            .collect();
        let decision = decided.get(&n);
        book.put(Proposal {
            n,
            branch: r.name.clone(),
            title,
            why: why.join("\n").trim().to_string(),
            by: trailers::value(&r.message, trailers::BY).map_or("hearth".into(), str::to_string),
            kind: trailers::value(&r.message, trailers::KIND).map_or(String::new(), str::to_string),
            base: r.parent.clone(),
            commit: r.commit.clone(),
            files: r.files.clone(),
            outside: trailers::outside(&r.message),
            created: r.time,
            status: decision.map_or(State::Open, |d| d.0),
            decided: decision.filter(|d| d.0 != State::NeedsReview).map(|d| d.1),
            reason: None,
            conflicts: Vec::new(),
        });
        added.push(n);
    }
    // Rejected ones lose their refs: history alone remembers them.
    for (n, (status, time, title)) in decided {
        if book.get(n).is_some() {
            continue;
        }
        book.put(Proposal {
            n,
            branch: String::new(),
            title,
            why: "(rebuilt from main's history: its branch is gone)".into(),
            by: String::new(),
            kind: String::new(),
            base: String::new(),
            commit: String::new(),
            files: Vec::new(),
            outside: crate::outside::Outside::none(),
            created: time,
            status,
            decided: Some(time),
            reason: None,
            conflicts: Vec::new(),
        });
        added.push(n);
    }
    book.proposals.sort_by_key(|p| p.n);
    (book, added)
}

/// The book, rebuilt from the refs and `main`'s history when it is broken
/// or misses a proposal a ref holds (why, when it was); read only.
pub(super) fn load_book(home: &Home, repo: &Repo) -> (Book, Option<String>) {
    let (book, broken) = match Book::load(home) {
        Ok(book) => (book, None),
        Err(e) => (Book::default(), Some(e.to_string())),
    };
    let missing: Vec<u64> = repo
        .ref_names_under(REF_PREFIX)
        .iter()
        .filter_map(|name| ref_number(name))
        .filter(|n| book.get(*n).is_none())
        .collect();
    if broken.is_none() && missing.is_empty() {
        return (book, None);
    }
    let (book, added) = reconcile(book, repo);
    let why = broken.unwrap_or_else(|| {
        format!(
            "{} has no entry for {} that refs/hearth/proposals/ holds",
            crate::home::layout::rel::PROPOSALS,
            missing
                .iter()
                .map(|n| format!("proposal {n}"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    });
    let rebuilt = added
        .iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join(", ");
    (
        book,
        Some(format!(
            "{why}; rebuilt from the refs and main's history (proposals {rebuilt})"
        )),
    )
}

/// Rebuilds a lost or broken book and commits it as hearth's, so it is
/// never committed as the operator's edit; what it did. The caller holds
/// the commit lock (the supervisor, before it commits hand edits).
pub fn heal_book(home: &Home, repo: &Repo, now: DateTime<Utc>) -> Option<String> {
    let (book, Some(why)) = load_book(home, repo) else {
        return None;
    };
    let book_rel = crate::home::layout::rel::PROPOSALS;
    let kept = home.path(book_rel);
    if kept.exists() {
        // What was there stays readable beside it.
        let aside = home.path(&format!("{book_rel}.broken"));
        let _ = std::fs::copy(&kept, aside);
    }
    if let Err(e) = book.save(home) {
        return Some(format!("{why}, but it could not be saved: {e}"));
    }
    let message = format!("proposals: {book_rel} rebuilt\n\n{why}\n");
    match repo.commit(&[book_rel], &Identity::hearth(), &message, now) {
        Ok(_) => Some(why),
        Err(e) => Some(format!("{why}, but not committed: {e}")),
    }
}
