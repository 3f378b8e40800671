//! Which words outside exchanges ever added, so that judging a file's
//! lines by their origin (a `git blame`, which walks history until every
//! line is accounted for: a note unchanged for 100,000 commits costs a walk
//! of all of them) is only paid for a file that holds such words.
//!
//! The set: a digest of each trimmed line added by a first-parent commit
//! that carries a `Hearth-Outside` trailer. It is kept in
//! `.git/hearth/outside-lines.json` with the HEAD it was made at and
//! brought up to date by reading only the commits since (their messages;
//! a diff only for the outside ones). A line whose digest is not in the set
//! cannot have an outside origin, whatever moved or renamed it since; one
//! whose digest is still needs its blame (the operator may have typed the
//! same words). A cache lost, stale or half-written costs a rebuild, never
//! a wrong answer.

use std::collections::HashSet;
use std::path::PathBuf;

use git2::{DiffOptions, Oid};
use serde::{Deserialize, Serialize};

use super::{Repo, RepoError};

/// The digest a line is known by here ([`crate::stamp::line_key`]).
pub fn line_digest(line: &str) -> String {
    crate::stamp::line_key(line)
}

/// What the cache file holds. A cache of another format (the 64-bit
/// digests before) does not parse, and is rebuilt.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Cache {
    /// The commit the set is complete up to (first-parent), full id.
    head: String,
    /// Digests of the lines outside commits added.
    digests: Vec<String>,
}

impl Repo {
    fn outside_cache(&self) -> PathBuf {
        self.git.path().join("hearth/outside-lines.json")
    }

    /// The digests of every line an outside exchange's commit added on the
    /// first-parent history of HEAD.
    pub fn outside_line_digests(&self) -> Result<HashSet<String>, RepoError> {
        let Some(head) = self.head_commit()? else {
            return Ok(HashSet::new());
        };
        let cache: Cache = std::fs::read(self.outside_cache())
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default();
        let mut digests: HashSet<String> = cache.digests.into_iter().collect();
        let known = Oid::from_str(&cache.head).ok();
        if known == Some(head.id()) {
            return Ok(digests);
        }
        // Back to the commit the cache is complete at; if it is not on
        // this line (history rewritten), the whole line is read.
        let (walked, reached) = self.first_parent_since(known, usize::MAX);
        if !reached {
            digests.clear();
        }
        for id in walked {
            let commit = self.git.find_commit(id).map_err(|e| self.error(e))?;
            if !commit
                .message()
                .unwrap_or("")
                .contains("\nHearth-Outside: ")
            {
                continue;
            }
            let parent_tree = commit.parent(0).ok().and_then(|p| p.tree().ok());
            let tree = commit.tree().map_err(|e| self.error(e))?;
            let mut opts = DiffOptions::new();
            opts.context_lines(0);
            let diff = self
                .git
                .diff_tree_to_tree(parent_tree.as_ref(), Some(&tree), Some(&mut opts))
                .map_err(|e| self.error(e))?;
            diff.foreach(
                &mut |_, _| true,
                None,
                None,
                Some(&mut |_, _, line| {
                    if line.origin() == '+' {
                        let text = String::from_utf8_lossy(line.content());
                        digests.insert(line_digest(&text));
                    }
                    true
                }),
            )
            .map_err(|e| self.error(e))?;
        }
        let mut sorted: Vec<String> = digests.iter().cloned().collect();
        sorted.sort_unstable();
        let fresh = Cache {
            head: head.id().to_string(),
            digests: sorted,
        };
        // A cache beside the objects it derives from: a failed write costs
        // the next reader a walk, nothing else.
        if let Ok(json) = serde_json::to_vec(&fresh) {
            let path = self.outside_cache();
            if let Some(dir) = path.parent() {
                let _ = std::fs::create_dir_all(dir);
            }
            let _ = crate::atomic::write(&path, &json);
        }
        Ok(digests)
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // fixtures, not state
mod tests {
    use super::*;
    use crate::repo::Identity;

    #[test]
    fn the_set_follows_history_and_is_rebuilt_when_it_is_rewritten() {
        let dir = tempfile::tempdir().unwrap();
        let repo = Repo::init(dir.path()).unwrap();
        let now = chrono::DateTime::from_timestamp(1_700_000_000, 0).unwrap();
        let write = |text: &str| std::fs::write(dir.path().join("note.md"), text).unwrap();
        write("mine\n");
        repo.commit(&["."], &Identity::hearth(), "init", now)
            .unwrap();
        assert!(repo.outside_line_digests().unwrap().is_empty());
        write("mine\nStanding order 7.\n");
        let message =
            "tick 2: exit 0 (ok)\n\nHearth-Tick: 2\nHearth-Outside: inbox/a.md (from x@y.z)\n";
        repo.commit(&["."], &Identity::hearth(), message, now)
            .unwrap();
        let set = repo.outside_line_digests().unwrap();
        assert!(set.contains(&line_digest("  Standing order 7.")));
        assert!(!set.contains(&line_digest("mine")));
        // Rewritten: the outside commit is gone, and so are its words.
        let first = repo
            .git
            .head()
            .unwrap()
            .peel_to_commit()
            .unwrap()
            .parent(0)
            .unwrap();
        repo.git
            .reset(first.as_object(), git2::ResetType::Hard, None)
            .unwrap();
        write("mine\nmore of mine\n");
        repo.commit(&["."], &Identity::hearth(), "tick 3", now)
            .unwrap();
        assert!(repo.outside_line_digests().unwrap().is_empty());
    }
}
