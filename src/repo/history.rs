//! Reading the home's history: the last good commit (`refs/hearth/good`,
//! or a walk back for an exit-0 tick) and a file as a commit had it. (Who
//! wrote which lines is [`super::origins`]'.)

use std::path::Path;

use chrono::{DateTime, Utc};
use git2::Oid;

use super::{Repo, RepoError, GOOD_REF};

impl Repo {
    /// Points `refs/hearth/good` at `commit`. The marker keeps no reflog:
    /// it moves every tick, and its log would be a third of `.git`'s growth
    /// (HEAD's and the branch's logs keep the history of moves).
    pub fn set_good(&self, commit: &str) -> Result<(), RepoError> {
        let oid = Oid::from_str(commit).map_err(|e| self.error(e))?;
        self.git
            .reference(GOOD_REF, oid, true, "hearth: tick exited 0")
            .map_err(|e| self.error(e))?;
        self.drop_reflog(GOOD_REF);
        Ok(())
    }

    /// Removes the reflog of one of hearth's marker refs (never a branch's).
    pub(super) fn drop_reflog(&self, name: &str) {
        if let Err(e) = self.git.reflog_delete(name) {
            tracing::debug!("reflog of {name} not removed: {e}");
        }
    }

    /// The commit `refs/hearth/good` names, if any.
    pub fn good(&self) -> Option<String> {
        self.git
            .refname_to_id(GOOD_REF)
            .ok()
            .map(|oid| oid.to_string())
    }

    /// The last good commit: `refs/hearth/good` (O(1)), else the newest
    /// commit on HEAD's first-parent line whose trailers say `Hearth-Exit: 0`.
    pub fn last_good(&self) -> Result<Option<String>, RepoError> {
        if let Some(good) = self.good() {
            return Ok(Some(good));
        }
        let Some(mut commit) = self.head_commit()? else {
            return Ok(None);
        };
        loop {
            let message = commit.message().unwrap_or("");
            if message.starts_with("tick ")
                && super::trailers::number(message, super::trailers::EXIT) == Some(0)
            {
                return Ok(Some(commit.id().to_string()));
            }
            match commit.parent(0) {
                Ok(parent) => commit = parent,
                Err(_) => return Ok(None),
            }
        }
    }

    /// The commit that brought `rel` into HEAD's history: the oldest on
    /// HEAD's first-parent line, back from HEAD, whose tree holds `rel` as
    /// HEAD has it. `None` when HEAD does not hold it (not committed yet).
    /// The walk stops at commits older than `not_before` (less a minute,
    /// for clocks that disagree): a file written then cannot be older, and
    /// a long history is not read to the root.
    ///
    /// A step whose parent has the same directory (one tree id, looked up
    /// in the small root tree) holds the file unchanged without reading
    /// that directory: a peer's busy `outbox/` of thousands of files is
    /// read only where it changed.
    pub fn introduced(&self, rel: &str, not_before: DateTime<Utc>) -> Option<String> {
        let (dir, name) = rel.rsplit_once('/').unwrap_or(("", rel));
        self.introduced_all(dir, &[(name.to_string(), not_before)])
            .remove(name)
    }

    /// [`Self::introduced`] for many files of one directory `dir` at once,
    /// each with the time it was written: one walk back along the first
    /// parents, reading `dir` only where its tree changed, however many
    /// files are asked for (a backlog after an outage is hundreds). The
    /// files HEAD does not hold are left out.
    pub fn introduced_all(
        &self,
        dir: &str,
        files: &[(String, DateTime<Utc>)],
    ) -> std::collections::HashMap<String, String> {
        let mut found = std::collections::HashMap::new();
        let dir_path = Path::new(dir);
        let Some(mut commit) = self.head_commit().ok().flatten() else {
            return found;
        };
        let Some(head_dir) = dir_tree_of(&self.git, &commit, dir_path) else {
            return found;
        };
        // Each file HEAD holds: its blob, and the oldest commit time it
        // can be in (written then, less a minute for clocks that disagree).
        let mut pending: Vec<(&str, Oid, i64)> = files
            .iter()
            .filter_map(|(name, written)| {
                let blob = head_dir.get_name(name)?.id();
                Some((name.as_str(), blob, written.timestamp() - 60))
            })
            .collect();
        let mut dir_id = head_dir.id();
        while !pending.is_empty() {
            let Ok(parent) = commit.parent(0) else { break };
            let parent_time = parent.time().seconds();
            let parent_dir = dir_tree_of(&self.git, &parent, dir_path);
            let unchanged = parent_dir.as_ref().is_some_and(|t| t.id() == dir_id);
            let id = commit.id().to_string();
            pending.retain(|(name, blob, oldest)| {
                let holds = parent_time >= *oldest
                    && (unchanged
                        || parent_dir
                            .as_ref()
                            .and_then(|t| t.get_name(name))
                            .is_some_and(|e| e.id() == *blob));
                if !holds {
                    found.insert(name.to_string(), id.clone());
                }
                holds
            });
            let Some(parent_dir) = parent_dir else { break };
            dir_id = parent_dir.id();
            commit = parent;
        }
        let id = commit.id().to_string();
        for (name, _, _) in pending {
            found.insert(name.to_string(), id.clone());
        }
        found
    }

