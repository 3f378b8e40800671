//! Who wrote each line of a file — the one engine every reader asks (the
//! origin judge, the audit, vouching, consolidation's kept lines, recall's
//! citations): the commit, its author and time, the tick or the accepted
//! proposal that made it, and what outside content the exchange behind it
//! carried (its `Hearth-Outside` trailers). The replayed store
//! (`origin_store.rs`) answers when it holds the file as HEAD has it;
//! otherwise `git blame` does, of the file at HEAD or as it is on disk
//! (lines no commit holds have no origin yet). Either way a history that
//! cannot be read whole is an error, never "no one wrote it".

use std::path::Path;

use git2::{DiffOptions, Patch};
use serde::{Deserialize, Serialize};

use super::{trailers, Repo, RepoError};

/// Marks, while carrying stored origins over edits on disk, a line that is
/// in no commit.
const UNCOMMITTED: u32 = u32::MAX;

/// Who wrote one line of a file as HEAD holds it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LineOrigin {
    /// The commit (short id).
    pub commit: String,
    /// Its author.
    pub author: String,
    /// Its time (seconds since the epoch): the newest of several lines'
    /// origins is the one a citation names.
    pub time: i64,
    /// The tick, when a tick's commit wrote it (`Hearth-Tick`).
    pub tick: Option<u64>,
    /// The proposal, when an accepted proposal wrote it (`Hearth-Proposal`).
    pub proposal: Option<u64>,
    /// What outside content the exchange that made the commit carried
    /// (its `Hearth-Outside` trailers, each a chain): empty for the
    /// operator's commits, a clean exchange's, and an accepted proposal's
    /// (the accept vouches for it).
    pub outside: crate::outside::Outside,
}

pub(super) fn origin_of_commit(commit: &git2::Commit<'_>) -> LineOrigin {
    let message = commit.message().unwrap_or("");
    LineOrigin {
        commit: commit.id().to_string()[..7].to_string(),
        author: commit.author().name().unwrap_or("").to_string(),
        time: commit.time().seconds(),
        tick: trailers::number(message, trailers::TICK),
        proposal: trailers::number(message, trailers::PROPOSAL),
        outside: trailers::outside(message),
    }
}

impl Repo {
    /// Each line of `rel` at HEAD with the commit that last wrote it; empty
    /// when HEAD does not hold the file or its history cannot be read (the
    /// caller then counts no line as anyone's in particular).
    pub fn line_origins(&self, rel: &str) -> Vec<LineOrigin> {
        let Some((_, blob)) = self.head_blob(rel).ok().flatten() else {
            return Vec::new();
        };
        let Ok(content) = self.git.find_blob(blob).map(|b| b.content().to_vec()) else {
            return Vec::new();
        };
        match self.origins_of(rel, &content) {
            Ok(lines) => lines
                .into_iter()
                .collect::<Option<Vec<_>>>()
                .unwrap_or_default(),
            Err(_) => Vec::new(),
        }
    }

    /// Each line of `rel` as it is on disk now, with the commit that last
    /// wrote it, or `None` for a line no commit holds (written since HEAD:
    /// by the exchange running now, or by hand; every line of a file HEAD
    /// does not hold). An error when the file or its history cannot be
    /// read: who wrote its lines is then unknown, never "no one".
    pub fn line_origins_on_disk(&self, rel: &str) -> Result<Vec<Option<LineOrigin>>, RepoError> {
        let on_disk = std::fs::read(self.root.join(rel))
            .map_err(|e| RepoError::Io(crate::io_hint::IoError::at(self.root.join(rel), e)))?;
        self.origins_of(rel, &on_disk)
    }

    /// The newest origin among lines `start..=end` (from 1) of `rel` as it
    /// is on disk: what a citation names. `None` when any of them is not
    /// committed (a hand edit the next tick commits, a file never
    /// committed, lines no longer there): a citation must not name a commit
    /// that does not hold the text it quotes. An error when the file or its
    /// history cannot be read, which is not the same as "uncommitted".
    pub fn newest_origin(
        &self,
        rel: &str,
        start: usize,
        end: usize,
    ) -> Result<Option<LineOrigin>, RepoError> {
        let (start, end) = (start.max(1), end.max(start).max(1));
        let lines = self.line_origins_on_disk(rel)?;
        let Some(asked) = lines.get(start - 1..end.min(lines.len())) else {
            return Ok(None);
        };
        let asked: Option<Vec<&LineOrigin>> = asked.iter().map(Option::as_ref).collect();
        Ok(asked.and_then(|a| a.into_iter().max_by_key(|o| o.time).cloned()))
    }

