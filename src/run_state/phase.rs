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
use crate::json_file::{self, JsonFile};

/// What the supervisor is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    /// Starting up: locks, recovery of an interrupted tick.
    Starting,
    /// A tick child is running.
    Ticking,
    /// Waiting for the next tick or an inbox message.
    Waiting,
    /// Ticks are paused: the disk holding the home is full.
    #[serde(rename = "disk-full")]
    DiskFull,
    /// A commit is put off: another git holds its lock.
    #[serde(rename = "git-locked")]
    GitLocked,
    /// Started on a `hearth.toml` that does not parse: nothing ticks until
    /// it does.
    #[serde(rename = "config-broken")]
    ConfigBroken,
}

/// `.hearth/supervisor.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SupervisorState {
    /// The supervisor's process id.
    pub pid: u32,
    /// When it started.
    pub started: DateTime<Utc>,
    /// What it is doing.
    pub phase: Phase,
    /// The tick running, if one is.
    pub tick: Option<u64>,
    /// When the next tick is due, while waiting.
    pub next_due: Option<DateTime<Utc>>,
}

/// `.hearth/tick.json`: the tick in progress.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TickInProgress {
    /// Its number.
    pub tick: u64,
    /// When it started.
    pub start: DateTime<Utc>,
}

fn state_path(home: &Home) -> std::path::PathBuf {
    home.supervisor_state_path()
}

fn tick_path(home: &Home) -> std::path::PathBuf {
    home.tick_marker_path()
}

impl JsonFile for SupervisorState {
    const VERSION: u32 = 1;
}

impl JsonFile for TickInProgress {
    const VERSION: u32 = 1;
}

/// Says what the supervisor is doing; a failure costs only `hearth
/// status` its detail. Not fsynced: a hint rewritten twice a tick, and the
/// pid in it means nothing after a power loss.
pub fn write_state(home: &Home, state: &SupervisorState) -> Result<(), atomic::WriteError> {
    json_file::save_unsynced(&state_path(home), state)
}

/// What the supervisor said it is doing; a broken file is logged and read
/// as nothing said.
pub fn read_state(home: &Home) -> Option<SupervisorState> {
    json_file::load(&state_path(home)).unwrap_or_else(|e| {
        tracing::warn!("{e}");
        None
    })
}

/// Removes `supervisor.json` (the supervisor has stopped).
pub fn clear_state(home: &Home) {
    let _ = std::fs::remove_file(state_path(home));
}

/// Marks tick `tick` as in progress.
pub fn mark_tick(home: &Home, tick: &TickInProgress) -> Result<(), atomic::WriteError> {
    json_file::save(&tick_path(home), tick)
}

/// The tick a previous supervisor left unfinished, if any. A marker that
/// does not parse still means a tick was in progress; its number is then
/// unknown (`None` inside).
pub fn unfinished_tick(home: &Home) -> Option<Option<TickInProgress>> {
    match json_file::load(&tick_path(home)) {
        Ok(marker) => marker.map(Some),
        Err(e) => {
            tracing::warn!("{e}; the tick in progress is recorded without its number");
            Some(None)
        }
    }
}

/// Removes the tick marker and the tick's report (the tick is committed).
pub fn clear_tick(home: &Home) {
    let _ = std::fs::remove_file(tick_path(home));
    let _ = std::fs::remove_file(crate::exchange::report::TickReport::path(home));
}
