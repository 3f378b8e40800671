//! `hearth status`: is the supervisor running, how did the last tick end,
//! when is the next one due. Reads only what it must and tolerates broken
//! state, because status is what an operator runs when something is wrong.

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::runtime::{self, Phase};
use crate::home::{lock, Home};
use crate::tick::ledger::{Ledger, TickRecord};

/// What `hearth status` says.
#[derive(Debug, Clone, Serialize)]
pub struct Status {
    /// The home's root.
    pub home: String,
    /// Whether a supervisor holds the run lock.
    pub running: bool,
    /// Its process id.
    pub pid: Option<u32>,
    /// What it is doing.
    pub phase: Option<Phase>,
    /// When the next tick is due.
    pub next_due: Option<DateTime<Utc>>,
    /// The newest tick in the ledger.
    pub last_tick: Option<TickRecord>,
    /// How many ticks the ledger holds.
    pub ticks_recorded: usize,
    /// Failed ticks in a row now.
    pub failure_streak: usize,
    /// Set when healing is exhausted and the supervisor waits for a human.
    pub panic: Option<crate::healer::state::Panic>,
    /// Problems met while reading state (named by file and line).
    pub problems: Vec<String>,
}

/// What a look at the home, without locking it, says.
pub fn status(home: &Home) -> Status {
    let running = lock::supervisor_running(home);
    let state = runtime::read_state(home).filter(|_| running);
    let mut problems = Vec::new();
    let ticks_path = home.ticks_path();
    let ledger = match Ledger::read(&ticks_path) {
        Ok(ledger) => ledger,
        Err(e) => {
            problems.push(format!("{}: {e}", home.relative(&ticks_path)));
            Ledger::default()
        }
    };
    for (line, problem) in &ledger.skipped {
        problems.push(format!(
            "{}:{line}: line skipped: {problem}",
            home.relative(&ticks_path)
        ));
    }
    let (healer, healer_problem) = crate::healer::state::HealerState::load_or_fresh(home);
    problems.extend(healer_problem);
    // What the next commit would have to leave out: a directory nested too
    // deep, a FIFO, an unreadable file. Logged once by the supervisor;
    // listed here for as long as it lasts.
    match crate::repo::Repo::open(home.root()).and_then(|repo| repo.changes()) {
        Ok(scan) => problems.extend(scan.problems),
        Err(e) => problems.push(e.to_string()),
    }
    Status {
        failure_streak: healer.streak.len(),
        panic: healer.panic,
        home: home.root().display().to_string(),
        running,
        pid: state.as_ref().map(|s| s.pid),
        phase: state.as_ref().map(|s| s.phase),
        next_due: state.as_ref().and_then(|s| s.next_due),
        last_tick: ledger.last().cloned(),
        ticks_recorded: ledger.records.len(),
        problems,
    }
}
