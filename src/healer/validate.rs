//! Layer 1: after each tick, every file the tick changed that hearth itself
//! parses must still parse. A core memory whose front matter the agent broke
//! would silently drop out of the identity layer next tick; a broken tool
//! manifest would break every tick after. Such a file is restored from the
//! last commit (or removed, if the tick created it) and a `layer1` flare
//! names the file and the parse error. The broken text is quoted in the
//! flare, so nothing is lost.

use crate::mailbox::cause::Cause;
use chrono::{DateTime, Utc};

use super::HealError;
use crate::atomic;
use crate::home::Home;
use crate::io_hint::IoError;
use crate::mailbox::outbox::{self, Letter};
use crate::memory::Memory;
use crate::repo::Repo;

/// One file layer 1 put back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Restored {
    /// The memory, relative to the home.
    pub path: String,
    /// What was wrong with the tick's version of it.
    pub problem: String,
    /// Whether a committed version was restored (else the file was removed).
    pub from_commit: bool,
}

/// Checks the files a tick `touched` and restores the broken ones.
pub fn validate(
    home: &Home,
    repo: &Repo,
    tick: u64,
    touched: &[String],
    now: DateTime<Utc>,
) -> Result<Vec<Restored>, HealError> {
    let mut restored = Vec::new();
    for rel in touched {
        let Some(problem) = parse_problem(home, rel) else {
            continue;
        };
        let previous = repo
            .last_good_version(rel, 1, |_| true)?
            .map(|(bytes, _)| bytes);
        let broken = std::fs::read(home.root().join(rel)).unwrap_or_default();
        match &previous {
            Some(bytes) => atomic::write(&home.root().join(rel), bytes)?,
            None => std::fs::remove_file(home.root().join(rel))
                .map_err(|source| HealError::Io(IoError::at(rel.clone(), source)))?,
        }
        let action = if previous.is_some() {
            "restored it from the last commit"
        } else {
            "removed it (it was new in this tick)"
        };
        let quoted: String = String::from_utf8_lossy(&broken)
            .chars()
            .filter(|c| !c.is_control() || *c == '\n' || *c == '\t')
            .take(4000)
            .collect();
        let body = format!(
            "Tick {tick} left {rel} unparseable:\n\n    {problem}\n\nhearth {action}, so the next \
             tick loads it as before. What the tick wrote:\n\n```\n{quoted}\n```\n"
        );
        let mut flare = Letter::flare(
            Cause::Layer1,
            format!("{rel} did not parse after tick {tick}"),
            body,
        );
        flare.tick = Some(tick);
        outbox::post(home, &flare, now)?;
        tracing::warn!("layer 1: {problem}; {action}");
        restored.push(Restored {
            path: rel.clone(),
            problem,
            from_commit: previous.is_some(),
        });
    }
    Ok(restored)
}

/// The parse error of `rel`, if hearth parses it and it does not parse.
fn parse_problem(home: &Home, rel: &str) -> Option<String> {
    let path = home.root().join(rel);
    let bytes = std::fs::read(&path).ok()?;
    if rel.starts_with("memory/") && rel.ends_with(".md") {
        let memory = Memory::parse(rel, &bytes);
        let is_core =
            rel.starts_with("memory/core/") || String::from_utf8_lossy(&bytes).contains("core:");
        return memory.problem.filter(|_| is_core).map(|p| p.to_string());
    }
    if rel.starts_with("tools/") && rel.ends_with(".toml") {
        let text = String::from_utf8_lossy(&bytes);
        return toml::from_str::<toml::Table>(&text)
            .err()
            .map(|e| format!("{rel}: {}", e.message()));
    }
    None
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // fixtures, not state
mod tests {
    use super::*;
    use crate::repo::Identity;

    fn setup() -> (tempfile::TempDir, Home, Repo) {
        let dir = tempfile::tempdir().unwrap();
        let now = DateTime::from_timestamp(1_700_000_000, 0).unwrap();
        let report = crate::home::init(dir.path(), now).unwrap();
        let repo = Repo::open(dir.path()).unwrap();
        (dir, report.home, repo)
    }

    #[test]
    fn a_core_memory_broken_by_a_tick_is_restored_and_flared() {
        let (_d, home, repo) = setup();
        let now = DateTime::from_timestamp(1_700_000_100, 0).unwrap();
        let rel = "memory/core/values.md".to_string();
        let good = std::fs::read_to_string(home.root().join(&rel)).unwrap();
        std::fs::write(
            home.root().join(&rel),
            "---\ntags: [identity\n---\nbroken\n",
        )
        .unwrap();
        std::fs::write(
            home.root().join("memory/notes.md"),
            "---\nnot: [yaml\n---\n",
        )
        .unwrap();
        let restored = validate(
            &home,
            &repo,
            7,
            &[rel.clone(), "memory/notes.md".into()],
            now,
        )
        .unwrap();
        assert_eq!(restored.len(), 1, "non-core memories are recall's business");
        assert_eq!(
            std::fs::read_to_string(home.root().join(&rel)).unwrap(),
            good
        );
        let flares: Vec<_> = std::fs::read_dir(home.outbox_dir())
            .unwrap()
            .flatten()
            .collect();
        assert_eq!(flares.len(), 1);
        let text = std::fs::read_to_string(flares[0].path()).unwrap();
        assert!(text.contains("flare: \"layer1\""), "{text}");
        assert!(text.contains("memory/core/values.md:"), "{text}");
        assert!(
            text.contains("tags: [identity"),
            "the broken text is kept in the flare"
        );
    }

    #[test]
    fn a_new_broken_core_memory_is_removed() {
        let (_d, home, repo) = setup();
        let now = DateTime::from_timestamp(1_700_000_100, 0).unwrap();
        let rel = "memory/core/new.md".to_string();
        std::fs::write(home.root().join(&rel), "---\ncore: maybe\n---\n").unwrap();
        let restored = validate(&home, &repo, 3, std::slice::from_ref(&rel), now).unwrap();
        assert!(!restored[0].from_commit);
        assert!(!home.root().join(&rel).exists());
        let _ = repo.commit(&["."], &Identity::hearth(), "x", now).unwrap();
    }
}
