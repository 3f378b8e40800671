//! `[consolidation]`: when the agent proposes a consolidation of its
//! identity memory, and what the gates allow.

use serde::{Deserialize, Serialize};

/// Which consolidations are accepted without the operator.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AutoAccept {
    /// None: every proposal waits for the operator.
    #[default]
    None,
    /// One that only adds or moves text.
    Additions,
}

/// `[consolidation]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ConsolidationConfig {
    /// Days between consolidations even when the identity layer is under
    /// its warning line; 0: only when it passes it (or `hearth
    /// consolidate`).
    pub every_days: u64,
    /// The most of the identity-class lines one consolidation may remove
    /// (moved lines count), in percent.
    pub max_removed_pct: u32,
    /// `"additions"`: a proposal that only adds or moves text is accepted
    /// at once.
    pub auto_accept: AutoAccept,
}

impl Default for ConsolidationConfig {
    fn default() -> ConsolidationConfig {
        ConsolidationConfig {
            every_days: 0,
            max_removed_pct: 30,
            auto_accept: AutoAccept::None,
        }
    }
}
