//! `state/budget.json`: spend per UTC day, and the daily limit
//! (`[budget] daily_usd`). A ledger of hearth's own: committed every tick,
//! never rewound by a heal, so a failing agent cannot spend the day twice.
//! The supervisor is its only writer; a tick only reads it.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::atomic;
use crate::home::Home;
use crate::json_file::{self, JsonFile, JsonFileError};

/// The spend ledger.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Budget {
    /// Dollars spent per UTC day (`YYYY-MM-DD`).
    #[serde(default)]
    pub days: BTreeMap<String, f64>,
    /// The last UTC day a `budget` flare was sent for.
    #[serde(default)]
    pub flared: Option<String>,
}

/// The UTC day of `t`, as the ledger keys it (`YYYY-MM-DD`).
pub fn day(t: DateTime<Utc>) -> String {
    t.format("%Y-%m-%d").to_string()
}

impl JsonFile for Budget {
    const VERSION: u32 = 1;
}

fn path(home: &Home) -> std::path::PathBuf {
    home.budget_path()
}

impl Budget {
    /// The ledger (none yet: no spend).
    pub fn load(home: &Home) -> Result<Budget, JsonFileError> {
        Ok(json_file::load(&path(home))?.unwrap_or_default())
    }

    /// The ledger, or no spend when it cannot be read, said in the log (the
    /// broken bytes stay in git history: the ledger is committed every
    /// tick). Spend is not a reason to stop the agent.
    pub fn load_or_empty(home: &Home) -> Budget {
        Budget::load(home).unwrap_or_else(|e| {
            tracing::warn!("{e}; counting today's spend from zero");
            Budget::default()
        })
    }

    /// Writes the ledger atomically (the supervisor only).
    pub fn save(&self, home: &Home) -> Result<(), atomic::WriteError> {
        json_file::save(&path(home), self)
    }

    /// Dollars spent on `now`'s UTC day.
    pub fn spent(&self, now: DateTime<Utc>) -> f64 {
        self.days.get(&day(now)).copied().unwrap_or(0.0)
    }

    /// Counts `usd` on `at`'s UTC day.
    pub fn add(&mut self, at: DateTime<Utc>, usd: f64) {
        if usd > 0.0 {
            *self.days.entry(day(at)).or_default() += usd;
        }
    }

    /// Whether `daily_usd` (0: no limit) is spent for `now`'s UTC day.
    pub fn exhausted(&self, daily_usd: f64, now: DateTime<Utc>) -> bool {
        daily_usd > 0.0 && self.spent(now) >= daily_usd
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spend_is_per_utc_day() {
        let mut b = Budget::default();
        let t = DateTime::from_timestamp(1_700_000_000, 0).unwrap();
        b.add(t, 4.0);
        b.add(t, 6.5);
        assert!(b.exhausted(10.0, t));
        assert!(!b.exhausted(0.0, t), "0 means no limit");
        assert!(!b.exhausted(10.0, t + chrono::Duration::days(1)));
    }
}
