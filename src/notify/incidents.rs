//! Incidents: one per cause, opened by the first flare of that cause and
//! resolved when the cause clears. `state/incidents.json` is hearth's own
//! record (committed, never rewound by a heal): which flares were seen,
//! which incidents are open, and which the operator acknowledged.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};

use super::{Notice, NoticeState, Severity};
use crate::home::Home;
use crate::json_file::{self, JsonFile, JsonFileError};
use crate::mailbox::cause::{Cause, Clearing};
use crate::mailbox::flares::{self, Which};

/// The file, relative to the home.
pub const FILE: &str = "state/incidents.json";

/// Flare names remembered as seen; older ones are forgotten (a flare's
/// name is its time, so an old one never comes again).
const SEEN_KEPT: usize = 4000;

/// A flare older than this when incidents are first kept is history, not
/// news: an upgraded home does not page its operator with last year.
const NEWS_AGE: Duration = Duration::hours(1);

/// One open cause.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Incident {
    /// Its cause key: the kind and the normalised subject.
    pub key: String,
    /// The flares' cause (`kind` on disk, as before).
    pub kind: Cause,
    /// The first flare's subject.
    pub title: String,
    /// How loud.
    pub severity: Severity,
    /// When the first flare came.
    pub opened: DateTime<Utc>,
    /// When the last came.
    pub last: DateTime<Utc>,
    /// Flares of this cause while it was open.
    pub count: u32,
    /// The last flares' ids (at most 20), for `hearth flares`.
    pub flares: Vec<String>,
    /// The operator said they know: no reminder, no repeat.
    #[serde(default)]
    pub acked: bool,
}

/// The record.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Incidents {
    /// Open incidents by key.
    #[serde(default)]
    pub open: BTreeMap<String, Incident>,
    /// Flare names already seen (opened or counted).
    #[serde(default)]
    pub seen: BTreeSet<String>,
    /// When the record was first kept: older flares are history.
    #[serde(default)]
    pub since: Option<DateTime<Utc>>,
    /// When the last proposal reminder was sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reminded: Option<DateTime<Utc>>,
}

impl JsonFile for Incidents {
    const VERSION: u32 = 1;
}

/// A flare's cause key: its kind and its subject with numbers, times and
/// quoted names taken out, so "tick 41 failed" and "tick 42 failed" are
/// one cause and "the model API refuses hearth's settings" another.
pub fn cause_key(kind: &Cause, subject: &str) -> String {
    let mut out = String::new();
    let mut last_hash = false;
    for c in subject.to_lowercase().chars() {
        if c.is_ascii_digit() {
            if !last_hash {
                out.push('#');
            }
            last_hash = true;
            continue;
        }
        last_hash = false;
        if c.is_whitespace() {
            if !out.ends_with(' ') {
                out.push(' ');
            }
        } else {
            out.push(c);
        }
    }
    format!("{kind}: {}", out.trim())
}

impl Incidents {
    /// The record (none yet: empty).
    pub fn load(home: &Home) -> Result<Incidents, JsonFileError> {
        Ok(json_file::load(&home.path(FILE))?.unwrap_or_default())
    }

    /// Writes it atomically.
    pub fn save(&self, home: &Home) -> Result<(), crate::atomic::WriteError> {
        json_file::save(&home.path(FILE), self)
    }

    /// A flare seen for the first time: a notice if it opens an incident,
    /// none if its cause is open already (it counts).
    pub fn on_flare(
        &mut self,
        home_name: &str,
        id: &str,
        kind: &Cause,
        subject: &str,
        body: &str,
        now: DateTime<Utc>,
    ) -> Option<Notice> {
        let key = cause_key(kind, subject);
        if let Some(open) = self.open.get_mut(&key) {
            open.count += 1;
            open.last = now;
            open.flares.push(id.to_string());
            if open.flares.len() > 20 {
                open.flares.remove(0);
            }
            return None;
        }
        let severity = kind.severity(subject);
        self.open.insert(
            key.clone(),
            Incident {
                key: key.clone(),
                kind: kind.clone(),
                title: subject.to_string(),
                severity,
                opened: now,
                last: now,
                count: 1,
                flares: vec![id.to_string()],
                acked: false,
            },
        );
        Some(Notice::new(
            home_name,
            &kind.to_string(),
            severity,
            subject.to_string(),
            format!("{body}\n\n(flare {id}; `hearth flares show {id}`)"),
            &key,
            NoticeState::Opened,
            now,
        ))
    }

    /// `clearing` observed (`why`): each open incident whose cause it
    /// clears is closed with one notice.
    pub fn resolve(
        &mut self,
        home_name: &str,
        clearing: Clearing<'_>,
        why: &str,
        now: DateTime<Utc>,
    ) -> Vec<Notice> {
        self.resolve_opened_before(home_name, clearing, now, why, now)
    }

