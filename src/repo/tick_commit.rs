//! A tick's own commit, found by its subject (`tick N: …`), and its patch:
//! what the operator's page shows of a tick beside its ledger line.

use chrono::{DateTime, Utc};

use super::{Repo, RepoError};

/// How far back from HEAD a tick's commit is looked for: a tick is
/// committed when it ends, so older commits cannot be it.
const SLACK_S: i64 = 24 * 3600;

impl Repo {
    /// The commit of tick `n` (its id and subject), looked for from HEAD
    /// back to a day before `ended`, when it is there.
    pub fn tick_commit(&self, n: u64, ended: DateTime<Utc>) -> Option<(String, String)> {
        let mut walk = self.git.revwalk().ok()?;
        walk.push_head().ok()?;
        let prefix = format!("tick {n}: ");
        let oldest = ended.timestamp() - SLACK_S;
        for oid in walk.flatten() {
            let commit = self.git.find_commit(oid).ok()?;
            if commit.time().seconds() < oldest {
                return None;
            }
            let subject = commit.summary().unwrap_or("");
            if subject.starts_with(&prefix) {
                return Some((oid.to_string(), subject.to_string()));
            }
        }
        None
    }

    /// Commit `id`'s patch against its first parent, at most `max_chars`
    /// (then cut, and said).
    pub fn commit_patch(&self, id: &str, max_chars: usize) -> Result<String, RepoError> {
        let oid = git2::Oid::from_str(id).map_err(|e| self.error(e))?;
        let commit = self.git.find_commit(oid).map_err(|e| self.error(e))?;
        let parent = commit.parent(0).ok().and_then(|p| p.tree().ok());
        let tree = commit.tree().map_err(|e| self.error(e))?;
        let diff = self
            .git
            .diff_tree_to_tree(parent.as_ref(), Some(&tree), None)
            .map_err(|e| self.error(e))?;
        let mut text = String::new();
        let mut cut = false;
        diff.print(git2::DiffFormat::Patch, |_, _, line| {
            if text.len() >= max_chars {
                cut = true;
                return false;
            }
            if matches!(line.origin(), '+' | '-' | ' ') {
                text.push(line.origin());
            }
            text.push_str(&String::from_utf8_lossy(line.content()));
            true
        })
        .or_else(|e| if cut { Ok(()) } else { Err(self.error(e)) })?;
        if cut {
            text.push_str("\n[… cut: the patch is longer]\n");
        }
        Ok(text)
    }
}
