//! The git side of proposals: a commit on a ref of its own, built from a
//! base tree without touching the working tree or the index; its diff
//! with who wrote each removed line; and its changes merged onto HEAD.

use chrono::{DateTime, Utc};
use git2::build::TreeUpdateBuilder;
use git2::{FileMode, Oid};

use super::origins::LineOrigin;
use super::{Identity, Repo, RepoError};

/// One file of a proposal's diff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileDiff {
    /// The path.
    pub path: String,
    /// Lines added.
    pub added: usize,
    /// Lines removed.
    pub removed: usize,
    /// The unified diff (`-`/`+`/` ` lines with `@@` hunk headers).
    pub patch: String,
    /// Each removed line: its number in the base, its text, and the
    /// commit that wrote it there (short id, author, tick number).
    pub removed_lines: Vec<RemovedLine>,
}

/// A line a proposal removes, and who wrote it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemovedLine {
    /// 1-based, in the base.
    pub line: usize,
    /// Its text.
    pub text: String,
    /// Who last wrote it there (`None`: the history could not say).
    pub origin: Option<LineOrigin>,
}

/// A proposal's changes put onto HEAD.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Merged {
    /// Each changed file's new content (`None`: deleted).
    Clean(Vec<(String, Option<Vec<u8>>)>),
    /// HEAD changed the same lines since the base: these files.
    Conflicts(Vec<String>),
}

impl Repo {
    /// Writes a commit whose parent is `base` and whose tree is `base`'s
    /// with `files` replaced (`None` removes one), and points `refname` at
    /// it (replacing what it named). Nothing else moves: not HEAD, not the
    /// index, not the working tree.
    pub fn propose(
        &self,
        refname: &str,
        base: &str,
        files: &[(String, Option<Vec<u8>>)],
        who: &Identity,
        message: &str,
        now: DateTime<Utc>,
    ) -> Result<String, RepoError> {
        let e = |e| self.error(e);
        let base = self.commit_by_id(base)?;
        let mut update = TreeUpdateBuilder::new();
        for (path, content) in files {
            match content {
                Some(bytes) => {
                    let blob = self.git.blob(bytes).map_err(e)?;
                    update.upsert(path.as_str(), blob, FileMode::Blob);
                }
                None => {
                    update.remove(path.as_str());
                }
            }
        }
        let tree_id = update
            .create_updated(&self.git, &base.tree().map_err(e)?)
            .map_err(e)?;
        let tree = self.git.find_tree(tree_id).map_err(e)?;
        let time = git2::Time::new(now.timestamp(), 0);
        let sig = git2::Signature::new(&who.name, &who.email, &time).map_err(e)?;
        let id = self
            .git
            .commit(None, &sig, &sig, message, &tree, &[&base])
            .map_err(e)?;
        self.git
            .reference(refname, id, true, "hearth: proposal")
            .map_err(e)?;
        Ok(id.to_string())
    }

