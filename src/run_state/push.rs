//! `.hearth/push.json`: what the push thread's pushes did (`[git] push`),
//! written by the supervisor, read by `hearth status` and the metrics.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::home::layout::rel;
use crate::home::Home;
use crate::json_file::{self, JsonFile};

/// What the pushes did, for `hearth status`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PushState {
    /// The remote pushed to.
    pub remote: String,
    /// When the last push succeeded, and the commit it pushed.
    pub last_ok: Option<DateTime<Utc>>,
    /// The commit the last successful push sent.
    pub last_commit: Option<String>,
    /// Since when pushes fail (none: the last one worked).
    pub failing_since: Option<DateTime<Utc>>,
    /// What the last failure said.
    pub last_error: Option<String>,
    /// Whether this failure has been flared.
    pub flared: bool,
}

impl JsonFile for PushState {
    const VERSION: u32 = 1;
}

impl PushState {
    /// The state the supervisor last wrote, if pushing was ever on.
    pub fn load(home: &Home) -> Option<PushState> {
        json_file::load(&home.path(rel::PUSH_STATE)).unwrap_or_else(|e| {
            tracing::warn!("{e}; the push record starts afresh (the next push rewrites it)");
            None
        })
    }
}
