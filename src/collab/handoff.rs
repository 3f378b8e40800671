//! A handoff (DESIGN 14): work one agent hands to a peer, as the next
//! round of a collaboration. The sender writes it into its own `outbox/`
//! (each home is the only writer of itself); the receiver's supervisor
//! takes it from there into its own `inbox/`.
//!
//! Here: deciding a handoff over plain values ([`plan`]), and the file it
//! travels as ([`Handoff::render`], [`Handoff::parse`]): front matter that
//! carries the collaboration as the sender knows it, and the message.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{record, valid_slug, Collaboration, Round, Stage};
use crate::config::collab::{CollaborationsConfig, Peers};

/// What the agent asked for.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HandoffAsk {
    /// The peer to hand to.
    pub to: String,
    /// The message.
    pub message: String,
    /// An existing collaboration's slug.
    #[serde(default)]
    pub collaboration: Option<String>,
    /// A new collaboration's name.
    #[serde(default)]
    pub name: Option<String>,
    /// A new collaboration's working directory (from the allow-list).
    #[serde(default)]
    pub workdir: Option<String>,
    /// The memory that founds a new collaboration.
    #[serde(default)]
    pub founded_by: Option<String>,
}

/// A handoff as it travels: the collaboration after this round, and the
/// message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Handoff {
    /// Always `handoff`.
    pub kind: String,
    /// The sender.
    pub from: String,
    /// The receiver.
    pub to: String,
    /// This round's number.
    pub round: u32,
    /// When it was sent.
    pub created: DateTime<Utc>,
    /// The collaboration, as the sender's record holds it with this round.
    pub collaboration: Collaboration,
    /// For a status notice (`kind: notice`) rather than a handoff: what
    /// happened (`complete`, `max-rounds`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notice: Option<String>,
    /// What the sender says.
    #[serde(skip)]
    pub message: String,
}

/// Why a handoff was refused: said to the model as the tool's error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HandoffRefusal {
    /// No such peer.
    #[error("{0:?} is not a peer of this agent; its peers are: {1}")]
    UnknownPeer(String, String),
    /// Neither or both of `collaboration` and `name`.
    #[error("give either `collaboration` (an existing one's slug) or `name` (to found a new one)")]
    Which,
    /// No record for the slug.
    #[error("there is no collaboration {0:?} here (read collaborations/ for the ones there are)")]
    NoSuchCollaboration(String),
    /// Not active.
    #[error("collaboration {slug} is {status}: no handoff until the operator reopens it")]
    NotActive {
        /// The collaboration.
        slug: String,
        /// Its status.
        status: &'static str,
    },
    /// A new collaboration whose slug is taken.
    #[error("a collaboration {0:?} exists already: hand off in it with `collaboration`")]
    Exists(String),
    /// A workdir outside the allow-list.
    #[error("{0} is not one of the operator's [collaborations] workdirs ({1}); leave `workdir` out to work in the home")]
    Workdir(String, String),
    /// `[collaborations] max_rounds` reached.
    #[error("collaboration {slug} has had its {max} rounds ([collaborations] max_rounds); the operator has been told")]
    MaxRounds {
        /// The collaboration.
        slug: String,
        /// The limit.
        max: u32,
    },
    /// The same handoff text as the round before, or as this agent's own
    /// previous round: two agents handing off without progress.
    #[error("this is the same message as round {round} of {slug}: two agents handing the same text back and forth make no progress; hand off when something changed")]
    Repeat {
        /// The collaboration.
        slug: String,
        /// The round it repeats.
        round: u32,
    },
    /// An empty message.
    #[error("the message is empty")]
    Empty,
    /// A bad slug or name.
    #[error("{0}")]
    Bad(String),
}

/// What the sender's tick does: write `record` and post `handoff`.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// The collaboration with the new round.
    pub record: Collaboration,
    /// The file to post.
    pub handoff: Handoff,
}

