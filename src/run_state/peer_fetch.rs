//! `.hearth/peers/NAME.json`: what the fetches of a peer on another host
//! said, written by the fetching thread beside the peer's mirror, read by
//! `hearth status`, `hearth collab list` and the supervisor's intake.

use std::path::PathBuf;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::home::Home;
use crate::json_file::{self, JsonFile};

/// What the fetches of one peer have said: `.hearth/peers/NAME.json`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PeerFetch {
    /// The peer.
    pub peer: String,
    /// Where it is fetched from.
    pub url: String,
    /// When a fetch last worked.
    #[serde(default)]
    pub last_ok: Option<DateTime<Utc>>,
    /// Since when every fetch has failed (none: the last one worked).
    #[serde(default)]
    pub failing_since: Option<DateTime<Utc>>,
    /// What the last failed fetch said.
    #[serde(default)]
    pub last_error: Option<String>,
    /// The peer's `main` as last fetched.
    #[serde(default)]
    pub head: Option<String>,
    /// When a fetch last found the peer's history rewritten (a force-push,
    /// or its branch moved to a side line): nothing is taken twice.
    #[serde(default)]
    pub rewritten_at: Option<DateTime<Utc>>,
    /// This failing spell was flared (once a spell, after `[peers]
    /// fetch_flare_min`).
    #[serde(default)]
    pub flared: bool,
}

impl JsonFile for PeerFetch {
    const VERSION: u32 = 1;
}

impl PeerFetch {
    /// Where it is kept: beside the peer's mirror.
    pub fn path(home: &Home, peer: &str) -> PathBuf {
        home.peer_mirror(peer).with_extension("json")
    }

    /// What the fetches of `peer` have said so far (nothing yet: empty).
    pub fn load(home: &Home, peer: &str) -> Option<PeerFetch> {
        json_file::load(&Self::path(home, peer)).ok().flatten()
    }

    /// One line for `hearth status` and `hearth collab list`: how far
    /// behind this home's view of the peer is (its last fetch's age), or
    /// since when fetching fails and why.
    pub fn line(&self, now: DateTime<Utc>) -> String {
        let at = |t: &DateTime<Utc>| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
        let url = crate::config::secret_url::masked(&self.url);
        let mut line = format!("peer {} ({url})", self.peer);
        match (&self.failing_since, &self.last_ok) {
            (Some(since), _) => line.push_str(&format!(
                ": FETCH FAILING since {}: {}",
                at(since),
                self.last_error.as_deref().unwrap_or("?")
            )),
            (None, Some(ok)) => line.push_str(&format!(
                ": fetched {} ({} ago), at {}",
                at(ok),
                crate::clock::human(now - *ok),
                self.head
                    .as_deref()
                    .map_or("no commit yet", |h| &h[..h.len().min(12)])
            )),
            (None, None) => line.push_str(": not fetched yet"),
        }
        if let Some(when) = &self.rewritten_at {
            line.push_str(&format!(
                "; its history was rewritten ({}): nothing taken twice",
                at(when)
            ));
        }
        line
    }
}
