//! `[peers]` and `[collaborations]` (DESIGN 14): the other homes on this
//! host, and where collaborations may work.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// `[peers]`: name = "/path/to/their/home", read only.
pub type Peers = BTreeMap<String, PathBuf>;

/// `[collaborations]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CollaborationsConfig {
    /// The directories a collaboration may work in (absolute); the agent
    /// cannot change this list.
    pub workdirs: Vec<PathBuf>,
    /// Rounds one collaboration may take before its handoffs are refused.
    pub max_rounds: u32,
}

impl Default for CollaborationsConfig {
    fn default() -> Self {
        CollaborationsConfig {
            workdirs: Vec::new(),
            max_rounds: 12,
        }
    }
}

impl CollaborationsConfig {
    /// Whether `dir` is one of the allowed workdirs (compared as written,
    /// and resolved when both exist, so `/srv/w1/` and a symlink to it
    /// count too).
    pub fn allows(&self, dir: &std::path::Path) -> bool {
        let resolved = dir.canonicalize().ok();
        self.workdirs.iter().any(|w| {
            w.components().eq(dir.components())
                || resolved
                    .as_ref()
                    .is_some_and(|r| w.canonicalize().is_ok_and(|w| &w == r))
        })
    }
}

/// A name hearth puts in paths and commands (a peer, a collaboration's
/// slug): lowercase letters, digits and single inner dashes, at most 64.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && !name.starts_with('-')
        && !name.ends_with('-')
        && !name.contains("--")
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

/// What is wrong with `[peers]` and `[collaborations]`, if anything.
pub fn validate(peers: &Peers, collaborations: &CollaborationsConfig) -> Result<(), String> {
    for (name, path) in peers {
        if !valid_name(name) {
            return Err(format!(
                "[peers] {name:?}: a peer's name is lowercase letters, digits and dashes \
                 (its hearth@NAME instance name, e.g. bob = \"/var/lib/hearth/bob\")"
            ));
        }
        if !path.is_absolute() {
            return Err(format!(
                "[peers] {name} = {:?}: give the peer's home as an absolute path",
                path.display()
            ));
        }
    }
    for dir in &collaborations.workdirs {
        if !dir.is_absolute() {
            return Err(format!(
                "[collaborations] workdirs: {:?} is not an absolute path",
                dir.display()
            ));
        }
    }
    if collaborations.max_rounds == 0 {
        return Err("[collaborations] max_rounds must be at least 1".into());
    }
    Ok(())
}
