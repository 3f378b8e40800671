//! What an ask cut short leaves behind: its writes are its own commit,
//! marked interrupted — never the operator's.
//!
//! An ask writes `.hearth/asks/<id>.json` before its question line, and
//! again after every tool call that ran, naming the files its tools wrote
//! and what it has spent. Its commit removes it, under the commit lock. One
//! still there whose ask is gone — Ctrl-C, SIGTERM, a closed terminal, a
//! `kill -9` — is finished by whoever finds it first: the ask's own signal
//! handler, the supervisor's next look for hand edits (which runs only while
//! no ask does), or the next `hearth ask` (when its process is gone). To
//! finish one is to append its answer line, marked interrupted, and make
//! one commit `ask (interrupted): <question>` by hearth of those files,
//! the session log and the brake log. Before, the supervisor's next look
//! committed them all as `edit: … (by hand)`, authored by the operator.

use std::path::PathBuf;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::atomic::WriteError;
use crate::conversation::sessions::{self, Line};
use crate::home::layout::rel;
use crate::home::lock::CommitLock;
use crate::home::Home;
use crate::repo::{Identity, Repo};

/// One ask in progress.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Journal {
    /// The ask's id (its question line's).
    pub id: String,
    /// The `hearth ask` process.
    pub pid: u32,
    /// The question, for the commit's subject.
    pub question: String,
    /// What the ask's tools wrote so far, relative to the home.
    #[serde(default)]
    pub touched: Vec<String>,
    /// What it has spent so far: provider usage (input, output) and dollars.
    #[serde(default)]
    pub usage: (u64, u64),
    /// Dollars spent so far.
    #[serde(default)]
    pub cost_usd: f64,
    /// The provider asked (`offline`, `anthropic`…).
    #[serde(default)]
    pub provider: String,
    /// What the ask carried from outside so far (`provenance`): its
    /// commit says so, even when the ask was cut short.
    #[serde(default, skip_serializing_if = "crate::outside::Outside::is_empty")]
    pub outside: crate::outside::Outside,
}

impl crate::json_file::JsonFile for Journal {
    const VERSION: u32 = 1;
}

/// Where the journals of asks in progress are.
pub fn dir(home: &Home) -> PathBuf {
    home.path(rel::ASKS)
}

impl Journal {
    fn path(&self, home: &Home) -> PathBuf {
        dir(home).join(format!("{}.json", self.id))
    }

    /// Writes the journal, before anything else of the ask is written.
    pub fn begin(home: &Home, journal: Journal) -> Result<Journal, WriteError> {
        journal.save(home)?;
        Ok(journal)
    }

    fn save(&self, home: &Home) -> Result<(), WriteError> {
        crate::json_file::save(&self.path(home), self)
    }

    /// Names `rel` as written by the ask, before it is written; saved
    /// only when it is new.
    pub fn ahead(&mut self, home: &Home, rel: &str) -> Result<(), WriteError> {
        self.record(home, &[rel.to_string()], self.usage, self.cost_usd)
    }

    /// Adds what the ask has written (`touched`, merged into what the
    /// journal names) and what it has spent so far; saved only when that
    /// changed.
    pub fn record(
        &mut self,
        home: &Home,
        touched: &[String],
        usage: (u64, u64),
        cost_usd: f64,
    ) -> Result<(), WriteError> {
        let new: Vec<String> = touched
            .iter()
            .filter(|t| !self.touched.contains(t))
            .cloned()
            .collect();
        if new.is_empty() && self.usage == usage && self.cost_usd == cost_usd {
            return Ok(());
        }
        self.touched.extend(new);
        self.usage = usage;
        self.cost_usd = cost_usd;
        self.save(home)
    }

    /// Whether the ask is still its own to finish: its journal is there
    /// (a signal's handler, or another finder, removes it when it commits
    /// the ask as interrupted). Asked under the commit lock.
    pub fn is_open(&self, home: &Home) -> bool {
        self.path(home).exists()
    }

    /// The ask is committed: its journal goes (under the commit lock, so
    /// no one finishes it twice).
    pub fn end(&self, home: &Home) {
        let _ = std::fs::remove_file(self.path(home));
    }
}

/// The ask's record as its exchange goes: after each call that ran, what
/// the ask has written and spent, so a signal or a `kill -9` never leaves
/// its writes to be taken for the operator's.
pub struct Journaled<'a, 'j> {
    /// The home.
    pub home: &'a Home,
    /// The ask's journal (shared with the tools' write-ahead).
    pub journal: &'a std::cell::RefCell<&'j mut Journal>,
}

impl crate::exchange::door::Record for Journaled<'_, '_> {
    fn called(
        &mut self,
        outcome: &crate::exchange::outcome::Outcome,
        effects: &crate::tools::Effects,
    ) {
        let usage = (outcome.usage.input_tokens, outcome.usage.output_tokens);
        let mut journal = self.journal.borrow_mut();
        let recorded = if effects.outside.len() > journal.outside.len() {
            journal.outside = effects.outside.clone();
            journal.save(self.home)
        } else {
            Ok(())
        }
        .and_then(|()| journal.record(self.home, &effects.touched, usage, outcome.cost_usd));
        if let Err(e) = recorded {
            tracing::warn!("{e}");
        }
    }
}

/// Which asks to finish.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Whose {
    /// Every journal: the caller holds the ask lock alone, so no ask runs.
    All,
    /// Those whose process is gone (an ask starting while others run).
    Gone,
    /// This process's own (its signal handler).
    Mine,
}

