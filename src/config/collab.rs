//! `[peers]` and `[collaborations]` (DESIGN 14): the other homes on this
//! host, and where collaborations may work.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::Invalid;

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

/// The name a text suggests under [`valid_name`]'s rule: "Design X, v2"
/// → "design-x-v2" (empty when it has no letters or digits). An agent's
/// name among its peers is this of its home directory's name.
pub fn name_for(text: &str) -> String {
    let mut name = String::new();
    for c in text.chars().flat_map(char::to_lowercase) {
        if c.is_ascii_alphanumeric() {
            name.push(c);
        } else if !name.is_empty() && !name.ends_with('-') {
            name.push('-');
        }
        if name.len() >= 64 {
            break;
        }
    }
    name.trim_end_matches('-').to_string()
}

/// What is wrong with `[peers]` and `[collaborations]`, if anything.
pub(crate) fn validate(
    peers: &Peers,
    collaborations: &CollaborationsConfig,
) -> Result<(), Invalid> {
    for (name, path) in peers {
        if !valid_name(name) {
            return Err(Invalid::at(
                "peers",
                name,
                format!(
                    "[peers] {name:?}: a peer's name is lowercase letters, digits and dashes \
                     (its hearth@NAME instance name, e.g. bob = \"/var/lib/hearth/bob\")"
                ),
            ));
        }
        if !path.is_absolute() {
            return Err(Invalid::at(
                "peers",
                name,
                format!(
                    "[peers] {name} = {:?}: give the peer's home as an absolute path",
                    path.display()
                ),
            ));
        }
        // The peer calls itself by its home directory's name: handoffs are
        // addressed, and rounds recorded, under that name on both sides.
        let own = path
            .file_name()
            .map(|d| name_for(&d.to_string_lossy()))
            .unwrap_or_default();
        if own != *name {
            return Err(Invalid::at(
                "peers",
                name,
                format!(
                    "[peers] {name} = {:?}: that agent's name is its home directory's name, \
                     {own:?}; write it as {own} = {:?}",
                    path.display(),
                    path.display()
                ),
            ));
        }
    }
    for dir in &collaborations.workdirs {
        if !dir.is_absolute() {
            return Err(Invalid::at(
                "collaborations",
                "workdirs",
                format!(
                    "[collaborations] workdirs: {:?} is not an absolute path",
                    dir.display()
                ),
            ));
        }
    }
    if collaborations.max_rounds == 0 {
        return Err(Invalid::at(
            "collaborations",
            "max_rounds",
            "[collaborations] max_rounds must be at least 1",
        ));
    }
    Ok(())
}
