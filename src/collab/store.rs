//! The records on disk: `collaborations/SLUG.md`, one per collaboration,
//! each written whole and atomically.

use std::path::PathBuf;

use super::{record, valid_slug, Collaboration, Stage};
use crate::atomic;
use crate::home::layout::rel;
use crate::home::Home;

/// A record that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{}: {message}", path.display(), line.map(|l| format!(":{l}")).unwrap_or_default())]
pub struct RecordError {
    /// The file.
    pub path: PathBuf,
    /// The line, when the reader knows it.
    pub line: Option<usize>,
    /// What is wrong.
    pub message: String,
}

impl RecordError {
    /// What to do about it: the record is a markdown file the operator
    /// may edit, and git has every version of it.
    pub fn hint(&self) -> String {
        let dir = self.path.parent().unwrap_or(&self.path).display();
        let name = self.path.file_name().unwrap_or_default().to_string_lossy();
        format!(
            "fix it by hand (YAML front matter, UTF-8), or restore the committed one: \
             `git -C {dir} checkout -- {name}`"
        )
    }
}

/// The record's path, relative to the home.
pub fn rel_path(slug: &str) -> String {
    format!("{}/{slug}.md", rel::COLLABORATIONS)
}

/// The collaboration `slug`, if this home has its record.
pub fn load(home: &Home, slug: &str) -> Result<Option<Collaboration>, RecordError> {
    if !valid_slug(slug) {
        return Ok(None);
    }
    let path = home.path(&rel_path(slug));
    let text = match std::fs::read(&path) {
        Ok(bytes) => String::from_utf8(bytes).map_err(|e| RecordError {
            path: path.clone(),
            line: Some(crate::bounded::line_at(
                e.as_bytes(),
                e.utf8_error().valid_up_to(),
            )),
            message: "not UTF-8".into(),
        })?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(RecordError {
                path,
                line: None,
                message: e.to_string(),
            })
        }
    };
    let c = record::parse(&text).map_err(|e| RecordError {
        path: path.clone(),
        line: e.line,
        message: e.message,
    })?;
    if c.slug != slug {
        return Err(RecordError {
            path,
            line: None,
            message: format!("its slug is {:?}, not the file's name {slug:?}", c.slug),
        });
    }
    Ok(Some(c))
}

/// Every record, by slug, and the ones that could not be read.
pub fn list(home: &Home) -> (Vec<Collaboration>, Vec<RecordError>) {
    let mut found = Vec::new();
    let mut broken = Vec::new();
    let Ok(entries) = std::fs::read_dir(home.path(rel::COLLABORATIONS)) else {
        return (found, broken);
    };
    let mut slugs: Vec<String> = entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.strip_suffix(".md")
                .filter(|s| valid_slug(s))
                .map(str::to_string)
        })
        .collect();
    slugs.sort();
    for slug in slugs {
        match load(home, &slug) {
            Ok(Some(c)) => found.push(c),
            Ok(None) => {}
            Err(e) => broken.push(e),
        }
    }
    (found, broken)
}

/// Only those with `status`, or all.
pub fn with_status(all: Vec<Collaboration>, status: Option<Stage>) -> Vec<Collaboration> {
    all.into_iter()
        .filter(|c| status.is_none_or(|s| c.status == s))
        .collect()
}

/// The handoffs this home has taken (`state/handoffs.jsonl`); lines that
/// do not parse are skipped.
pub fn handoffs_taken(home: &Home) -> Vec<super::intake::Taken> {
    std::fs::read_to_string(home.path(rel::HANDOFFS))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// Posts a handoff or a notice in this home's own `outbox/`, where the
/// peer's supervisor takes it from: `…-handoff-SLUG-ROUND-to-PEER.md` or
/// `…-notice-SLUG-WHAT-to-PEER.md`. Returns its path relative to the home.
pub fn post(
    home: &Home,
    h: &super::handoff::Handoff,
    now: chrono::DateTime<chrono::Utc>,
) -> Result<String, atomic::WriteError> {
    let what = match &h.notice {
        Some(what) => format!("notice-{}-{what}", h.collaboration.slug),
        None => format!("handoff-{}-{}", h.collaboration.slug, h.round),
    };
    let rel = outbox_rel(&what, &h.to, now);
    atomic::write(&home.path(&rel), h.render().as_bytes())?;
    Ok(rel)
}

/// Where `c`'s round `r` was posted, when this home handed it off (the
/// handoff tool posts it with the round's own time).
pub fn handoff_rel(c: &Collaboration, r: &super::Round) -> String {
    outbox_rel(&format!("handoff-{}-{}", c.slug, r.n), &r.to, r.at)
}

fn outbox_rel(what: &str, to: &str, at: chrono::DateTime<chrono::Utc>) -> String {
    format!(
        "{}/{}-{what}-to-{to}.md",
        rel::OUTBOX,
        at.format("%Y%m%dT%H%M%S%.3fZ")
    )
}

/// Writes `c`'s record; returns its path relative to the home. A slug
/// that is not one (it would name a path outside `collaborations/`) is
/// refused here too, whoever checked it before.
pub fn save(home: &Home, c: &Collaboration) -> Result<String, atomic::WriteError> {
    if !valid_slug(&c.slug) {
        return Err(atomic::WriteError {
            path: home.path(rel::COLLABORATIONS),
            source: std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                super::CollabError::BadSlug(c.slug.clone()).to_string(),
            ),
        });
    }
    let rel = rel_path(&c.slug);
    atomic::write(&home.path(&rel), record::render(c).as_bytes())?;
    Ok(rel)
}