    /// [`Incidents::resolve`], for the incidents opened before `before`
    /// only (a day's budget warning is not cleared by that day's ticks).
    pub fn resolve_opened_before(
        &mut self,
        home_name: &str,
        clearing: Clearing<'_>,
        before: DateTime<Utc>,
        why: &str,
        now: DateTime<Utc>,
    ) -> Vec<Notice> {
        let closing: Vec<String> = self
            .open
            .values()
            .filter(|i| i.kind.is_cleared_by(clearing) && i.opened <= before)
            .map(|i| i.key.clone())
            .collect();
        closing
            .into_iter()
            .filter_map(|key| self.open.remove(&key))
            .map(|i| {
                Notice::new(
                    home_name,
                    &i.kind.to_string(),
                    Severity::Info,
                    format!("resolved: {}", i.title),
                    format!(
                        "{why}. The incident opened at {} ({} flare{}) is closed.",
                        crate::clock::to_second(i.opened),
                        i.count,
                        if i.count == 1 { "" } else { "s" }
                    ),
                    &i.key,
                    NoticeState::Resolved,
                    now,
                )
            })
            .collect()
    }

    /// Marks acknowledged the open incident whose key starts with `prefix`,
    /// or that holds a flare whose id starts with it; the keys marked.
    pub fn ack(&mut self, prefix: &str) -> Vec<String> {
        let mut marked = Vec::new();
        for incident in self.open.values_mut() {
            if incident.key.starts_with(prefix)
                || incident.flares.iter().any(|f| f.starts_with(prefix))
            {
                incident.acked = true;
                marked.push(incident.key.clone());
            }
        }
        marked
    }

    /// What `[flares] exec` gets on stdin for the flare `name`: its
    /// incident's key and state (`opened` for the cause's first flare,
    /// `repeated` after), as one JSON object.
    pub fn about_flare(&self, name: &str) -> String {
        let id = name.trim_end_matches(".md");
        let incident = self
            .open
            .values()
            .find(|i| i.flares.iter().any(|f| f == id));
        serde_json::json!({
            "flare": id,
            "incident": incident.map(|i| i.key.as_str()),
            "kind": incident.map(|i| i.kind.to_string()),
            "severity": incident.map(|i| i.severity.as_str()),
            "state": match incident {
                Some(i) if i.flares.first().map(String::as_str) == Some(id) => "opened",
                Some(_) => "repeated",
                None => "unknown",
            },
            "count": incident.map(|i| i.count),
        })
        .to_string()
    }

    fn forget_old_names(&mut self) {
        while self.seen.len() > SEEN_KEPT {
            let first = self.seen.iter().next().cloned();
            match first {
                Some(name) => self.seen.remove(&name),
                None => break,
            };
        }
    }
}

/// The home's name, as notices show it.
pub fn home_name(home: &Home) -> String {
    home.root()
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| home.root().display().to_string())
}

/// Looks at the flares in `outbox/` that were not seen before: each opens
/// an incident (a notice) or counts in its open one. The record is saved;
/// the notices are the caller's to send.
pub fn notice_new_flares(home: &Home, now: DateTime<Utc>) -> Result<Vec<Notice>, NotifyStateError> {
    let mut record = Incidents::load(home)?;
    let mut names: Vec<String> = flares::names(home)
        .into_iter()
        .filter(|n| !record.seen.contains(n))
        .collect();
    if names.is_empty() {
        return Ok(Vec::new()); // nothing new: nothing written
    }
    let first_keeping = record.since.is_none();
    record.since.get_or_insert(now);
    names.sort();
    let name_of_home = home_name(home);
    let mut notices = Vec::new();
    for name in names {
        record.seen.insert(name.clone());
        let id = name.trim_end_matches(".md");
        let Ok((flare, body)) = flares::show(home, Which::Flares, id) else {
            continue;
        };
        let created = DateTime::parse_from_rfc3339(&flare.created)
            .map(|t| t.to_utc())
            .unwrap_or(now);
        if first_keeping && now - created > NEWS_AGE {
            continue; // history, from before incidents were kept
        }
        if let Some(notice) = record.on_flare(
            &name_of_home,
            id,
            &flare.cause(),
            &flare.subject,
            body.trim(),
            now,
        ) {
            notices.push(Notice {
                about: flare.about,
                ..notice
            });
        }
    }
    record.forget_old_names();
    record.save(home)?;
    Ok(notices)
}

/// Closes the open incidents whose cause `clearing` clears (`why`), and
/// saves the record; the notices are the caller's to send.
pub fn resolve(
    home: &Home,
    clearing: Clearing<'_>,
    why: &str,
    now: DateTime<Utc>,
) -> Result<Vec<Notice>, NotifyStateError> {
    resolve_opened_before(home, clearing, now, why, now)
}

