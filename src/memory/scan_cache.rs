//! `.hearth/core-scan.json`: which memory files outside `memory/core/` are
//! known not to claim `core: true`, by size and modification time. A
//! rebuildable cache: missing or unreadable, it is rebuilt; a file whose
//! stamp changed is read again.

use std::collections::HashMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::atomic;
use crate::home::Home;
use crate::stamp::Stamp;

const VERSION: u32 = 2;

#[derive(Debug, Default, Serialize, Deserialize)]
pub struct ScanCache {
    version: u32,
    not_core: HashMap<String, Stamp>,
    #[serde(skip)]
    changed: bool,
    #[serde(skip)]
    seen: std::collections::HashSet<String>,
}

fn path(home: &Home) -> PathBuf {
    home.core_scan_path()
}

impl ScanCache {
    pub fn load(home: &Home) -> ScanCache {
        std::fs::read(path(home))
            .ok()
            .and_then(|b| serde_json::from_slice::<ScanCache>(&b).ok())
            .filter(|c| c.version == VERSION)
            .unwrap_or(ScanCache {
                version: VERSION,
                ..ScanCache::default()
            })
    }

    pub fn known_not_core(&mut self, rel: &str, stamp: &Stamp) -> bool {
        let known = self.not_core.get(rel) == Some(stamp);
        if known {
            self.seen.insert(rel.to_string());
        }
        known
    }

    pub fn record(&mut self, rel: &str, stamp: Stamp, core: bool) {
        self.seen.insert(rel.to_string());
        if core || stamp.is_racy() {
            self.changed |= self.not_core.remove(rel).is_some();
        } else if self.not_core.get(rel) != Some(&stamp) {
            self.not_core.insert(rel.to_string(), stamp);
            self.changed = true;
        }
    }

    /// Saves when something changed; files no longer present are dropped.
    /// A failure only costs speed, so it is logged, not returned.
    pub fn save(mut self, home: &Home) {
        let before = self.not_core.len();
        let seen = std::mem::take(&mut self.seen);
        self.not_core.retain(|rel, _| seen.contains(rel));
        if !self.changed && self.not_core.len() == before {
            return;
        }
        let json = serde_json::to_vec(&self).expect("the cache serialises");
        if let Err(e) = atomic::write(&path(home), &json) {
            tracing::debug!("core scan cache not saved: {e}");
        }
    }
}