    /// The commit with the full hex id `id`.
    fn commit_by_id(&self, id: &str) -> Result<git2::Commit<'_>, RepoError> {
        let e = |e| self.error(e);
        self.git
            .find_commit(Oid::from_str(id).map_err(e)?)
            .map_err(e)
    }

    /// The commit `refname` names, if it exists.
    pub fn commit_of_ref(&self, refname: &str) -> Option<String> {
        self.git
            .find_reference(refname)
            .ok()?
            .target()
            .map(|id| id.to_string())
    }

    /// The names of the refs under `prefix`.
    pub fn ref_names_under(&self, prefix: &str) -> Vec<String> {
        let Ok(names) = self.git.references_glob(&format!("{prefix}*")) else {
            return Vec::new();
        };
        names
            .flatten()
            .filter_map(|r| r.name().map(str::to_string))
            .collect()
    }

    /// Every ref under `prefix` with what its commit says: the ref, the
    /// commit, its message, its first parent, its time, and the files it
    /// changes against that parent.
    pub fn refs_under(&self, prefix: &str) -> Vec<RefCommit> {
        let Ok(refs) = self.git.references_glob(&format!("{prefix}*")) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for reference in refs.flatten() {
            let (Some(name), Some(id)) = (reference.name(), reference.target()) else {
                continue;
            };
            let Ok(commit) = self.git.find_commit(id) else {
                continue;
            };
            let parent = commit.parent(0).ok();
            let files = parent
                .as_ref()
                .and_then(|p| {
                    let diff = self
                        .git
                        .diff_tree_to_tree(
                            p.tree().ok().as_ref(),
                            commit.tree().ok().as_ref(),
                            None,
                        )
                        .ok()?;
                    Some(
                        diff.deltas()
                            .filter_map(|d| d.new_file().path().or_else(|| d.old_file().path()))
                            .map(|p| p.to_string_lossy().into_owned())
                            .collect(),
                    )
                })
                .unwrap_or_default();
            out.push(RefCommit {
                name: name.to_string(),
                commit: id.to_string(),
                message: commit.message().unwrap_or("").to_string(),
                parent: parent.map(|p| p.id().to_string()).unwrap_or_default(),
                time: DateTime::from_timestamp(commit.time().seconds(), 0).unwrap_or_default(),
                files,
            });
        }
        out
    }

    /// The messages and times of the first-parent commits of HEAD whose
    /// subject starts with `prefix`, newest first, looking at most `limit`
    /// commits back.
    pub fn subjects_starting(&self, prefix: &str, limit: usize) -> Vec<(String, DateTime<Utc>)> {
        self.first_parent_since(None, limit)
            .0
            .iter()
            .filter_map(|id| self.git.find_commit(*id).ok())
            .filter(|c| c.message().unwrap_or("").starts_with(prefix))
            .map(|c| {
                let time = DateTime::from_timestamp(c.time().seconds(), 0).unwrap_or_default();
                (c.message().unwrap_or("").to_string(), time)
            })
            .collect()
    }

    /// Removes `refname` (gone already is fine).
    pub fn delete_ref(&self, refname: &str) -> Result<(), RepoError> {
        match self.git.find_reference(refname) {
            Ok(mut r) => r.delete().map_err(|e| self.error(e)),
            Err(_) => Ok(()),
        }
    }

    /// What `commit` changes against its first parent, file by file, and
    /// who wrote each line it removes (blame at the parent).
    pub fn proposal_diff(&self, commit: &str) -> Result<Vec<FileDiff>, RepoError> {
        let e = |e| self.error(e);
        let commit = self.commit_by_id(commit)?;
        let parent = commit.parent(0).map_err(e)?;
        let diff = self
            .git
            .diff_tree_to_tree(
                Some(&parent.tree().map_err(e)?),
                Some(&commit.tree().map_err(e)?),
                None,
            )
            .map_err(e)?;
        let mut files = Vec::new();
        for i in 0..diff.deltas().len() {
            let Some(patch) = git2::Patch::from_diff(&diff, i).map_err(e)? else {
                continue;
            };
            let delta = patch.delta();
            let path = delta
                .new_file()
                .path()
                .or_else(|| delta.old_file().path())
                .map(|p| p.to_string_lossy().into_owned())
                .unwrap_or_default();
            let (_, added, removed) = patch.line_stats().map_err(e)?;
            let mut text = String::new();
            let mut removed_lines = Vec::new();
            for h in 0..patch.num_hunks() {
                let (hunk, lines) = patch.hunk(h).map_err(e)?;
                text.push_str(String::from_utf8_lossy(hunk.header()).trim_end());
                text.push('\n');
                for l in 0..lines {
                    let line = patch.line_in_hunk(h, l).map_err(e)?;
                    let content = String::from_utf8_lossy(line.content());
                    let content = content.trim_end_matches('\n');
                    let origin = line.origin();
                    if matches!(origin, '+' | '-' | ' ') {
                        text.push(origin);
                        text.push_str(content);
                        text.push('\n');
                    }
                    if origin == '-' {
                        if let Some(n) = line.old_lineno() {
                            removed_lines.push(RemovedLine {
                                line: n as usize,
                                text: content.to_string(),
                                origin: self.line_origin_at(parent.id(), &path, n as usize),
                            });
                        }
                    }
                }
            }
            files.push(FileDiff {
                path,
                added,
                removed,
                patch: text,
                removed_lines,
            });
        }
        Ok(files)
    }

    /// The changes of `commit` (against its first parent) merged onto
    /// HEAD: each file it changes as the merge leaves it, or the files
    /// where HEAD changed the same lines.
    pub fn merge_onto_head(&self, commit: &str) -> Result<Merged, RepoError> {
        let e = |e| self.error(e);
        let theirs = self.commit_by_id(commit)?;
        let base = theirs.parent(0).map_err(e)?;
        let head = self.head_commit()?.ok_or_else(|| RepoError::Git {
            path: self.root.clone(),
            message: "the repository has no commit yet".into(),
        })?;
        let (base_tree, their_tree) = (base.tree().map_err(e)?, theirs.tree().map_err(e)?);
        let merged = self
            .git
            .merge_trees(&base_tree, &head.tree().map_err(e)?, &their_tree, None)
            .map_err(e)?;
        if merged.has_conflicts() {
            let mut files: Vec<String> = merged
                .conflicts()
                .map_err(e)?
                .flatten()
                .filter_map(|c| c.our.or(c.their).or(c.ancestor))
                .map(|entry| String::from_utf8_lossy(&entry.path).into_owned())
                .collect();
            files.sort();
            files.dedup();
            return Ok(Merged::Conflicts(files));
        }
        let diff = self
            .git
            .diff_tree_to_tree(Some(&base_tree), Some(&their_tree), None)
            .map_err(e)?;
        let mut files = Vec::new();
        for delta in diff.deltas() {
            let Some(path) = delta.new_file().path().or_else(|| delta.old_file().path()) else {
                continue;
            };
            let content = match merged.get_path(path, 0) {
                Some(entry) => Some(self.git.find_blob(entry.id).map_err(e)?.content().to_vec()),
                None => None,
            };
            files.push((path.to_string_lossy().into_owned(), content));
        }
        Ok(Merged::Clean(files))
    }
}

