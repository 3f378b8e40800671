//! `.hearth/core-scan.json`: which memory files outside `memory/core/` are
//! known not to claim `core: true`, by size and modification time. A
//! rebuildable cache: missing or unreadable, it is rebuilt; a file whose
//! stamp changed is read again.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::atomic;
use crate::home::Home;

const VERSION: u32 = 1;
/// A file modified this recently may change again within the same mtime
/// tick without its stamp changing (git's "racy" case): never trust it.
const RACY_NS: i128 = 2_000_000_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stamp {
    size: u64,
    mtime_ns: i128,
}

impl Stamp {
    pub fn of(meta: &std::fs::Metadata) -> Stamp {
        let mtime_ns = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
            .map(|d| d.as_nanos() as i128)
            .unwrap_or(0);
        Stamp {
            size: meta.len(),
            mtime_ns,
        }
    }
}

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
    home.runtime_dir().join("core-scan.json")
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
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos() as i128)
            .unwrap_or(0);
        if core || now - stamp.mtime_ns < RACY_NS {
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
