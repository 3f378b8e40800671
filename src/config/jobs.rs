//! `[jobs]`: how the supervisor treats the operator's jobs (DESIGN 19).
//! The jobs themselves are files, `jobs/NAME.toml`.

use serde::{Deserialize, Serialize};

/// `[jobs]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct JobsConfig {
    /// After this many runs in a row that exited 0 without the evidence
    /// their `[expect]` names, the job's incident opens (a flare, and a
    /// notice off the box). 0: never.
    pub unmet_flare: u32,
}

impl Default for JobsConfig {
    fn default() -> Self {
        JobsConfig { unmet_flare: 2 }
    }
}
