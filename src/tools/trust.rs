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

/// The digest trust compares: SHA-256 of the file's bytes, in hex. A
/// home pulled from elsewhere must not carry a manifest made to match the
/// digest of the one the operator read, as a 64-bit FNV would allow.
pub fn digest(bytes: &[u8]) -> String {
    crate::stamp::sha256_hex(bytes)
}

/// The digest trust kept before (16 hex digits of FNV-1a).
fn legacy_digest(bytes: &[u8]) -> String {
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
        match json_file::load::<Trust>(&home.path(rel::TRUST)) {
            Ok(trust) => trust.unwrap_or_default().upgraded(home),
            Err(e) => {
                // Nothing trusted is the safe reading; it is said, not silent.
                tracing::warn!("{e}; no operator tool runs until you run `hearth trust` again");
                Trust::default()
            }
        }
    }

    /// Entries kept with the older digest, upgraded where the file still
    /// has the bytes they were trusted with (and saved so, once); the rest
    /// (a file changed since, `[flares] exec`) trust nothing, said.
    fn upgraded(mut self, home: &Home) -> Trust {
        let mut changed = false;
        let mut stale = Vec::new();
        for (file, kept) in &mut self.files {
            if kept.len() != 16 {
                continue;
            }
            let bytes = std::fs::read(home.path(file)).ok();
            match bytes.filter(|b| legacy_digest(b) == *kept) {
                Some(bytes) => {
                    *kept = digest(&bytes);
                    changed = true;
                }
                None => stale.push(file.clone()),
            }
        }
        self.files.retain(|file, _| !stale.contains(file));
        if !stale.is_empty() {
            tracing::warn!(
                "{}: trusted with hearth's older digest and changed since (or not a file): {}; \
                 they do not run until you read them and run `hearth trust` again",
                rel::TRUST,
                stale.join(", ")
            );
        }
        if changed || !stale.is_empty() {
            if let Err(e) = json_file::save(&home.path(rel::TRUST), &self) {
                tracing::warn!("{e}");
            }
        }
        self
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

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // fixtures, not state
mod tests {
    use super::*;

    #[test]
    fn trust_of_the_older_digest_is_upgraded_only_for_the_bytes_it_was_given() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("hearth.toml"), "").unwrap();
        std::fs::create_dir_all(dir.path().join("tools")).unwrap();
        std::fs::create_dir_all(dir.path().join(".hearth")).unwrap();
        let home = Home::open(dir.path()).unwrap();
        let same = b"name = \"clock\"\n".to_vec();
        std::fs::write(home.path("tools/clock.toml"), &same).unwrap();
        std::fs::write(home.path("tools/mail.toml"), "name = \"mail\" # changed\n").unwrap();
        let kept = serde_json::json!({"version": 1, "files": {
            "tools/clock.toml": legacy_digest(&same),
            "tools/mail.toml": legacy_digest(b"name = \"mail\"\n"),
            FLARES_EXEC: legacy_digest(b"notify-send"),
        }});
        std::fs::write(home.path(rel::TRUST), kept.to_string()).unwrap();
        let trust = Trust::load(&home);
        assert!(trust.trusts("tools/clock.toml", &digest(&same)));
        assert!(!trust.trusts("tools/mail.toml", &digest(b"name = \"mail\" # changed\n")));
        assert!(
            !trust.trusts_exec("notify-send"),
            "an exec of the older digest is trusted again by hand"
        );
        // Saved upgraded: the next reader finds SHA-256 and nothing stale.
        let saved = std::fs::read_to_string(home.path(rel::TRUST)).unwrap();
        assert!(
            saved.contains(&digest(&same)) && !saved.contains("mail.toml"),
            "{saved}"
        );
        assert_eq!(Trust::load(&home), trust);
    }
}
