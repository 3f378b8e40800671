//! Which words outside exchanges ever added, so that judging a file's
//! lines by their origin (a `git blame`, which walks history until every
//! line is accounted for: a note unchanged for 100,000 commits costs a walk
//! of all of them) is only paid for a file that holds such words — and
//! which *names* they chose: a file or folder an outside exchange created
//! is named by words from outside, and a listing shows them.
//!
//! The set: a digest of each trimmed line added by a commit that carries a
//! `Hearth-Outside` trailer, on any line of HEAD's history (every parent,
//! not the first only: a merged branch's commits count), and a digest of
//! each path such a commit created (files and the folders new with them).
//! It is kept in `.git/hearth/outside-lines.json` with the HEAD it was made
//! at and brought up to date by reading only the commits since (their
//! messages; a diff only for the outside ones). A line whose digest is not
//! in the set cannot have an outside origin, whatever moved or renamed it
//! since; one whose digest is still needs its blame (the operator may have
//! typed the same words). A cache lost, stale, half-written or of another
//! format costs a rebuild, never a wrong answer; a shallow history cannot
//! be read whole, and is an error, never an empty set.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;

use git2::{Delta, DiffOptions, Oid};
use serde::{Deserialize, Serialize};

use super::{Repo, RepoError};

/// The digest a line is known by here ([`crate::stamp::line_key`]).
pub fn line_digest(line: &str) -> String {
    crate::stamp::line_key(line)
}

/// The digest a path (relative to the home, no trailing `/`) is known by.
pub fn name_digest(path: &str) -> String {
    crate::stamp::sha256_hex(format!("name\0{}", path.trim_end_matches('/')).as_bytes())
}

/// The words outside exchanges added: their lines and their names.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OutsideWords {
    /// [`line_digest`]s of the lines they added.
    pub lines: HashSet<String>,
    /// [`name_digest`]s of the files and folders they created.
    pub names: HashSet<String>,
}

/// The format of the cache; a cache of another (the 64-bit digests, the
/// first-parent walk without names) does not parse, and is rebuilt.
const CACHE_FORMAT: u32 = 3;

/// What the cache file holds.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Cache {
    /// [`CACHE_FORMAT`].
    format: u32,
    /// The commit the set is complete up to, full id.
    head: String,
    /// Digests of the lines outside commits added.
    digests: Vec<String>,
    /// Digests of the paths they created.
    names: Vec<String>,
}

impl Repo {
    fn outside_cache(&self) -> PathBuf {
        self.git.path().join("hearth/outside-lines.json")
    }

    /// The digests of every line an outside exchange's commit added, and
    /// of every path one created, on HEAD's whole history. An error when
    /// the history cannot be read whole (a shallow clone, a missing
    /// object): the caller then cannot tell, and judges it outside.
    pub fn outside_words(&self) -> Result<Arc<OutsideWords>, RepoError> {
        if self.git.is_shallow() {
            return Err(RepoError::Git {
                path: self.root.clone(),
                message: "the history is shallow (a clone with --depth): who wrote the oldest \
                          lines cannot be read; `git fetch --unshallow` fetches the rest"
                    .into(),
            });
        }
        let Some(head) = self.head_commit()? else {
            return Ok(Arc::default());
        };
        if let Some((at, words)) = self.outside_memo.borrow().as_ref() {
            if *at == head.id() {
                return Ok(Arc::clone(words));
            }
        }
        let words = Arc::new(self.outside_words_at(&head)?);
        *self.outside_memo.borrow_mut() = Some((head.id(), Arc::clone(&words)));
        Ok(words)
    }