/// [`resolve`], for the incidents opened before `before` only.
pub fn resolve_opened_before(
    home: &Home,
    clearing: Clearing<'_>,
    before: DateTime<Utc>,
    why: &str,
    now: DateTime<Utc>,
) -> Result<Vec<Notice>, NotifyStateError> {
    let mut record = Incidents::load(home)?;
    let closing = |i: &Incident| i.kind.is_cleared_by(clearing) && i.opened <= before;
    if !record.open.values().any(closing) {
        return Ok(Vec::new());
    }
    let notices = record.resolve_opened_before(&home_name(home), clearing, before, why, now);
    record.save(home)?;
    Ok(notices)
}

/// A proposal reminder, if one is due (`reminder::due`); when it is, the
/// time is recorded. With none waiting, the proposals' incident resolves.
pub fn remind(
    home: &Home,
    waiting: &[super::reminder::WaitingProposal],
    every: Duration,
    now: DateTime<Utc>,
) -> Result<Vec<Notice>, NotifyStateError> {
    let mut record = Incidents::load(home)?;
    if waiting.is_empty() {
        let clearing = Clearing::NoProposalWaits;
        if !record.open.values().any(|i| i.kind.is_cleared_by(clearing)) {
            return Ok(Vec::new());
        }
        let notices = record.resolve(&home_name(home), clearing, "no proposal waits", now);
        record.reminded = None;
        record.save(home)?;
        return Ok(notices);
    }
    let acked = record
        .open
        .values()
        .any(|i| i.kind == Cause::Proposal && i.acked);
    match super::reminder::due(&home_name(home), waiting, record.reminded, every, now) {
        Some(notice) if !acked => {
            record.reminded = Some(now);
            record.save(home)?;
            Ok(vec![notice])
        }
        _ => Ok(Vec::new()),
    }
}

/// Why the incidents could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum NotifyStateError {
    /// `state/incidents.json` (or the queue) does not parse.
    #[error(transparent)]
    Read(#[from] JsonFileError),
    /// It could not be written.
    #[error(transparent)]
    Write(#[from] crate::atomic::WriteError),
    /// The home's commit lock could not be taken.
    #[error("{0}")]
    Locked(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(minute: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_800_000_000 + minute * 60, 0).unwrap()
    }

    #[test]
    fn one_notice_per_cause_until_it_clears_then_one_resolved() {
        let mut r = Incidents::default();
        let opened = r.on_flare(
            "h",
            "f1",
            &Cause::Model,
            "tick 41: the key is refused",
            "b",
            t(0),
        );
        assert_eq!(opened.unwrap().state, NoticeState::Opened);
        assert!(r
            .on_flare(
                "h",
                "f2",
                &Cause::Model,
                "tick 42: the key is refused",
                "b",
                t(5)
            )
            .is_none());
        // Another cause alerts at once.
        assert!(r
            .on_flare("h", "f3", &Cause::Disk, "the disk is full", "b", t(6))
            .is_some());
        let resolved = r.resolve("h", Clearing::GoodTick, "a tick succeeded", t(60));
        assert_eq!(resolved.len(), 1);
        assert_eq!(resolved[0].state, NoticeState::Resolved);
        assert!(
            resolved[0].body.contains("(2 flares)"),
            "{}",
            resolved[0].body
        );
        assert!(
            r.resolve("h", Clearing::GoodTick, "again", t(61))
                .is_empty(),
            "once"
        );
        assert_eq!(r.open.len(), 1, "the disk's is still open");
        // The same cause after it cleared is a new incident.
        assert!(r
            .on_flare(
                "h",
                "f4",
                &Cause::Model,
                "tick 90: the key is refused",
                "b",
                t(90)
            )
            .is_some());
    }

    #[test]
    fn a_cause_key_ignores_numbers_and_spacing() {
        assert_eq!(
            cause_key(&Cause::Healer, "Tick 12 failed  (3 in a row)"),
            cause_key(&Cause::Healer, "tick 9 failed (4 in a row)")
        );
        assert_ne!(
            cause_key(&Cause::Healer, "x"),
            cause_key(&Cause::Outage, "x")
        );
    }

    #[test]
    fn an_ack_takes_an_incident_or_a_flare_prefix() {
        let mut r = Incidents::default();
        r.on_flare(
            "h",
            "20261127T0600-flare-model",
            &Cause::Model,
            "refused",
            "b",
            t(0),
        );
        r.on_flare(
            "h",
            "20261127T0601-flare-disk",
            &Cause::Disk,
            "full",
            "b",
            t(1),
        );
        assert_eq!(r.ack("20261127T0600"), vec!["model: refused".to_string()]);
        assert!(r.open["model: refused"].acked && !r.open["disk: full"].acked);
        assert_eq!(r.ack("disk:"), vec!["disk: full".to_string()]);
    }
}