    /// Who last wrote line `line` (from 1) of `path` as commit `at` had
    /// it: a line a proposal removes, asked of the proposal's base.
    /// History, not HEAD, so the blame's (the store keeps HEAD's lines).
    pub(super) fn line_origin_at(
        &self,
        at: git2::Oid,
        path: &str,
        line: usize,
    ) -> Option<LineOrigin> {
        let mut opts = git2::BlameOptions::new();
        opts.newest_commit(at).min_line(line).max_line(line);
        let blame = self.git.blame_file(Path::new(path), Some(&mut opts)).ok()?;
        let hunk = blame.get_line(line)?;
        let commit = self.git.find_commit(hunk.final_commit_id()).ok()?;
        Some(origin_of_commit(&commit))
    }

    /// The engine: each line of `content` (the file `rel` as it is now)
    /// with its origin, from the store when it holds HEAD's blob, else by
    /// blame.
    pub fn origins_of(
        &self,
        rel: &str,
        content: &[u8],
    ) -> Result<Vec<Option<LineOrigin>>, RepoError> {
        let lines = line_count(content);
        if self.git.is_shallow() {
            return Err(self.error(git2::Error::from_str(
                "the history is shallow: a blame would name its oldest commit for lines it \
                 cannot see; `git fetch --unshallow` fetches the rest",
            )));
        }
        let Some((commit, blob)) = self.head_blob(rel)? else {
            return Ok(vec![None; lines]);
        };
        let head = self.git.find_blob(blob).map_err(|e| self.error(e))?;
        if let Some(stored) = self.stored_lines(rel, commit, blob, line_count(head.content())) {
            let per_line = match head.content() == content {
                true => Some(stored.per_line),
                // Edited since the commit: the new lines are nobody's yet.
                false => carry(&stored.per_line, head.content(), content, UNCOMMITTED),
            };
            if let Some(per_line) = per_line {
                return Ok(per_line
                    .into_iter()
                    .map(|o| stored.origins.get(o as usize).cloned())
                    .collect());
            }
        }
        self.blamed(rel, content, lines)
    }

    /// `content`'s lines by `git blame` of `rel` (committed at HEAD).
    fn blamed(
        &self,
        rel: &str,
        content: &[u8],
        lines: usize,
    ) -> Result<Vec<Option<LineOrigin>>, RepoError> {
        let committed = self
            .git
            .blame_file(Path::new(rel), None)
            .map_err(|e| self.error(e))?;
        let blame = committed.blame_buffer(content).map_err(|e| self.error(e))?;
        let mut out = Vec::with_capacity(lines);
        for hunk in blame.iter() {
            let id = hunk.final_commit_id();
            let origin = match id.is_zero() {
                true => None,
                false => Some(origin_of_commit(
                    &self.git.find_commit(id).map_err(|e| self.error(e))?,
                )),
            };
            out.extend(std::iter::repeat_n(origin, hunk.lines_in_hunk()));
        }
        Ok(out)
    }

    /// HEAD and the blob it holds at `rel`, if any.
    pub(super) fn head_blob(&self, rel: &str) -> Result<Option<(git2::Oid, git2::Oid)>, RepoError> {
        let Some(head) = self.head_commit()? else {
            return Ok(None);
        };
        let tree = head.tree().map_err(|e| self.error(e))?;
        Ok(tree
            .get_path(Path::new(rel))
            .ok()
            .filter(|e| e.kind() == Some(git2::ObjectType::Blob))
            .map(|e| (head.id(), e.id())))
    }
}

/// Each new line's origin index after `old` became `new`: lines the diff
/// leaves alone keep theirs, the others get `fresh`. None if the diff does
/// not add up (then the caller forgets the file rather than guess).
pub(super) fn carry(old_lines: &[u32], old: &[u8], new: &[u8], fresh: u32) -> Option<Vec<u32>> {
    let mut opts = DiffOptions::new();
    opts.context_lines(0);
    let patch = Patch::from_buffers(old, None, new, None, Some(&mut opts)).ok()?;
    let mut out = Vec::with_capacity(line_count(new));
    let mut cursor = 0usize;
    for h in 0..patch.num_hunks() {
        let (hunk, _) = patch.hunk(h).ok()?;
        let (os, ol) = (hunk.old_start() as usize, hunk.old_lines() as usize);
        // With no old lines, old_start is the line the new ones follow.
        let begin = if ol == 0 { os } else { os.checked_sub(1)? };
        out.extend_from_slice(old_lines.get(cursor..begin)?);
        out.extend(std::iter::repeat_n(fresh, hunk.new_lines() as usize));
        cursor = begin + ol;
    }
    out.extend_from_slice(old_lines.get(cursor..)?);
    (out.len() == line_count(new)).then_some(out)
}

/// Lines as git counts them: a last line without a newline still counts.
pub(super) fn line_count(bytes: &[u8]) -> usize {
    let newlines = bytes.iter().filter(|b| **b == b'\n').count();
    newlines + usize::from(bytes.last().is_some_and(|b| *b != b'\n'))
}
