//! `state/brake.jsonl`: every decision of the brake, one versioned JSON line
//! each (DESIGN 8). Committed with the tick and never rewound by a heal: it
//! is the record an operator reads before switching `warn` to `enforce`.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::Waiting;
use crate::atomic;
use crate::home::layout::rel;
use crate::home::Home;

/// The format of a line.
pub const VERSION: u32 = 1;

/// One decision.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BrakeLine {
    /// [`VERSION`].
    pub v: u32,
    /// When.
    pub time: DateTime<Utc>,
    /// The tick (none for an operator's act).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tick: Option<u64>,
    /// The tool called (`write`, an operator tool…), or `hearth brake
    /// override` for the operator's act.
    pub tool: String,
    /// The path or command it was about.
    #[serde(default)]
    pub target: String,
    /// `allow`, `deny`, `would-deny`, `override`, or `override-granted`.
    pub decision: String,
    /// The files it waited for.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub waiting: Vec<Waiting>,
    /// The operator's reason, for an override.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// Appends `line`.
pub fn append(home: &Home, line: &BrakeLine) -> Result<(), atomic::WriteError> {
    let text = serde_json::to_string(line).expect("a brake line serialises");
    atomic::append_line(&home.path(rel::BRAKE_LOG), &text)
}

/// Every line that parses, and how many did not.
pub fn read(home: &Home) -> (Vec<BrakeLine>, usize) {
    let text = std::fs::read(home.path(rel::BRAKE_LOG))
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default();
    let mut lines = Vec::new();
    let mut skipped = 0;
    for raw in text.lines().filter(|l| !l.trim().is_empty()) {
        match serde_json::from_str::<BrakeLine>(raw) {
            Ok(line) => lines.push(line),
            Err(_) => skipped += 1,
        }
    }
    (lines, skipped)
}