/// The journals left by asks that did not finish, as `whose` says; one that
/// cannot be read is named and removed (its writes then wait for the next
/// look like any change, which is all that can be done for them).
pub fn left_behind(home: &Home, whose: Whose) -> Vec<Journal> {
    let Ok(entries) = std::fs::read_dir(dir(home)) else {
        return Vec::new();
    };
    let me = std::process::id();
    let mut found = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().is_none_or(|e| e != "json") {
            continue;
        }
        let journal = match crate::json_file::load::<Journal>(&path) {
            Ok(Some(journal)) => journal,
            Ok(None) => continue,
            Err(e) => {
                tracing::warn!("{e}; an ask's journal that cannot be read is removed");
                let _ = std::fs::remove_file(&path);
                continue;
            }
        };
        let take = match whose {
            Whose::All => true,
            Whose::Gone => journal.pid != me && !alive(journal.pid),
            Whose::Mine => journal.pid == me,
        };
        if take {
            found.push(journal);
        }
    }
    found.sort_by(|a, b| a.id.cmp(&b.id));
    found
}

fn alive(pid: u32) -> bool {
    crate::process::alive(pid)
}

/// Finishes the asks `whose` names that did not: for each, its answer
/// line marked interrupted (`why`) and its commit. Returns the commits'
/// subjects. The caller must not hold the commit lock.
pub fn finish(home: &Home, whose: Whose, why: &str, now: DateTime<Utc>) -> Vec<String> {
    let journals = left_behind(home, whose);
    if journals.is_empty() {
        return Vec::new();
    }
    let Ok(_lock) = CommitLock::acquire(home) else {
        return Vec::new();
    };
    let repo = match Repo::open(home.root()) {
        Ok(repo) => repo,
        Err(e) => {
            tracing::warn!("an interrupted ask's writes wait: {e}");
            return Vec::new();
        }
    };
    let mut done = Vec::new();
    for journal in journals {
        // Finished meanwhile (by its own commit, or by another finder).
        if !journal.path(home).exists() {
            continue;
        }
        match finish_one(home, &repo, &journal, why, now) {
            Ok(subject) => {
                journal.end(home);
                tracing::warn!("{subject}");
                done.push(subject);
            }
            Err(e) => tracing::warn!("the interrupted ask {} is left for later: {e}", journal.id),
        }
    }
    done
}

fn finish_one(
    home: &Home,
    repo: &Repo,
    journal: &Journal,
    why: &str,
    now: DateTime<Utc>,
) -> Result<String, Box<dyn std::error::Error>> {
    let answered = sessions::read(home)
        .iter()
        .any(|l| l.id == journal.id && l.kind == "answer");
    if !answered {
        sessions::append(
            home,
            &Line {
                v: sessions::VERSION,
                id: journal.id.clone(),
                time: now,
                kind: "answer".into(),
                complete: Some(false),
                interrupted: Some(why.to_string()),
                usage: Some(journal.usage),
                cost_usd: journal.cost_usd,
                provider: journal.provider.clone(),
                outside: journal.outside.clone(),
                ..Line::default()
            },
        )?;
    }
    let mut paths: Vec<&str> = vec![rel::SESSIONS];
    if home.path(rel::BRAKE_LOG).exists() {
        paths.push(rel::BRAKE_LOG);
    }
    paths.extend(journal.touched.iter().map(String::as_str));
    let subject = format!("ask (interrupted): {}", super::shorten(&journal.question));
    let mut message = format!(
        "{subject}\n\nThe ask was cut short ({why}); what it wrote until then is its own.\n"
    );
    super::outside::trailers(&mut message, &journal.outside);
    repo.commit(&paths, &Identity::hearth(), &message, now)?;
    Ok(subject)
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // fixtures, not state
mod tests {
    use super::*;

    fn journal(id: &str, pid: u32) -> Journal {
        Journal {
            outside: crate::outside::Outside::none(),
            id: id.into(),
            pid,
            question: "note this".into(),
            touched: Vec::new(),
            usage: (0, 0),
            cost_usd: 0.0,
            provider: "offline".into(),
        }
    }

    #[test]
    fn a_journal_is_left_behind_only_by_an_ask_that_is_gone() {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::at(dir.path()).unwrap();
        let mine = Journal::begin(&home, journal("a", std::process::id())).unwrap();
        // A pid no process has (above the kernel's pid_max).
        Journal::begin(&home, journal("b", 4_194_305)).unwrap();
        let ids = |w| {
            left_behind(&home, w)
                .into_iter()
                .map(|j| j.id)
                .collect::<Vec<_>>()
        };
        assert_eq!(ids(Whose::Gone), ["b"]);
        assert_eq!(ids(Whose::Mine), ["a"]);
        assert_eq!(ids(Whose::All), ["a", "b"]);
        mine.end(&home);
        assert_eq!(ids(Whose::All), ["b"]);
    }

    #[test]
    fn a_journal_that_cannot_be_read_is_removed_not_stuck_on() {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::at(dir.path()).unwrap();
        std::fs::create_dir_all(super::dir(&home)).unwrap();
        std::fs::write(super::dir(&home).join("x.json"), "{torn").unwrap();
        assert!(left_behind(&home, Whose::All).is_empty());
        assert!(!super::dir(&home).join("x.json").exists());
    }
}
