//! `state/ticks.jsonl`: one JSON line per finished tick, append-only,
//! written by the supervisor (the only one who knows how a tick ended).
//!
//! Reading is forgiving: a line that does not parse (a torn write, a hand
//! edit gone wrong) is reported with its line number and skipped, and the
//! lines after it still count.

use std::collections::BTreeMap;
use std::path::Path;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::class::Class;
use crate::atomic;

/// Tokens a tick used.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tokens {
    /// Input tokens, cache reads and writes included.
    #[serde(rename = "in")]
    pub input: u64,
    /// Output tokens.
    #[serde(rename = "out")]
    pub output: u64,
    /// Input tokens served from the provider's prompt cache.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cache_read: u64,
    /// Input tokens written to the provider's prompt cache.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cache_write: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// One finished tick.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TickRecord {
    /// The tick's number, from 1.
    pub tick: u64,
    /// When it started.
    pub start: DateTime<Utc>,
    /// When it ended.
    pub end: DateTime<Utc>,
    /// The child's exit code; for a signal, 128 + the signal number.
    pub exit: i32,
    /// How it ended.
    pub class: Class,
    /// What it used.
    #[serde(default)]
    pub tokens: Tokens,
    /// What it cost, at `[budget.prices]`.
    #[serde(default)]
    pub cost_usd: f64,
    /// Estimated tokens per part of the context (system, user turn, …).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tokens_by_part: BTreeMap<String, u64>,
    /// Inbox messages the tick consumed, as archived under `state/`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inbox: Vec<String>,
    /// Memories the tick had to read before writing (DESIGN 4, 8).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub required_reads: Vec<String>,
    /// A fingerprint of the model's reply (normalised), to spot repeats.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply_fingerprint: Option<u64>,
    /// Why an exit-0 tick looks like a quiet failure, when it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quiet: Option<String>,
    /// The tick failed only because the provider was unreachable,
    /// rate-limited or overloaded; the healer does not count it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub outage: bool,
    /// The supervisor was told to stop during this tick and cut it short:
    /// an operator's act, not the agent's failure (the healer skips it).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
    /// After an outage: how long the supervisor waited before the next try.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backoff_ms: Option<u64>,
    /// Why the tick failed, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// How the model stopped, as the provider said, when the answer was
    /// not whole (`max_tokens`, `length`, `refusal`, `pause_turn`…).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
    /// What the model said when it refused (at most 500 characters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refusal: Option<String>,
    /// The recoveries the tick tried before it ended, with their outcome.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub recoveries: Vec<super::class::Recovery>,
}

/// What reading the ledger found.
#[derive(Debug, Default)]
pub struct Ledger {
    /// The lines that parse, in order.
    pub records: Vec<TickRecord>,
    /// `(line number, problem)` for each line skipped.
    pub skipped: Vec<(usize, String)>,
}

impl Ledger {
    /// Reads the ledger; lines that do not parse are kept aside in `skipped`.
    pub fn read(path: &Path) -> std::io::Result<Ledger> {
        let text = match std::fs::read(path) {
            Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Ledger::default()),
            Err(e) => return Err(e),
        };
        let mut ledger = Ledger::default();
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            match serde_json::from_str::<TickRecord>(line) {
                Ok(record) => ledger.records.push(record),
                Err(e) => ledger.skipped.push((i + 1, e.to_string())),
            }
        }
        Ok(ledger)
    }

    /// The highest tick number recorded (0 when none).
    pub fn last_number(&self) -> u64 {
        self.records.iter().map(|r| r.tick).max().unwrap_or(0)
    }

    /// The newest record.
    pub fn last(&self) -> Option<&TickRecord> {
        self.records.iter().max_by_key(|r| r.tick)
    }
}

/// Appends one record as one line (a torn last line is repaired first).
pub fn append(path: &Path, record: &TickRecord) -> Result<(), atomic::WriteError> {
    let line = serde_json::to_string(record).expect("a tick record serialises");
    atomic::append_line(path, &line)
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // fixtures, not state
mod tests {
    use super::*;

    fn record(tick: u64) -> TickRecord {
        let t = DateTime::from_timestamp(1_700_000_000, 0).unwrap();
        TickRecord {
            tick,
            start: t,
            end: t,
            exit: 0,
            class: Class::Ok,
            tokens: Tokens::default(),
            cost_usd: 0.0,
            tokens_by_part: BTreeMap::new(),
            inbox: vec![],
            required_reads: vec![],
            reply_fingerprint: None,
            quiet: None,
            outage: false,
            interrupted: false,
            stop_reason: None,
            refusal: None,
            recoveries: Vec::new(),
            backoff_ms: None,
            note: None,
        }
    }

    #[test]
    fn a_torn_line_is_skipped_and_named_and_later_lines_count() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ticks.jsonl");
        append(&path, &record(1)).unwrap();
        let mut text = std::fs::read_to_string(&path).unwrap();
        text.push_str("{\"tick\":2,\"sta");
        std::fs::write(&path, text).unwrap();
        append(&path, &record(3)).unwrap();
        let ledger = Ledger::read(&path).unwrap();
        assert_eq!(ledger.last_number(), 3);
        assert_eq!(ledger.records.len(), 2);
        assert_eq!(ledger.skipped[0].0, 2);
    }
}
