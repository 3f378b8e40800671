//! `state/healer.json`: the healer's ledger. Committed with every tick and
//! never rewound by a heal: it is the record of the failures, the heals and
//! the panic flares, and rewinding it would let a failing agent heal for
//! ever.

use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};

use crate::atomic;
use crate::exchange::class::Class;
use crate::home::Home;
use crate::json_file::{self, JsonFile, JsonFileError};

/// A failed tick in the current streak.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FailedTick {
    /// Its number.
    pub tick: u64,
    /// How it ended.
    pub class: Class,
    /// Inbox messages it consumed (archived paths), to re-queue on a heal.
    #[serde(default)]
    pub inbox: Vec<String>,
    /// What its ledger line says ended it, when anything does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause: Option<String>,
}

impl HealerState {
    /// The distinct causes of the streak's failed ticks, oldest first.
    pub fn causes(&self) -> Vec<String> {
        let mut causes: Vec<String> = Vec::new();
        for cause in self.streak.iter().filter_map(|f| f.cause.clone()) {
            if !causes.contains(&cause) {
                causes.push(cause);
            }
        }
        causes
    }
}

/// Healing is exhausted: the supervisor stopped for a human.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Panic {
    /// When healing gave up.
    pub since: DateTime<Utc>,
    /// Why, in words for the operator.
    pub reason: String,
}

/// `state/healer.json`: the healer's ledger, never rewound by a heal.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HealerState {
    /// Consecutive failed ticks since the last success or heal.
    #[serde(default)]
    pub streak: Vec<FailedTick>,
    /// Successful ticks in a row: enough of them forgive past heals.
    #[serde(default)]
    pub successes: u32,
    /// When each heal in the current window happened.
    #[serde(default)]
    pub heals: Vec<DateTime<Utc>>,
    /// When panic flares were sent.
    #[serde(default)]
    pub panic_flares: Vec<DateTime<Utc>>,
    /// Set while healing is exhausted (until `hearth heal --resume`).
    #[serde(default)]
    pub panic: Option<Panic>,
    /// Quiet ticks in a row (idle ticks between them neither count nor
    /// break the run: a model that answers every message the same way is
    /// quiet however many empty ticks come between).
    #[serde(default)]
    pub quiet: u32,
    /// What the last tick that had inbox messages did (its fingerprint):
    /// the next such tick doing the same is a repeat, idle ticks between
    /// them or not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_answer: Option<u64>,
    /// Provider outages in a row (for the backoff).
    #[serde(default)]
    pub outages: u32,
    /// The outage in progress, while the model API cannot be reached.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outage: Option<super::outage::Outage>,
    /// The setting error last flared (a refused key, a wrong address), so
    /// it is flared once, not every tick; cleared when the model answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub misconfigured: Option<String>,
    /// The last tick counted in. A supervisor killed after recording a tick
    /// but before clearing its marker must not count it twice (absent in
    /// files written before this field existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_tick: Option<u64>,
}

/// `{"version": 1, …}` as before json_file: the format is unchanged.
impl JsonFile for HealerState {
    const VERSION: u32 = 1;
}

fn path(home: &Home) -> std::path::PathBuf {
    home.healer_path()
}

impl HealerState {
    /// Reads the ledger (none yet: a fresh one).
    pub fn load(home: &Home) -> Result<HealerState, JsonFileError> {
        Ok(json_file::load(&path(home))?.unwrap_or_default())
    }

    /// The ledger, or a fresh one and the problem when it cannot be read:
    /// the supervisor must run (the broken bytes stay in git history, as
    /// the ledger is committed every tick).
    pub fn load_or_fresh(home: &Home) -> (HealerState, Option<String>) {
        match HealerState::load(home) {
            Ok(state) => (state, None),
            Err(e) => (
                HealerState::default(),
                Some(format!(
                    "{e}; starting a fresh healer ledger (the old one is in git history)"
                )),
            ),
        }
    }

    /// Writes the ledger atomically.
    pub fn save(&self, home: &Home) -> Result<(), atomic::WriteError> {
        json_file::save(&path(home), self)
    }

    /// Heals within the last `window`.
    pub fn heals_within(&self, now: DateTime<Utc>, window: Duration) -> usize {
        self.heals.iter().filter(|t| now - **t < window).count()
    }

    /// Whether a panic flare went out within the last `interval`.
    pub fn flared_panic_within(&self, now: DateTime<Utc>, interval: Duration) -> bool {
        self.panic_flares.iter().any(|t| now - *t < interval)
    }
}
