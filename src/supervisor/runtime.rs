//! The supervisor's runtime files in `.hearth/` (never committed):
//! - `supervisor.json`: pid, phase and when the next tick is due, for
//!   `hearth status`;
//! - `tick.json`: the tick in progress. Written before a tick starts and
//!   removed after its commit, so a supervisor that finds it at start-up
//!   knows its predecessor died mid-tick and records that tick as a crash.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::atomic;
use crate::home::Home;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    Starting,
    Ticking,
    Waiting,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SupervisorState {
    pub pid: u32,
    pub started: DateTime<Utc>,
    pub phase: Phase,
    pub tick: Option<u64>,
    pub next_due: Option<DateTime<Utc>>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TickInProgress {
    pub tick: u64,
    pub start: DateTime<Utc>,
}

fn state_path(home: &Home) -> std::path::PathBuf {
    home.supervisor_state_path()
}

fn tick_path(home: &Home) -> std::path::PathBuf {
    home.tick_marker_path()
}

pub fn write_state(home: &Home, state: &SupervisorState) {
    let json = serde_json::to_vec_pretty(state).expect("state serialises");
    if let Err(e) = atomic::write(&state_path(home), &json) {
        tracing::warn!("{e}");
    }
}

pub fn read_state(home: &Home) -> Option<SupervisorState> {
    serde_json::from_slice(&std::fs::read(state_path(home)).ok()?).ok()
}

pub fn clear_state(home: &Home) {
    let _ = std::fs::remove_file(state_path(home));
}

pub fn mark_tick(home: &Home, tick: &TickInProgress) -> Result<(), atomic::WriteError> {
    atomic::write(
        &tick_path(home),
        &serde_json::to_vec(tick).expect("serialises"),
    )
}

/// The tick a previous supervisor left unfinished, if any. A marker that
/// does not parse still means a tick was in progress; its number is then
/// unknown (`None` inside).
pub fn unfinished_tick(home: &Home) -> Option<Option<TickInProgress>> {
    let bytes = std::fs::read(tick_path(home)).ok()?;
    Some(serde_json::from_slice(&bytes).ok())
}

pub fn clear_tick(home: &Home) {
    let _ = std::fs::remove_file(tick_path(home));
    let _ = std::fs::remove_file(crate::tick::report::TickReport::path(home));
}
