//! The brake as a tick meets it: the mode, the required files, the
//! operator's override, and the log. The decision itself is
//! [`super::decide`]; this file gathers its inputs and records its output.
//!
//! The override lives in `.hearth/brake-override.json`, which no tool can
//! reach (the sandbox refuses `.hearth/`): `hearth brake override --ticks N
//! --reason "…"` opens the gate for the next N ticks, each tick using one.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::log::{self, BrakeLine};
use super::{decide, reads_in_context, required, waiting, Required, Ruling};
use crate::atomic;
use crate::config::BrakeMode;
use crate::conversation::Message;
use crate::home::layout::rel;
use crate::home::Home;
use crate::json_file::{self, JsonFile};

/// The operator's open gate.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Override {
    /// Ticks it still opens.
    pub ticks_left: u32,
    /// Why, in the operator's words.
    pub reason: String,
    /// When it was granted.
    pub granted: Option<DateTime<Utc>>,
}

impl JsonFile for Override {
    const VERSION: u32 = 1;
}

impl Override {
    /// The override in force, if any (a broken file opens nothing).
    pub fn load(home: &Home) -> Override {
        json_file::load(&home.path(rel::BRAKE_OVERRIDE))
            .ok()
            .flatten()
            .unwrap_or_default()
    }

    /// Writes it (the operator's command, and a tick using one up).
    pub fn save(&self, home: &Home) -> Result<(), atomic::WriteError> {
        json_file::save(&home.path(rel::BRAKE_OVERRIDE), self)
    }
}

/// One tick's brake.
pub struct Gate {
    mode: BrakeMode,
    required: Vec<String>,
    overridden: bool,
    tick: u64,
    now: DateTime<Utc>,
}

impl Gate {
    /// The gate for tick `tick`: takes one tick of an override, if one is
    /// in force.
    pub fn open_for(
        home: &Home,
        mode: BrakeMode,
        required: Vec<String>,
        tick: u64,
        now: DateTime<Utc>,
    ) -> Gate {
        let mut ov = Override::load(home);
        let overridden = mode != BrakeMode::Off && ov.ticks_left > 0;
        if overridden {
            ov.ticks_left -= 1;
            if let Err(e) = ov.save(home) {
                tracing::warn!("could not count the brake override down: {e}");
            }
        }
        Gate {
            mode,
            required,
            overridden,
            tick,
            now,
        }
    }

    /// The gate for `hearth ask`: the override is the ticks' (it counts
    /// ticks), so an ask neither uses one up nor passes through one.
    pub fn without_override(
        mode: BrakeMode,
        required: Vec<String>,
        tick: u64,
        now: DateTime<Utc>,
    ) -> Gate {
        Gate {
            mode,
            required,
            overridden: false,
            tick,
            now,
        }
    }

    /// The files required, as they are now.
    pub fn required_now(&self, home: &Home) -> Vec<Required> {
        self.required
            .iter()
            .map(|path| Required {
                path: path.clone(),
                pages: required::now(home, path),
            })
            .collect()
    }

    /// Decides on a call of `tool` (which `writes` or not) about `target`,
    /// with `messages` in front of the model, and logs the decision.
    pub fn check(
        &self,
        home: &Home,
        tool: &str,
        target: &str,
        writes: bool,
        messages: &[Message],
        normalise: impl Fn(&str) -> Option<String>,
    ) -> Ruling {
        if !writes || self.mode == BrakeMode::Off {
            return Ruling::Pass;
        }
        let reads = reads_in_context(messages, normalise);
        let decision = decide(
            self.mode,
            writes,
            waiting(&self.required_now(home), &reads),
            self.overridden,
        );
        let waited = match &decision {
            Ruling::Deny(w) | Ruling::WouldDeny(w) | Ruling::Override(w) => w.clone(),
            _ => Vec::new(),
        };
        if let Some(word) = decision.word() {
            let line = BrakeLine {
                v: log::VERSION,
                time: self.now,
                tick: Some(self.tick),
                tool: tool.into(),
                target: target.chars().take(300).collect(),
                decision: word.into(),
                waiting: waited,
                reason: None,
            };
            if let Err(e) = log::append(home, &line) {
                tracing::warn!("could not log the brake's decision: {e}");
            }
        }
        decision
    }
}
