//! Trust before running commands from a home you did not write (DESIGN 8):
//! a home cloned or pulled from elsewhere must not run its `tools/*.toml`
//! commands or its `[flares] exec` unattended. `hearth trust` records a
//! digest of each command-bearing file in `.hearth/trust.json` (never
//! committed, so a pull cannot bring trust along); a command whose file
//! changed since is not run. `hearth init` trusts what it writes.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::atomic;
use crate::home::layout::rel;
use crate::home::Home;
use crate::json_file::{self, JsonFile};

/// The digest trust compares (hex of FNV-1a over the file's bytes).
pub fn digest(bytes: &[u8]) -> String {
    format!("{:016x}", crate::stamp::fnv1a(bytes))
}

/// The key `[flares] exec` is trusted under.
pub const FLARES_EXEC: &str = "hearth.toml [flares] exec";

/// What the operator trusted: file (or [`FLARES_EXEC`]) → digest.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Trust {
    /// The digests.
    pub files: BTreeMap<String, String>,
}

impl JsonFile for Trust {
    const VERSION: u32 = 1;
}

impl Trust {
    /// What is trusted (nothing, if the file is missing or broken).
    pub fn load(home: &Home) -> Trust {
        match json_file::load(&home.path(rel::TRUST)) {
            Ok(trust) => trust.unwrap_or_default(),
            Err(e) => {
                // Nothing trusted is the safe reading; it is said, not silent.
                tracing::warn!("{e}; no operator tool runs until you run `hearth trust` again");
                Trust::default()
            }
        }
    }

    /// Whether `file` is trusted with this content digest.
    pub fn trusts(&self, file: &str, digest: &str) -> bool {
        self.files.get(file).is_some_and(|d| d == digest)
    }

    /// Whether `[flares] exec = exec` may run.
    pub fn trusts_exec(&self, exec: &str) -> bool {
        exec.trim().is_empty() || self.trusts(FLARES_EXEC, &digest(exec.as_bytes()))
    }
}

/// Trusts every `tools/*.toml` and `jobs/*.toml` (whose `check` is a
/// command) as they are now and `[flares] exec = exec`, and returns what
/// is trusted. Only the operator's command calls this.
pub fn trust_now(home: &Home, exec: &str) -> Result<Trust, atomic::WriteError> {
    let mut trust = Trust::default();
    let dirs = [rel::TOOLS, rel::JOBS];
    for entry in dirs
        .iter()
        .flat_map(|dir| std::fs::read_dir(home.path(dir)))
        .flatten()
        .flatten()
    {
        let path = entry.path();
        if path.extension().is_some_and(|x| x == "toml") {
            if let Ok(bytes) = std::fs::read(&path) {
                trust.files.insert(home.relative(&path), digest(&bytes));
            }
        }
    }
    if !exec.trim().is_empty() {
        trust
            .files
            .insert(FLARES_EXEC.into(), digest(exec.as_bytes()));
    }
    json_file::save(&home.path(rel::TRUST), &trust)?;
    Ok(trust)
}