    /// Every file at or under `rel` in `commit`, as (path, bytes).
    pub fn files_at(&self, commit: &str, rel: &str) -> Result<Vec<(String, Vec<u8>)>, RepoError> {
        let oid = Oid::from_str(commit).map_err(|e| self.error(e))?;
        let tree = self
            .git
            .find_commit(oid)
            .and_then(|c| c.tree())
            .map_err(|e| self.error(e))?;
        let Ok(entry) = tree.get_path(Path::new(rel)) else {
            return Ok(Vec::new());
        };
        let object = entry.to_object(&self.git).map_err(|e| self.error(e))?;
        if let Some(blob) = object.as_blob() {
            return Ok(vec![(rel.to_string(), blob.content().to_vec())]);
        }
        let Some(subtree) = object.as_tree() else {
            return Ok(Vec::new());
        };
        let mut files = Vec::new();
        subtree
            .walk(git2::TreeWalkMode::PreOrder, |dir, entry| {
                if let Some(blob) = entry
                    .to_object(&self.git)
                    .ok()
                    .and_then(|o| o.into_blob().ok())
                {
                    // A name that is not UTF-8 is kept (lossily), never
                    // emptied into its folder's path.
                    let name = String::from_utf8_lossy(entry.name_bytes());
                    files.push((format!("{rel}/{dir}{name}"), blob.content().to_vec()));
                }
                git2::TreeWalkResult::Ok
            })
            .map_err(|e| self.error(e))?;
        Ok(files)
    }

    /// The newest committed version of `rel` (walking first parents back
    /// from HEAD, at most `depth` commits) that `accept` takes, with the
    /// short id of the commit it was found in. A broken file may itself have
    /// been committed (say, as a hand edit), so HEAD alone is not enough.
    pub fn last_good_version(
        &self,
        rel: &str,
        depth: usize,
        accept: impl Fn(&[u8]) -> bool,
    ) -> Result<Option<(Vec<u8>, String)>, RepoError> {
        let Some(mut commit) = self.head_commit()? else {
            return Ok(None);
        };
        let mut last_seen = None;
        for _ in 0..depth {
            let tree = commit.tree().map_err(|e| self.error(e))?;
            if let Ok(entry) = tree.get_path(Path::new(rel)) {
                if last_seen != Some(entry.id()) {
                    last_seen = Some(entry.id());
                    if let Ok(blob) = self.git.find_blob(entry.id()) {
                        if accept(blob.content()) {
                            let short = commit.id().to_string()[..7].to_string();
                            return Ok(Some((blob.content().to_vec(), short)));
                        }
                    }
                }
            }
            match commit.parent(0) {
                Ok(parent) => commit = parent,
                Err(_) => break,
            }
        }
        Ok(None)
    }

    /// The messages of the first-parent commits after `from` up to HEAD,
    /// newest first (at most `limit`); empty when `from` is HEAD, and all
    /// `limit` when `from` is not on that line.
    pub fn messages_since(&self, from: &str, limit: usize) -> Vec<String> {
        let stop = Oid::from_str(from).ok();
        self.first_parent_since(stop, limit)
            .0
            .iter()
            .filter_map(|id| self.git.find_commit(*id).ok())
            .map(|c| c.message().unwrap_or("").to_string())
            .collect()
    }

    /// The first-parent commits of HEAD after `stop`, newest first, at
    /// most `limit`, and whether `stop` was reached (false: it is not on
    /// this line — history was rewritten — or there was none, or the
    /// limit came first).
    pub(super) fn first_parent_since(&self, stop: Option<Oid>, limit: usize) -> (Vec<Oid>, bool) {
        let mut ids = Vec::new();
        let Ok(Some(mut commit)) = self.head_commit() else {
            return (ids, false);
        };
        while ids.len() < limit {
            if Some(commit.id()) == stop {
                return (ids, true);
            }
            ids.push(commit.id());
            match commit.parent(0) {
                Ok(parent) => commit = parent,
                Err(_) => break,
            }
        }
        (ids, false)
    }

