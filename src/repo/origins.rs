//! Who wrote each line of a file: the commit, its author, the tick or the
//! accepted proposal that made it, and what outside content the exchange
//! behind it carried (its `Hearth-Outside` trailers), by `git blame` — of
//! the file at HEAD, or as it is on disk (lines no commit holds have no
//! origin yet). The audit and `provenance` read these.

use std::path::Path;

use super::{trailers, Repo, RepoError};

/// Who wrote one line of a file as HEAD holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineOrigin {
    /// The commit (short id).
    pub commit: String,
    /// Its author.
    pub author: String,
    /// The tick, when a tick's commit wrote it (`Hearth-Tick`).
    pub tick: Option<u64>,
    /// The proposal, when an accepted proposal wrote it (`Hearth-Proposal`).
    pub proposal: Option<u64>,
    /// What outside content the exchange that made the commit carried
    /// (its `Hearth-Outside` trailers, each a chain): empty for the
    /// operator's commits, a clean exchange's, and an accepted proposal's
    /// (the accept vouches for it).
    pub outside: Vec<String>,
}

pub(super) fn origin_of_commit(commit: &git2::Commit<'_>) -> LineOrigin {
    let message = commit.message().unwrap_or("");
    LineOrigin {
        commit: commit.id().to_string()[..7].to_string(),
        author: commit.author().name().unwrap_or("").to_string(),
        tick: trailers::number(message, trailers::TICK),
        proposal: trailers::number(message, trailers::PROPOSAL),
        outside: trailers::outside(message),
    }
}

impl Repo {
    /// Each line of `rel` at HEAD with the commit that last wrote it (by
    /// `git blame`); empty when HEAD does not hold the file.
    pub fn line_origins(&self, rel: &str) -> Vec<LineOrigin> {
        let Ok(blame) = self.git.blame_file(Path::new(rel), None) else {
            return Vec::new();
        };
        self.expand(&blame)
    }

    /// Each line of `rel` as it is on disk now, with the commit that last
    /// wrote it, or `None` for a line no commit holds (written since HEAD:
    /// by the exchange running now, or by hand; every line of a file HEAD
    /// does not hold). An error when the file or its history cannot be
    /// read: who wrote its lines is then unknown, never "no one".
    pub fn line_origins_on_disk(&self, rel: &str) -> Result<Vec<Option<LineOrigin>>, RepoError> {
        let on_disk = std::fs::read(self.root.join(rel))
            .map_err(|e| RepoError::Io(crate::io_hint::IoError::at(self.root.join(rel), e)))?;
        let lines = if on_disk.is_empty() {
            0
        } else {
            on_disk.split(|b| *b == b'\n').count() - usize::from(on_disk.last() == Some(&b'\n'))
        };
        if self.git.is_shallow() {
            return Err(self.error(git2::Error::from_str(
                "the history is shallow: a blame would name its oldest commit for lines it \
                 cannot see; `git fetch --unshallow` fetches the rest",
            )));
        }
        let in_head = self
            .head_commit()?
            .map(|c| c.tree().map_err(|e| self.error(e)))
            .transpose()?
            .is_some_and(|t| t.get_path(Path::new(rel)).is_ok());
        if !in_head {
            return Ok(vec![None; lines]);
        }
        let committed = self
            .git
            .blame_file(Path::new(rel), None)
            .map_err(|e| self.error(e))?;
        let blame = committed
            .blame_buffer(&on_disk)
            .map_err(|e| self.error(e))?;
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

    fn expand(&self, blame: &git2::Blame<'_>) -> Vec<LineOrigin> {
        let mut out = Vec::new();
        for hunk in blame.iter() {
            let Ok(commit) = self.git.find_commit(hunk.final_commit_id()) else {
                continue;
            };
            let origin = origin_of_commit(&commit);
            out.extend(std::iter::repeat_n(origin, hunk.lines_in_hunk()));
        }
        out
    }
}