/// Decides a handoff. `existing` is this home's record of the named
/// collaboration (when `collaboration` was given); `exists` says whether
/// a record for a new name's slug is already here.
pub fn plan(
    me: &str,
    peers: &Peers,
    settings: &CollaborationsConfig,
    request: &HandoffAsk,
    existing: Option<Collaboration>,
    exists: impl Fn(&str) -> bool,
    now: DateTime<Utc>,
) -> Result<Plan, HandoffRefusal> {
    if !peers.contains_key(&request.to) {
        let names: Vec<&str> = peers.keys().map(String::as_str).collect();
        let names = if names.is_empty() {
            "none ([peers] in hearth.toml is empty)".to_string()
        } else {
            names.join(", ")
        };
        return Err(HandoffRefusal::UnknownPeer(request.to.clone(), names));
    }
    let message = request.message.trim();
    if message.is_empty() {
        return Err(HandoffRefusal::Empty);
    }
    let mut record = match (&request.collaboration, &request.name) {
        (Some(slug), None) => {
            let c = existing.ok_or_else(|| HandoffRefusal::NoSuchCollaboration(slug.clone()))?;
            if c.status != Stage::Active {
                return Err(HandoffRefusal::NotActive {
                    slug: c.slug,
                    status: c.status.as_str(),
                });
            }
            c
        }
        (None, Some(name)) => {
            let slug = super::slug_for(name);
            if !valid_slug(&slug) || exists(&slug) {
                return Err(HandoffRefusal::Exists(slug));
            }
            let workdir = match &request.workdir {
                None => None,
                Some(dir) => {
                    let path = std::path::Path::new(dir);
                    if !path.is_absolute() || !settings.allows(path) {
                        let allowed: Vec<String> = settings
                            .workdirs
                            .iter()
                            .map(|w| w.display().to_string())
                            .collect();
                        let allowed = if allowed.is_empty() {
                            "none".to_string()
                        } else {
                            allowed.join(", ")
                        };
                        return Err(HandoffRefusal::Workdir(dir.clone(), allowed));
                    }
                    Some(dir.clone())
                }
            };
            Collaboration::found(
                &slug,
                name,
                workdir,
                vec![me.to_string()],
                request.founded_by.clone(),
                me,
                now,
            )
            .map_err(|e| HandoffRefusal::Bad(e.to_string()))?
        }
        _ => return Err(HandoffRefusal::Which),
    };
    if record.last_round() >= settings.max_rounds {
        return Err(HandoffRefusal::MaxRounds {
            slug: record.slug,
            max: settings.max_rounds,
        });
    }
    let summary = first_line(message);
    let digest = digest(message);
    if let Some(echoed) = repeats(&record, me, &digest) {
        return Err(HandoffRefusal::Repeat {
            slug: record.slug,
            round: echoed,
        });
    }
    if !record.participants.contains(&request.to) {
        record.participants.push(request.to.clone());
    }
    let n = record.last_round() + 1;
    record.rounds.push(Round {
        n,
        from: me.to_string(),
        to: request.to.clone(),
        at: now,
        summary,
        digest: Some(digest),
        sent_in: None,
        taken_in: None,
    });
    let handoff = Handoff {
        kind: "handoff".into(),
        from: me.to_string(),
        to: request.to.clone(),
        round: n,
        created: now,
        collaboration: record.clone(),
        notice: None,
        message: message.to_string(),
    };
    Ok(Plan { record, handoff })
}

/// The fingerprint a round keeps of its message: the text with case and
/// spacing evened out, hashed (16 hex digits). Digits count: "version 2"
/// after "version 1" is progress.
pub fn digest(message: &str) -> String {
    let even = message
        .to_lowercase()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    format!("{:016x}", crate::stamp::fnv1a(even.as_bytes()))
}

/// The round a handoff from `me` with `digest` would repeat: the last
/// round (an echo of what the peer just said), or `me`'s own previous one
/// (the same text again, whatever came between).
fn repeats(record: &Collaboration, me: &str, digest: &str) -> Option<u32> {
    let last = record.rounds.last()?;
    let own = record.rounds.iter().rev().find(|r| r.from == me);
    [Some(last), own]
        .into_iter()
        .flatten()
        .find(|r| r.digest.as_deref() == Some(digest))
        .map(|r| r.n)
}

