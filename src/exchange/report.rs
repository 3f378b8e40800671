//! `.hearth/tick-report.json`: what the tick child tells its supervisor.
//!
//! An exit code says how a tick ended but not what it did. The child saves
//! this report atomically at each checkpoint — at its start, as each inbox
//! message is archived, after each paid model call and answered round of
//! tools (its door, `door::TickFiles`), as a call brings outside content
//! in, at the end — so even when it is killed the supervisor knows which
//! files the agent touched and which inbox messages it consumed, and
//! commits exactly those as the agent's work. The exchange's part of it is
//! the [`Outcome`], embedded with its keys at the top level.

use std::collections::BTreeMap;
use std::path::PathBuf;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::class::Class;
use super::outcome::Outcome;
use crate::atomic;
use crate::home::Home;
use crate::json_file::{self, JsonFile};

/// What a tick did, written as it goes for the supervisor to record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TickReport {
    /// The tick's number.
    pub tick: u64,
    /// When it started.
    pub started: DateTime<Utc>,
    /// What its exchange did (flattened: the file keeps its keys).
    #[serde(flatten)]
    pub outcome: Outcome,
    /// The error that ended the tick before it could finish (its first
    /// line and hint, bounded): what the ledger line, the heal and panic
    /// flares and `hearth status` quote as the cause.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Inbox messages consumed: (where it was, where it is archived).
    #[serde(default)]
    pub consumed: Vec<(String, String)>,
    /// Estimated tokens per part of the request.
    #[serde(default)]
    pub tokens_by_part: BTreeMap<String, u64>,
    /// Memories the brake will require reading (from boot).
    #[serde(default)]
    pub required_reads: Vec<String>,
    /// Inbox messages this tick was given.
    #[serde(default)]
    pub inbox_waiting: usize,
    /// Why the tick was skipped without calling the model (budget spent).
    #[serde(default)]
    pub skipped: Option<String>,
    /// The UTC day this tick sent the `budget` flare for. The supervisor
    /// records it in `state/budget.json`, which only it writes.
    #[serde(default)]
    pub budget_flared: Option<String>,
    /// When the tick was a consolidation, how it ended (`proposed 3`,
    /// `nothing to change`, `refused: …`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consolidation: Option<String>,
}

impl JsonFile for TickReport {
    const VERSION: u32 = 1;
}

impl TickReport {
    /// An empty report for tick `tick`.
    pub fn new(tick: u64, started: DateTime<Utc>) -> TickReport {
        TickReport {
            tick,
            started,
            outcome: Outcome::default(),
            error: None,
            consumed: Vec::new(),
            tokens_by_part: BTreeMap::new(),
            required_reads: Vec::new(),
            inbox_waiting: 0,
            skipped: None,
            budget_flared: None,
            consolidation: None,
        }
    }

    /// `.hearth/tick-report.json`.
    pub fn path(home: &Home) -> PathBuf {
        home.tick_report_path()
    }

    /// Writes the report where the supervisor will read it.
    pub fn save(&self, home: &Home) -> Result<(), atomic::WriteError> {
        json_file::save(&Self::path(home), self)
    }

    /// The report tick `tick` left, its spend brought up to what its paid
    /// slot says when the slot is ahead: the report's rewrite after a paid
    /// call failed (a full disk), and the call must still be counted.
    pub fn load_with_paid(home: &Home, tick: u64) -> Option<TickReport> {
        let mut report = TickReport::load(home, tick)?;
        if let Some(paid) = super::paid::of_tick(home, tick) {
            if paid.calls > report.outcome.calls {
                tracing::warn!(
                    "tick {tick}'s report missed {} paid call(s) (its rewrite failed); \
                     their spend is taken from {}",
                    paid.calls - report.outcome.calls,
                    super::paid::FILE
                );
                report.outcome.calls = paid.calls;
                report.outcome.usage = paid.usage;
                report.outcome.cost_usd = paid.cost_usd;
            }
        }
        Some(report)
    }

    /// Records `error` (its first line, bounded) as what ended the tick,
    /// on the report on disk; nothing is written when there is none.
    pub fn record_error(home: &Home, tick: u64, error: &str) {
        let Some(mut report) = TickReport::load(home, tick) else {
            return;
        };
        report.error = Some(cause_line(error));
        if let Err(e) = report.save(home) {
            tracing::warn!("the tick's error could not be recorded: {e}");
        }
    }

    /// The report tick `tick`'s child left. One it did not leave (killed
    /// first) or left broken is none: the supervisor then records what it
    /// saw itself, and a broken one is said in the log.
    pub fn load(home: &Home, tick: u64) -> Option<TickReport> {
        json_file::load::<TickReport>(&Self::path(home))
            .unwrap_or_else(|e| {
                tracing::warn!("{e}; recording tick {tick} without its report");
                None
            })
            .filter(|r| r.tick == tick)
    }

    /// The tick's class, from its failures.
    pub fn class(&self) -> Class {
        if self.skipped.is_some() && self.outcome.whole() {
            return Class::Skipped;
        }
        self.outcome.class()
    }
}

/// The most of a cause a ledger line or a flare quotes.
pub const CAUSE_CHARS: usize = 300;

/// A cause as the ledger keeps it: its lines joined, at most
/// [`CAUSE_CHARS`] characters.
pub fn cause_line(error: &str) -> String {
    let flat = error
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    if flat.chars().count() <= CAUSE_CHARS {
        return flat;
    }
    let cut: String = flat.chars().take(CAUSE_CHARS - 1).collect();
    format!("{cut}…")
}