/// A ref and what its commit says ([`Repo::refs_under`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefCommit {
    /// The ref's full name.
    pub name: String,
    /// Its commit (full id).
    pub commit: String,
    /// The commit's message.
    pub message: String,
    /// Its first parent (full id; empty for a root commit).
    pub parent: String,
    /// When it was made.
    pub time: DateTime<Utc>,
    /// The files it changes against its parent.
    pub files: Vec<String>,
}

/// What changed under a prefix since a commit ([`Repo::diff_since`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DiffSince {
    /// The unified diff, cut at a line (saying so) past its size.
    pub text: String,
    /// Every path on the diff's new side (each file added or changed),
    /// as libgit2 names it — never parsed back out of `text`, where git
    /// quotes a name with a quote, a backslash, a control or a non-ASCII
    /// byte. A name that is not UTF-8 is here lossily, so it names no
    /// file on disk and a judge reading it finds it unreadable: outside,
    /// never clean.
    pub changed: Vec<String>,
    /// For each old-side path, the lines the diff removes from it (a
    /// deleted file's whole text): words the diff shows that no file on
    /// disk holds any more.
    pub removed: std::collections::BTreeMap<String, String>,
}

impl Repo {
    /// The diff from `from` to HEAD of the paths under `prefix`, at most
    /// `max_chars` of text; empty when `from` is not a commit here.
    pub fn diff_since(
        &self,
        from: &str,
        prefix: &str,
        max_chars: usize,
    ) -> Result<DiffSince, RepoError> {
        let tree_of = |id: &str| {
            Oid::from_str(id)
                .ok()
                .and_then(|oid| self.git.find_commit(oid).ok())
                .and_then(|c| c.tree().ok())
        };
        let (Some(old), Some(new)) = (tree_of(from), self.head().as_deref().and_then(tree_of))
        else {
            return Ok(DiffSince::default());
        };
        let mut opts = git2::DiffOptions::new();
        opts.pathspec(prefix);
        let diff = self
            .git
            .diff_tree_to_tree(Some(&old), Some(&new), Some(&mut opts))
            .map_err(|e| self.error(e))?;
        let lossy = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
        let mut since = DiffSince::default();
        for delta in diff.deltas() {
            if delta.status() != git2::Delta::Deleted {
                since
                    .changed
                    .extend(delta.new_file().path_bytes().map(lossy));
            }
        }
        let mut cut = false;
        diff.print(git2::DiffFormat::Patch, |delta, _, line| {
            let content = String::from_utf8_lossy(line.content());
            if line.origin() == '-' {
                if let Some(path) = delta.old_file().path_bytes() {
                    since
                        .removed
                        .entry(lossy(path))
                        .or_default()
                        .push_str(&content);
                }
            }
            if cut {
                return true;
            }
            let origin = match line.origin() {
                '+' | '-' | ' ' => line.origin().to_string(),
                _ => String::new(),
            };
            if since.text.len() + origin.len() + content.len() > max_chars {
                cut = true;
                since.text.push_str("[… the diff goes on; cut here]\n");
                return true;
            }
            since.text.push_str(&origin);
            since.text.push_str(&content);
            true
        })
        .map_err(|e| self.error(e))?;
        Ok(since)
    }
}
