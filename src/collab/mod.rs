//! Collaborations (DESIGN 14): work that several agents on one host do
//! together over rounds, kept as a record of its own — one markdown file
//! per collaboration under `collaborations/`, with its slug, name, status,
//! working directory, participants, the memory that founded it, its rounds
//! and the audit of its status changes — not as an implicit series of
//! messages that share a topic.
//!
//! Only hearth and the operator write these records; the agent reads them
//! (and recall indexes them). Decisions here are pure functions over the
//! record; reading and writing the files is [`store`]; [`commits`] looks,
//! read only, at peers' records and the history for `collab show`.

pub mod commits;
pub mod handoff;
pub mod intake;
pub mod intake_error;
pub mod operator;
pub mod peer_file;
pub mod record;
pub mod store;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// Where a collaboration stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Stage {
    /// Rounds go on.
    Active,
    /// Held by the operator: no handoff in it until it is reopened.
    Paused,
    /// Done: a memory with `closes: SLUG`, or the operator, said so.
    Complete,
    /// Given up.
    Abandoned,
}

impl Stage {
    /// The word the record and the CLI use.
    pub fn as_str(self) -> &'static str {
        match self {
            Stage::Active => "active",
            Stage::Paused => "paused",
            Stage::Complete => "complete",
            Stage::Abandoned => "abandoned",
        }
    }

    /// Parses a status word.
    pub fn parse(word: &str) -> Option<Stage> {
        [
            Stage::Active,
            Stage::Paused,
            Stage::Complete,
            Stage::Abandoned,
        ]
        .into_iter()
        .find(|s| s.as_str() == word)
    }
}

/// One handoff: the next round of a collaboration.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Round {
    /// 1, 2, … in order.
    pub n: u32,
    /// The agent (peer name) that handed off.
    pub from: String,
    /// The agent it handed to.
    pub to: String,
    /// When.
    pub at: DateTime<Utc>,
    /// The message's first line.
    pub summary: String,
    /// A fingerprint of the whole message (see [`handoff::digest`]): how a
    /// handoff that repeats an earlier one is recognised.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
    /// The sender's commit that holds the handoff, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sent_in: Option<String>,
    /// The receiver's commit that took it in, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub taken_in: Option<String>,
}

/// One status change, for the audit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Transition {
    /// When.
    pub at: DateTime<Utc>,
    /// Who: `operator`, an agent's name, or `hearth`.
    pub by: String,
    /// What: `new`, `rename`, `pause`, `complete`, `abandon`, `reopen`.
    pub what: String,
    /// Why or what changed, in a few words.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub note: String,
}

/// A collaboration, as its record holds it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Collaboration {
    /// Its name in paths and commands: lowercase letters, digits, `-`.
    pub slug: String,
    /// What people call it.
    pub name: String,
    /// Where it stands.
    pub status: Stage,
    /// Where its tools run, from `[collaborations] workdirs`; none: the
    /// home.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workdir: Option<String>,
    /// The agents (peer names, this home's own among them) taking part.
    pub participants: Vec<String>,
    /// The memory that founded it (a path in the founder's home).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub founded_by: Option<String>,
    /// Its rounds, in order.
    #[serde(default)]
    pub rounds: Vec<Round>,
    /// Its status changes, in order.
    #[serde(default)]
    pub events: Vec<Transition>,
}

/// Why a change to a collaboration was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CollabError {
    /// Not a slug.
    #[error("{0:?} is not a collaboration slug: use lowercase letters, digits and single dashes (e.g. \"design-x\"), at most 64 characters")]
    BadSlug(String),
    /// The change does not apply to the status it finds.
    #[error("collaboration {slug} is {status}: it cannot be {verb}")]
    Transition {
        /// The collaboration.
        slug: String,
        /// Its status.
        status: &'static str,
        /// The change refused, as a past participle ("paused").
        verb: &'static str,
    },
    /// An empty name.
    #[error("a collaboration needs a name")]
    EmptyName,
}

