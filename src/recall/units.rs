//! The units recall indexes: markdown blocks of memory files and turns of
//! conversation archives, each with its neighbours' text as context.

use super::blocks;
use crate::home::Home;

pub(super) struct Unit {
    pub(super) path: String,
    pub(super) start: usize,
    pub(super) end: usize,
    pub(super) heading: String,
    pub(super) text: String,
    pub(super) context: String,
}

/// Fills each unit's context with its neighbours' text.
fn with_neighbours(mut units: Vec<Unit>) -> Vec<Unit> {
    let texts: Vec<String> = units.iter().map(|u| u.text.clone()).collect();
    for (i, unit) in units.iter_mut().enumerate() {
        let before = i.checked_sub(1).map(|j| texts[j].as_str()).unwrap_or("");
        let after = texts.get(i + 1).map(String::as_str).unwrap_or("");
        unit.context = format!("{before}\n{after}");
    }
    units
}

/// The units of one file, or why it cannot be indexed.
pub(super) fn units(home: &Home, rel: &str) -> Result<Vec<Unit>, String> {
    let bytes = std::fs::read(home.root().join(rel)).map_err(|e| format!("{rel}: {e}"))?;
    let text = std::str::from_utf8(&bytes).map_err(|e| {
        let line = bytes[..e.valid_up_to()]
            .iter()
            .filter(|b| **b == b'\n')
            .count()
            + 1;
        format!("{rel}:{line}: not valid UTF-8; the file is left out of recall until fixed")
    })?;
    if rel.ends_with(".json") {
        return archive_units(rel, text);
    }
    Ok(with_neighbours(
        blocks::split(text)
            .into_iter()
            .map(|b| Unit {
                path: rel.to_string(),
                start: b.start,
                end: b.end,
                heading: b.heading,
                text: b.text,
                context: String::new(),
            })
            .collect(),
    ))
}

/// Conversation archives: one unit per turn, cited as `#turn-N`.
fn archive_units(rel: &str, text: &str) -> Result<Vec<Unit>, String> {
    let archive: crate::tick::history::Archive =
        serde_json::from_str(text).map_err(|e| format!("{rel}: {e}"))?;
    Ok(with_neighbours(
        archive
            .messages
            .iter()
            .enumerate()
            .filter_map(|(i, m)| {
                let text = m.text();
                (!text.trim().is_empty()).then(|| Unit {
                    path: format!("{rel}#turn-{}", i + 1),
                    start: i + 1,
                    end: i + 1,
                    heading: format!("{:?} turn", m.role).to_lowercase(),
                    text,
                    context: String::new(),
                })
            })
            .collect(),
    ))
}
