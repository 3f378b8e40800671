//! The units recall indexes: markdown blocks of memory files and turns of
//! conversation archives, with their terms and their neighbours' terms as
//! context.

use super::analysis::Normaliser;
use super::blocks;
use crate::home::Home;

pub(super) struct Unit {
    pub(super) path: String,
    pub(super) start: usize,
    pub(super) end: usize,
    pub(super) heading: String,
    pub(super) text: String,
}

/// A unit as the index sees it: its terms, its heading's, and the terms of
/// the units before and after it (low-weight context, so a question that
/// spans two neighbouring turns or paragraphs still finds them).
pub(super) struct Analysed {
    pub(super) unit: Unit,
    pub(super) terms: String,
    pub(super) heading_terms: String,
    /// The terms of the label the unit opens with (`Caroline: …`).
    pub(super) subject_terms: String,
    pub(super) context_terms: String,
}

/// Analyses each unit once; its terms serve it and both its neighbours.
pub(super) fn analyse(units: Vec<Unit>, normaliser: &mut Normaliser) -> Vec<Analysed> {
    let terms: Vec<String> = units.iter().map(|u| normaliser.terms(&u.text)).collect();
    let mut heading_terms = (String::new(), String::new());
    units
        .into_iter()
        .enumerate()
        .map(|(i, unit)| {
            // Consecutive units mostly share their heading.
            if heading_terms.0 != unit.heading {
                heading_terms = (unit.heading.clone(), normaliser.terms(&unit.heading));
            }
            let before = i.checked_sub(1).map_or("", |j| terms[j].as_str());
            let after = terms.get(i + 1).map_or("", String::as_str);
            let subject_terms = blocks::label(&unit.text)
                .map(|l| normaliser.terms(l))
                .unwrap_or_default();
            Analysed {
                terms: terms[i].clone(),
                subject_terms,
                heading_terms: heading_terms.1.clone(),
                context_terms: format!("{before} {after}"),
                unit,
            }
        })
        .collect()
}

/// Why a file is left out of recall: its path, the line when one is to
/// blame, and what is wrong. Said in `hearth recall`'s output and the log;
/// the other files are indexed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{rel}{}: {message}", line.map(|l| format!(":{l}")).unwrap_or_default())]
pub(super) struct Skip {
    pub(super) rel: String,
    pub(super) line: Option<usize>,
    pub(super) message: String,
}

/// The units of one file, or why it cannot be indexed.
pub(super) fn units(home: &Home, rel: &str) -> Result<Vec<Unit>, Skip> {
    let skip = |line, message: String| Skip {
        rel: rel.to_string(),
        line,
        message,
    };
    let bytes = std::fs::read(home.root().join(rel)).map_err(|e| skip(None, e.to_string()))?;
    let text = std::str::from_utf8(&bytes).map_err(|e| {
        skip(
            Some(crate::bounded::line_at(&bytes, e.valid_up_to())),
            "not valid UTF-8; the file is left out of recall until fixed".into(),
        )
    })?;
    if rel.ends_with(".json") {
        return archive_units(rel, text);
    }
    if rel == crate::home::layout::rel::SESSIONS {
        return Ok(session_units(rel, text));
    }
    Ok(blocks::split(text)
        .into_iter()
        .map(|b| Unit {
            path: rel.to_string(),
            start: b.start,
            end: b.end,
            heading: b.heading,
            text: b.text,
        })
        .collect())
}

/// Conversation archives: one unit per turn, cited as `#turn-N`.
fn archive_units(rel: &str, text: &str) -> Result<Vec<Unit>, Skip> {
    let archive: crate::conversation::archive::Archive =
        serde_json::from_str(text).map_err(|e| Skip {
            rel: rel.to_string(),
            line: Some(e.line()),
            message: e.to_string(),
        })?;
    Ok(archive
        .messages
        .iter()
        .enumerate()
        .filter_map(|(i, m)| {
            // Tool calls too: a `send`'s body, a `write`'s content.
            let text = m.readable();
            (!text.trim().is_empty()).then(|| Unit {
                path: format!("{rel}#turn-{}", i + 1),
                start: i + 1,
                end: i + 1,
                heading: format!("{:?} turn", m.role).to_lowercase(),
                text,
            })
        })
        .collect())
}

/// `state/sessions.jsonl`: one unit per answer of `hearth ask`, headed by
/// its question, cited as `#line-N`, so what was said at that door stays
/// findable (what ticks said is found in the conversation archives).
fn session_units(rel: &str, text: &str) -> Vec<Unit> {
    let lines: Vec<crate::conversation::sessions::Line> = text
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let questions: std::collections::BTreeMap<&str, String> = lines
        .iter()
        .filter(|l| l.kind == "question")
        .map(|l| (l.id.as_str(), l.asked.clone()))
        .collect();
    text.lines()
        .enumerate()
        .filter_map(|(i, raw)| {
            let line: crate::conversation::sessions::Line = serde_json::from_str(raw).ok()?;
            // A tick's exchange is in its conversation, and so in the
            // archives once it rotates: indexed there, not twice.
            // Only the agent's answers, headed by the question they
            // answer: a question alone would find itself, and an offline
            // answer only echoes recall.
            if line.kind != "answer" || line.provider == "offline" {
                return None;
            }
            let said = line.said;
            let asked = questions.get(line.id.as_str()).cloned().unwrap_or_default();
            (!said.trim().is_empty()).then(|| Unit {
                path: format!("{rel}#line-{}", i + 1),
                start: i + 1,
                end: i + 1,
                heading: asked,
                text: said,
            })
        })
        .collect()
}