/// Whether `slug` is a usable slug (the rule of peers' names too).
pub fn valid_slug(slug: &str) -> bool {
    crate::config::collab::valid_name(slug)
}

/// This agent's name among its peers: its home directory's name (the
/// NAME of a `hearth@NAME` instance), made a valid name.
pub fn own_name(home: &crate::home::Home) -> String {
    let dir = home
        .root()
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    slug_for(&dir)
}

/// The slug a name suggests: "Design X, v2" → "design-x-v2".
pub fn slug_for(name: &str) -> String {
    let slug = crate::config::collab::name_for(name);
    if slug.is_empty() {
        "collaboration".into()
    } else {
        slug
    }
}

/// A status change the operator (or a `closes:` memory) asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// active → paused.
    Pause,
    /// active or paused → complete.
    Complete,
    /// active or paused → abandoned.
    Abandon,
    /// paused, complete or abandoned → active.
    Reopen,
}

impl Change {
    /// The word of the CLI and the audit.
    pub fn as_str(self) -> &'static str {
        match self {
            Change::Pause => "pause",
            Change::Complete => "complete",
            Change::Abandon => "abandon",
            Change::Reopen => "reopen",
        }
    }

    fn participle(self) -> &'static str {
        match self {
            Change::Pause => "paused",
            Change::Complete => "completed",
            Change::Abandon => "abandoned",
            Change::Reopen => "reopened",
        }
    }

    fn target(self) -> Stage {
        match self {
            Change::Pause => Stage::Paused,
            Change::Complete => Stage::Complete,
            Change::Abandon => Stage::Abandoned,
            Change::Reopen => Stage::Active,
        }
    }

    fn applies_to(self, status: Stage) -> bool {
        match self {
            Change::Pause => status == Stage::Active,
            Change::Complete | Change::Abandon => {
                matches!(status, Stage::Active | Stage::Paused)
            }
            Change::Reopen => status != Stage::Active,
        }
    }
}

impl Collaboration {
    /// A new, active collaboration founded here by `by`.
    pub fn found(
        slug: &str,
        name: &str,
        workdir: Option<String>,
        participants: Vec<String>,
        founded_by: Option<String>,
        by: &str,
        now: DateTime<Utc>,
    ) -> Result<Collaboration, CollabError> {
        if !valid_slug(slug) {
            return Err(CollabError::BadSlug(slug.to_string()));
        }
        let name = name.trim();
        if name.is_empty() {
            return Err(CollabError::EmptyName);
        }
        Ok(Collaboration {
            slug: slug.to_string(),
            name: name.to_string(),
            status: Stage::Active,
            workdir,
            participants,
            founded_by,
            rounds: Vec::new(),
            events: vec![Transition {
                at: now,
                by: by.to_string(),
                what: "new".into(),
                note: String::new(),
            }],
        })
    }

    /// Fills in what this record does not know of its rounds from another
    /// record of the same collaboration (a peer's): the commits on each
    /// side, the digest. What is known here stays.
    pub fn learn(&mut self, other: &[Round]) {
        for mine in &mut self.rounds {
            let Some(theirs) = other
                .iter()
                .find(|r| r.n == mine.n && r.from == mine.from && r.to == mine.to)
            else {
                continue;
            };
            for (field, known) in [
                (&mut mine.sent_in, &theirs.sent_in),
                (&mut mine.taken_in, &theirs.taken_in),
                (&mut mine.digest, &theirs.digest),
            ] {
                if field.is_none() {
                    field.clone_from(known);
                }
            }
        }
    }

