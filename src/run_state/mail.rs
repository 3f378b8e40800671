//! `.hearth/mail.json`: what the mail watch last said — connected or
//! not, since when, why — written by its thread, read by `hearth status`.

use std::path::PathBuf;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::home::Home;
use crate::json_file::{self, JsonFile};

/// What the mail watch has said.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MailWatch {
    /// The server, as `[mail] imap` names it.
    pub server: String,
    /// When it was last connected and logged in.
    #[serde(default)]
    pub last_ok: Option<DateTime<Utc>>,
    /// Since when every attempt has failed (none: connected).
    #[serde(default)]
    pub failing_since: Option<DateTime<Utc>>,
    /// What the last failure said, and what to do.
    #[serde(default)]
    pub last_error: Option<String>,
    /// Attempts failed in this spell.
    #[serde(default)]
    pub failures: u64,
    /// Mails taken since the supervisor started.
    #[serde(default)]
    pub taken: u64,
    /// The server has no IDLE: it is looked at every `[mail] poll_s`.
    #[serde(default)]
    pub polling: bool,
}

impl JsonFile for MailWatch {
    const VERSION: u32 = 1;
}

impl MailWatch {
    /// Where it is kept.
    pub fn path(home: &Home) -> PathBuf {
        home.path(".hearth/mail.json")
    }

    /// What the watch last said (none yet: `None`).
    pub fn load(home: &Home) -> Option<MailWatch> {
        json_file::load(&Self::path(home)).ok().flatten()
    }

    /// Written for status to read (a runtime file: never committed).
    pub fn save(&self, home: &Home) {
        if let Err(e) = json_file::save_unsynced(&Self::path(home), self) {
            tracing::warn!("{e}");
        }
    }

    /// One line for `hearth status`.
    pub fn line(&self) -> String {
        match (&self.failing_since, &self.last_error) {
            (None, Some(why)) if self.last_ok.is_none() => {
                format!("mail: {} {why}", self.server)
            }
            (Some(since), Some(why)) => format!(
                "mail: {} unreachable since {}: {why}",
                self.server,
                crate::clock::to_second(*since)
            ),
            _ => format!(
                "mail: {} {}, {} taken since start",
                self.server,
                if self.polling {
                    "polled (no IDLE)"
                } else {
                    "watched (IDLE)"
                },
                self.taken
            ),
        }
    }
}