/// A status notice from `me` to `peer` about `c`: `what` happened.
pub fn notice(
    me: &str,
    peer: &str,
    c: &Collaboration,
    what: &str,
    message: String,
    now: DateTime<Utc>,
) -> Handoff {
    Handoff {
        kind: "notice".into(),
        from: me.to_string(),
        to: peer.to_string(),
        round: c.last_round(),
        created: now,
        collaboration: c.clone(),
        notice: Some(what.to_string()),
        message,
    }
}

/// The slug a memory's `closes:` front matter names, if any.
pub fn closes(text: &str) -> Option<String> {
    let yaml = crate::memory::front_matter::split(text).ok()?.yaml?;
    let doc = yaml_rust2::YamlLoader::load_from_str(yaml)
        .ok()?
        .into_iter()
        .next()?;
    let slug = doc["closes"].as_str()?.trim().to_string();
    valid_slug(&slug).then_some(slug)
}

/// A message's first line, at most 120 characters.
pub fn first_line(message: &str) -> String {
    let line = message.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    let line = line.trim();
    match line.char_indices().nth(120) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line.to_string(),
    }
}

impl Handoff {
    /// The file it travels as.
    pub fn render(&self) -> String {
        let Value::Object(fields) = serde_json::to_value(self).expect("a handoff serialises")
        else {
            unreachable!("a struct serialises to an object")
        };
        let mut out = String::from("---\n");
        for (key, value) in &fields {
            out.push_str(&format!("{key}: {value}\n"));
        }
        out.push_str("---\n");
        out.push_str(&self.message);
        out.push('\n');
        out
    }

    /// Reads a handoff file back.
    pub fn parse(text: &str) -> Result<Handoff, record::ParseError> {
        let split = crate::memory::front_matter::split(text).map_err(|p| record::ParseError {
            line: Some(p.line),
            message: p.message,
        })?;
        let yaml = split
            .yaml
            .ok_or_else(|| record::ParseError::whole("no front matter"))?;
        let mut handoff: Handoff = record::parse_yaml(yaml)?;
        if handoff.kind != "handoff" && handoff.kind != "notice" {
            return Err(record::ParseError::whole(format!(
                "kind is {:?}, not \"handoff\" or \"notice\"",
                handoff.kind
            )));
        }
        // It comes from another home: what becomes a path here is checked.
        let slug = &handoff.collaboration.slug;
        if !valid_slug(slug) {
            return Err(record::ParseError::whole(
                super::CollabError::BadSlug(slug.clone()).to_string(),
            ));
        }
        handoff.message = split.body.trim_end().to_string();
        Ok(handoff)
    }

    /// The header the receiving model reads above the message: the
    /// collaboration, this round, and the rounds before it.
    pub fn header(&self, max_rounds: u32) -> String {
        let c = &self.collaboration;
        let mut out = format!(
            "Handoff from {} — collaboration \"{}\" ({}), {}, round {} of at most {}.\n\
             Participants: {}.\nWorking directory: {}.\n",
            self.from,
            c.name,
            c.slug,
            c.status.as_str(),
            self.round,
            max_rounds,
            c.participants.join(", "),
            c.workdir.as_deref().unwrap_or("your home")
        );
        if let Some(f) = &c.founded_by {
            out.push_str(&format!(
                "Founded by: {f} (in {}'s home).\n",
                c.events
                    .first()
                    .map_or(self.from.as_str(), |e| e.by.as_str())
            ));
        }
        let earlier: Vec<&Round> = c.rounds.iter().filter(|r| r.n < self.round).collect();
        if !earlier.is_empty() {
            out.push_str("Previous rounds:\n");
            for r in earlier {
                out.push_str(&format!(
                    "  {}. {} → {}: {}\n",
                    r.n, r.from, r.to, r.summary
                ));
            }
        }
        out.push_str(&format!(
            "To answer in this collaboration, call `handoff` with collaboration = \"{}\".",
            c.slug
        ));
        out
    }
}

#[cfg(test)]
#[path = "handoff_tests.rs"]
mod tests;