    /// The tree of `commit`'s first parent: `None` for a root commit, an
    /// error when the parent cannot be read (a lost object is not a root).
    pub(super) fn first_parent_tree<'r>(
        &self,
        commit: &git2::Commit<'r>,
    ) -> Result<Option<git2::Tree<'r>>, RepoError> {
        match commit.parent_count() {
            0 => Ok(None),
            _ => commit
                .parent(0)
                .and_then(|p| p.tree())
                .map(Some)
                .map_err(|e| self.error(e)),
        }
    }

    /// Puts the index entries of `paths` back to HEAD's (as `git reset --
    /// PATHS`): what a commit killed midway staged is not left for the next
    /// commit to take.
    pub fn unstage(&self, paths: &[&str]) -> Result<(), RepoError> {
        if paths.is_empty() {
            return Ok(());
        }
        let head = self.head_commit()?.map(|c| c.into_object());
        self.index_fresh.set(false);
        self.git
            .reset_default(head.as_ref(), paths.iter())
            .map_err(|e| self.error(e))
    }

    /// The bytes `rel` has in HEAD's tree, with HEAD's id, if it is a file
    /// there.
    pub fn committed_file(&self, rel: &str) -> Option<(Vec<u8>, String)> {
        let commit = self.head_commit().ok().flatten()?;
        let entry = commit.tree().ok()?.get_path(Path::new(rel)).ok()?;
        let blob = entry.to_object(&self.git).ok()?.into_blob().ok()?;
        Some((blob.content().to_vec(), commit.id().to_string()))
    }

    /// The files under `dir` in HEAD's tree (every depth), as paths
    /// relative to the root.
    pub fn committed_names_under(&self, dir: &str) -> Vec<String> {
        let Some(tree) = self
            .head_commit()
            .ok()
            .flatten()
            .and_then(|c| c.tree().ok())
            .and_then(|t| t.get_path(Path::new(dir)).ok())
            .and_then(|e| e.to_object(&self.git).ok())
            .and_then(|o| o.into_tree().ok())
        else {
            return Vec::new();
        };
        let mut names = Vec::new();
        let _ = tree.walk(git2::TreeWalkMode::PreOrder, |parent, entry| {
            if entry.kind() == Some(git2::ObjectType::Blob) {
                let name = String::from_utf8_lossy(entry.name_bytes());
                names.push(format!("{dir}/{parent}{name}"));
            }
            git2::TreeWalkResult::Ok
        });
        names
    }

    /// The message of `commit`, if it exists.
    pub fn message(&self, commit: &str) -> Option<String> {
        let oid = Oid::from_str(commit).ok()?;
        let commit = self.git.find_commit(oid).ok()?;
        commit.message().map(str::to_string)
    }
}

/// The tree of `dir` in `commit` (its root tree for an empty `dir`).
fn dir_tree_of<'r>(
    git: &'r git2::Repository,
    commit: &git2::Commit<'r>,
    dir: &Path,
) -> Option<git2::Tree<'r>> {
    let root = commit.tree().ok()?;
    if dir.as_os_str().is_empty() {
        return Some(root);
    }
    root.get_path(dir)
        .ok()?
        .to_object(git)
        .ok()?
        .into_tree()
        .ok()
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // fixtures, not state
mod tests {
    use super::*;
    use crate::repo::Identity;

    fn at(s: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_700_000_000 + s, 0).unwrap()
    }

    #[test]
    fn the_commit_that_brought_a_file_in_is_found_behind_later_ones() {
        let dir = tempfile::tempdir().unwrap();
        let repo = Repo::init(dir.path()).unwrap();
        let write = |rel: &str, text: &str| std::fs::write(dir.path().join(rel), text).unwrap();
        let commit = |s: i64| {
            repo.commit(&["."], &Identity::hearth(), "c", at(s))
                .unwrap()
                .unwrap()
        };
        write("a", "a");
        commit(0);
        assert_eq!(repo.introduced("h", at(0)), None, "not committed");
        write("h", "handoff");
        let brought = commit(10);
        write("a", "b");
        commit(20);
        write("a", "c");
        commit(30);
        assert_eq!(repo.introduced("h", at(10)), Some(brought.clone()));
        // Rewritten later: the commit that holds it as it is now.
        write("h", "handoff, edited");
        let edited = commit(40);
        assert_eq!(repo.introduced("h", at(10)), Some(edited.clone()));
        // The walk does not go back past `not_before` (less a minute).
        write("a", "d");
        let last = commit(500);
        assert_eq!(repo.introduced("h", at(10)), Some(edited));
        assert_eq!(repo.introduced("h", at(400)), Some(last));
    }
}