    /// The set at `head`, from the cache file and the commits since.
    fn outside_words_at(&self, head: &git2::Commit<'_>) -> Result<OutsideWords, RepoError> {
        let cache: Cache = std::fs::read(self.outside_cache())
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .filter(|c: &Cache| c.format == CACHE_FORMAT)
            .unwrap_or_default();
        let mut words = OutsideWords {
            lines: cache.digests.into_iter().collect(),
            names: cache.names.into_iter().collect(),
        };
        let known = Oid::from_str(&cache.head).ok();
        if known == Some(head.id()) {
            return Ok(words);
        }
        // From the commit the cache is complete at, over every parent; if
        // HEAD does not descend from it (history rewritten), all of it.
        let reached =
            known.is_some_and(|k| self.git.graph_descendant_of(head.id(), k).unwrap_or(false));
        if !reached {
            words = OutsideWords::default();
        }
        let mut walk = self.git.revwalk().map_err(|e| self.error(e))?;
        walk.push(head.id()).map_err(|e| self.error(e))?;
        if let (true, Some(k)) = (reached, known) {
            walk.hide(k).map_err(|e| self.error(e))?;
        }
        for id in walk {
            let commit = self
                .git
                .find_commit(id.map_err(|e| self.error(e))?)
                .map_err(|e| self.error(e))?;
            if super::trailers::outside(commit.message().unwrap_or("")).is_empty() {
                continue;
            }
            self.add_outside_commit(&commit, &mut words)?;
        }
        self.save_outside_cache(&head.id(), &words);
        Ok(words)
    }

    /// Adds what one outside commit added: its lines, and the paths (with
    /// their new folders) it created.
    fn add_outside_commit(
        &self,
        commit: &git2::Commit<'_>,
        words: &mut OutsideWords,
    ) -> Result<(), RepoError> {
        let parent_tree = self.first_parent_tree(commit)?;
        let tree = commit.tree().map_err(|e| self.error(e))?;
        let mut opts = DiffOptions::new();
        opts.context_lines(0);
        let diff = self
            .git
            .diff_tree_to_tree(parent_tree.as_ref(), Some(&tree), Some(&mut opts))
            .map_err(|e| self.error(e))?;
        for delta in diff.deltas() {
            if !matches!(
                delta.status(),
                Delta::Added | Delta::Renamed | Delta::Copied
            ) {
                continue;
            }
            // Lossily when not UTF-8, as a listing reads it: a name is
            // recorded whatever bytes it is made of, never skipped.
            let Some(path) = delta.new_file().path_bytes() else {
                continue;
            };
            let path = String::from_utf8_lossy(path);
            words.names.insert(name_digest(&path));
            // The folders that are new with it were named by it too.
            let mut dir = std::path::Path::new(path.as_ref()).parent();
            while let Some(d) = dir.and_then(|d| d.to_str()).filter(|d| !d.is_empty()) {
                let existed = parent_tree
                    .as_ref()
                    .is_some_and(|t| t.get_path(std::path::Path::new(d)).is_ok());
                if existed {
                    break;
                }
                words.names.insert(name_digest(d));
                dir = std::path::Path::new(d).parent();
            }
        }
        diff.foreach(
            &mut |_, _| true,
            None,
            None,
            Some(&mut |_, _, line| {
                if line.origin() == '+' {
                    let text = String::from_utf8_lossy(line.content());
                    words.lines.insert(line_digest(&text));
                }
                true
            }),
        )
        .map_err(|e| self.error(e))?;
        Ok(())
    }

    /// A cache beside the objects it derives from: a failed write costs
    /// the next reader a walk, nothing else.
    fn save_outside_cache(&self, head: &Oid, words: &OutsideWords) {
        let sorted = |set: &HashSet<String>| {
            let mut v: Vec<String> = set.iter().cloned().collect();
            v.sort_unstable();
            v
        };
        let fresh = Cache {
            format: CACHE_FORMAT,
            head: head.to_string(),
            digests: sorted(&words.lines),
            names: sorted(&words.names),
        };
        if let Ok(json) = serde_json::to_vec(&fresh) {
            let path = self.outside_cache();
            if let Some(dir) = path.parent() {
                let _ = std::fs::create_dir_all(dir);
            }
            let _ = crate::atomic::write(&path, &json);
        }
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
        assert!(repo.outside_words().unwrap().lines.is_empty());
        write("mine\nStanding order 7.\n");
        let message =
            "tick 2: exit 0 (ok)\n\nHearth-Tick: 2\nHearth-Outside: inbox/a.md (from x@y.z)\n";
        repo.commit(&["."], &Identity::hearth(), message, now)
            .unwrap();
        let set = repo.outside_words().unwrap().lines.clone();
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
        assert!(repo.outside_words().unwrap().lines.is_empty());
    }
}
