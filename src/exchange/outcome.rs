//! What one exchange did, whatever its door: the model's words, the tools'
//! effects, what it cost, what went wrong and what was tried. The driver
//! writes it as the exchange goes; the door records it — a tick embeds it
//! in its report (`.hearth/tick-report.json`, the same keys as before), an
//! ask writes its answer line from it, a consolidation judges its draft.

use serde::{Deserialize, Serialize};

use super::class::{classify, Class, Failure, FailureKind, Recovery};
use crate::model::Usage;
use crate::tools::Effects;

/// What an exchange did, as the driver saw it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    /// What went wrong, in order (the first decides the class).
    #[serde(default)]
    pub failures: Vec<Failure>,
    /// Tokens used by every model call.
    #[serde(default)]
    pub usage: Usage,
    /// Model calls answered (and paid): 0 means the exchange did nothing
    /// a retry could repeat.
    #[serde(default)]
    pub calls: u32,
    /// What they cost.
    #[serde(default)]
    pub cost_usd: f64,
    /// What the tools changed, and the outside content they read.
    #[serde(default)]
    pub effects: Effects,
    /// The model's text (for quiet-failure detection, and an ask's answer).
    #[serde(default)]
    pub reply: String,
    /// How the last model call stopped, as the provider said, when it was
    /// not a whole answer (`max_tokens`, `length`, `refusal`, …).
    #[serde(default)]
    pub stop_reason: Option<String>,
    /// What the model said when it refused, for the operator (never kept
    /// in the conversation).
    #[serde(default)]
    pub refusals: Vec<String>,
    /// Each tool call the model made, as `name` and its arguments (JSON):
    /// with the reply, what the exchange *did*.
    #[serde(default)]
    pub actions: Vec<String>,
    /// The recoveries the exchange tried, and how they ended.
    #[serde(default)]
    pub recoveries: Vec<Recovery>,
}

impl Outcome {
    /// Whether the exchange has spent its cap (a job's `max_usd`): said as
    /// the failure that stops it.
    pub fn spent_the_cap(&mut self, cap: Option<f64>) -> bool {
        let Some(cap) = cap.filter(|cap| self.cost_usd >= *cap) else {
            return false;
        };
        self.failures.push(Failure::new(
            FailureKind::TooManyRounds,
            format!(
                "stopped at its spending cap: ${:.4} spent of max_usd = {cap} (raise it in the \
                 job's file if the work needs more)",
                self.cost_usd
            ),
        ));
        true
    }

    /// How the exchange ended, from its failures.
    pub fn class(&self) -> Class {
        classify(&self.failures)
    }

    /// Whether it ended without a failure.
    pub fn whole(&self) -> bool {
        self.failures.is_empty()
    }
}
