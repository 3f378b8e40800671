//! Expiring old reflog entries, as `git gc` does (`gc.reflogExpire`, 90
//! days). Every commit appends a line to the logs of HEAD and its branch
//! (about 150 bytes each); libgit2 never expires them, and hearth never
//! runs `git gc`, so without this they would grow by ~310 bytes a tick for
//! as long as the agent lives — at a one-minute interval, 160 MB a year.
//! What a reflog remembers is also kept by the full pack (see
//! `push_everything`), so expired entries let it drop what only they held.

use chrono::{DateTime, Utc};

use super::{Repo, RepoError};

/// How long reflog entries are kept (git's default).
pub const KEEP_DAYS: i64 = 90;

impl Repo {
    /// Drops the entries older than `before` from the reflogs of HEAD and
    /// every branch; returns how many. The caller holds the commit lock (a
    /// commit appending meanwhile would be overwritten).
    pub fn expire_reflogs(&self, before: DateTime<Utc>) -> Result<usize, RepoError> {
        let err = |e: git2::Error| super::git_error(&self.root, e);
        let mut names = vec!["HEAD".to_string()];
        for reference in self
            .git
            .references_glob("refs/heads/*")
            .map_err(err)?
            .flatten()
        {
            if let Some(name) = reference.name() {
                names.push(name.to_string());
            }
        }
        let cutoff = before.timestamp();
        let mut expired = 0;
        for name in names {
            let Ok(mut log) = self.git.reflog(&name) else {
                continue;
            };
            // Newest first: the old entries are the tail.
            let keep = log
                .iter()
                .take_while(|e| e.committer().when().seconds() >= cutoff)
                .count();
            if keep == log.len() {
                continue;
            }
            for i in (keep..log.len()).rev() {
                log.remove(i, false).map_err(err)?;
                expired += 1;
            }
            log.write().map_err(err)?;
        }
        Ok(expired)
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // fixtures, not state
mod tests {
    use super::*;
    use crate::repo::Identity;

    #[test]
    fn entries_older_than_the_cutoff_go_and_the_newer_stay() {
        let dir = tempfile::tempdir().unwrap();
        let repo = Repo::init(dir.path()).unwrap();
        let now = DateTime::from_timestamp(1_800_000_000, 0).unwrap();
        let mut ids = Vec::new();
        for n in 0..4 {
            std::fs::write(dir.path().join("a"), n.to_string()).unwrap();
            ids.push(
                repo.commit(&["."], &Identity::hearth(), "c", now)
                    .unwrap()
                    .unwrap(),
            );
        }
        let git = git2::Repository::open(dir.path()).unwrap();
        let branch = git.head().unwrap().name().unwrap().to_string();
        // Give the two oldest entries of each log an old date, as if they
        // had been written 100 days ago.
        for name in ["HEAD", branch.as_str()] {
            let log = git.reflog(name).unwrap();
            let entries: Vec<(git2::Oid, git2::Oid, String)> = log
                .iter()
                .map(|e| {
                    (
                        e.id_old(),
                        e.id_new(),
                        e.message().unwrap_or("").to_string(),
                    )
                })
                .collect();
            assert_eq!(entries.len(), 4, "{name}");
            git.reflog_delete(name).unwrap();
            let mut log = git.reflog(name).unwrap();
            for (i, (_, new, message)) in entries.iter().rev().enumerate() {
                let days = if i < 2 { 100 } else { 1 };
                let when = git2::Time::new(now.timestamp() - days * 86_400, 0);
                let sig = git2::Signature::new("hearth", "hearth@localhost", &when).unwrap();
                log.append(*new, &sig, Some(message)).unwrap();
            }
            log.write().unwrap();
        }
        let cutoff = now - chrono::Duration::days(KEEP_DAYS);
        assert_eq!(repo.expire_reflogs(cutoff).unwrap(), 4);
        for name in ["HEAD", branch.as_str()] {
            let kept: Vec<String> = git
                .reflog(name)
                .unwrap()
                .iter()
                .map(|e| e.id_new().to_string())
                .collect();
            assert_eq!(kept, [ids[3].clone(), ids[2].clone()], "{name}");
        }
        assert_eq!(
            repo.expire_reflogs(cutoff).unwrap(),
            0,
            "nothing left to expire"
        );
    }
}