    /// Applies `change`, recording who made it and why.
    pub fn change(
        &mut self,
        change: Change,
        by: &str,
        note: &str,
        now: DateTime<Utc>,
    ) -> Result<(), CollabError> {
        if !change.applies_to(self.status) {
            return Err(CollabError::Transition {
                slug: self.slug.clone(),
                status: self.status.as_str(),
                verb: change.participle(),
            });
        }
        self.status = change.target();
        self.events.push(Transition {
            at: now,
            by: by.to_string(),
            what: change.as_str().into(),
            note: note.trim().to_string(),
        });
        Ok(())
    }

    /// Renames it (the slug, its file's name, stays).
    pub fn rename(&mut self, name: &str, by: &str, now: DateTime<Utc>) -> Result<(), CollabError> {
        let name = name.trim();
        if name.is_empty() {
            return Err(CollabError::EmptyName);
        }
        let note = format!("{} → {name}", self.name);
        self.name = name.to_string();
        self.events.push(Transition {
            at: now,
            by: by.to_string(),
            what: "rename".into(),
            note,
        });
        Ok(())
    }

    /// Its last round's number (0 before the first). A record can miss
    /// rounds between two participants it was not told of by them, so
    /// this, not the count, numbers the next one.
    pub fn last_round(&self) -> u32 {
        self.rounds.iter().map(|r| r.n).max().unwrap_or(0)
    }

    /// When it last changed: its last round or status change.
    pub fn last_activity(&self) -> Option<DateTime<Utc>> {
        let round = self.rounds.last().map(|r| r.at);
        let event = self.events.last().map(|e| e.at);
        round.max(event)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(min: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_800_000_000 + min * 60, 0).unwrap()
    }

    fn design() -> Collaboration {
        Collaboration::found(
            "design-x",
            "Design X",
            Some("/srv/w1".into()),
            vec!["alice".into(), "bob".into()],
            Some("memory/design-x.md".into()),
            "operator",
            at(0),
        )
        .unwrap()
    }

    #[test]
    fn slugs_are_checked_and_suggested() {
        assert!(valid_slug("design-x"));
        assert!(valid_slug("v2"));
        for bad in ["", "Design", "a--b", "-a", "a-", "a b", "../x", "a_b"] {
            assert!(!valid_slug(bad), "{bad:?}");
        }
        assert_eq!(slug_for("Design X, v2"), "design-x-v2");
        assert_eq!(slug_for("  ¿Qué?  "), "qu");
        assert_eq!(slug_for("!!!"), "collaboration");
        assert!(valid_slug(&slug_for(&"long name ".repeat(20))));
    }

    #[test]
    fn status_changes_follow_the_lifecycle_and_are_audited() {
        let mut c = design();
        c.change(Change::Pause, "operator", "on hold", at(1))
            .unwrap();
        assert_eq!(c.status, Stage::Paused);
        let err = c.change(Change::Pause, "operator", "", at(2)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "collaboration design-x is paused: it cannot be paused"
        );
        c.change(Change::Reopen, "operator", "", at(3)).unwrap();
        c.change(Change::Complete, "alice", "closes: memory/x.md", at(4))
            .unwrap();
        assert!(c.change(Change::Abandon, "operator", "", at(5)).is_err());
        c.change(Change::Reopen, "operator", "", at(6)).unwrap();
        c.change(Change::Abandon, "operator", "", at(7)).unwrap();
        let whats: Vec<&str> = c.events.iter().map(|e| e.what.as_str()).collect();
        assert_eq!(
            whats,
            ["new", "pause", "reopen", "complete", "reopen", "abandon"]
        );
        assert_eq!(c.events[3].by, "alice");
        assert_eq!(c.last_activity(), Some(at(7)));
    }

    #[test]
    fn a_rename_keeps_the_slug_and_says_what_it_was() {
        let mut c = design();
        c.rename("Design X (final)", "operator", at(1)).unwrap();
        assert_eq!(c.slug, "design-x");
        assert_eq!(c.events[1].note, "Design X → Design X (final)");
        assert_eq!(
            c.rename("  ", "operator", at(2)),
            Err(CollabError::EmptyName)
        );
    }
}
