//! What each blob a peer's outbox holds said, read once: a blob's words
//! never change. The supervisor keeps it in memory for its looks;
//! `hearth status` keeps it on disk between its runs.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::collab::handoff::Handoff;
use crate::json_file::{self, JsonFile};

/// What each blob read from a peer said (keyed by the peer and the blob):
/// a blob's words never change, so a backlog is read once, not at every
/// look. The supervisor keeps it in memory; `hearth status`, a process of
/// its own each time, keeps what decides admission on disk
/// (`.hearth/handoff-reads.json`, never committed), without the messages.
#[derive(Default, Serialize, Deserialize)]
pub struct HandoffReads {
    read: HashMap<String, Result<Handoff, Unread>>,
    /// New reads since it was loaded (what makes it worth saving).
    #[serde(skip)]
    fresh: usize,
}

/// Why a blob was not read as a handoff, as it was said when it was read
/// (kept in the memo as those words: a blob's words never change, so
/// neither does why it was refused).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[serde(transparent)]
#[error("{said}")]
pub struct Unread {
    /// What was said.
    pub said: String,
}

impl From<crate::collab::intake_error::IntakeError> for Unread {
    fn from(e: crate::collab::intake_error::IntakeError) -> Unread {
        Unread {
            said: e.to_string(),
        }
    }
}

impl JsonFile for HandoffReads {
    const VERSION: u32 = 1;
}

impl HandoffReads {
    /// The most kept: past it, the memo starts again (a flood of blobs
    /// cannot grow it without bound).
    const MAX: usize = 50_000;

    fn path(home: &crate::home::Home) -> std::path::PathBuf {
        home.runtime_dir().join("handoff-reads.json")
    }

    /// Status's memo, as the last status left it (empty when there is
    /// none or it cannot be read: it is only a memo). Its handoffs carry
    /// no message: admission never reads one, and the supervisor, which
    /// takes them, never loads this.
    pub fn for_status(home: &crate::home::Home) -> HandoffReads {
        json_file::load(&Self::path(home))
            .ok()
            .flatten()
            .unwrap_or_default()
    }

    /// Keeps status's memo for the next status, when it learned anything;
    /// a home status may not write (another account's) keeps none.
    pub fn save_for_status(&self, home: &crate::home::Home) {
        if self.fresh > 0 {
            if let Err(e) = json_file::save(&Self::path(home), self) {
                tracing::debug!("the status memo of peers' handoffs was not kept: {e}");
            }
        }
    }

    /// The handoff `peer`'s `blob` holds: from the memo when it was read
    /// before, else from `read` (and kept).
    pub fn get_or_read(
        &mut self,
        peer: &str,
        blob: &str,
        read: impl FnOnce() -> Result<Handoff, Unread>,
    ) -> Result<Handoff, Unread> {
        let key = format!("{peer}:{blob}");
        if let Some(known) = self.read.get(&key) {
            return known.clone();
        }
        if self.read.len() >= Self::MAX {
            self.read.clear();
        }
        let said = read();
        self.read.insert(key, said.clone());
        self.fresh += 1;
        said
    }
}
