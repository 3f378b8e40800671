//! Another git at work in the home is waited for, never died on.
//!
//! The one rule for git's locks: a write of hearth's waits `[git]
//! lock_wait_s` for another git process's lock (the operator's `git commit`
//! with its editor open, a `git gc`); past that, a command says so and
//! exits, while the supervisor puts its commit off. The tick is already in
//! the ledger and its marker stays, so nothing is lost: before the next
//! tick (looked at again every [`RETRY`], or sooner at the interval) the
//! supervisor finishes the put-off tick as a start-up after a crash would
//! (committed as itself), after removing a lock whose owner is gone (a
//! `git` killed with its lock held). A lock held past
//! [`crate::repo::locks::STALE_AFTER`] is stale whoever holds it, so the
//! wait is bounded. It used to end the supervisor with exit 1.

use std::time::Duration;

use chrono::{DateTime, Utc};

use super::recovery::Cut;
use super::{LoopTurn, Supervisor, SupervisorError};
use crate::healer::HealError;
#[cfg(test)]
use crate::repo::RepoError;

/// How often a supervisor whose commit found git locked looks again, at
/// most (the interval, when shorter; never less than a second).
pub const RETRY: Duration = Duration::from_secs(30);

/// A put-off commit, while it waits.
#[derive(Debug, Clone, PartialEq)]
pub struct GitWait {
    /// When git was first found locked.
    pub since: DateTime<Utc>,
    /// What the put-off tick was interrupted by, for its ledger line if it
    /// had none yet (a start-up's recovery that found git locked).
    pub cut: Cut,
}

/// Whether `error` is another git process's lock outlasting the wait.
pub fn is_git_locked(error: &SupervisorError) -> bool {
    match error {
        SupervisorError::Repo(e) | SupervisorError::Heal(HealError::Repo(e)) => e.is_locked(),
        _ => false,
    }
}

/// How long to wait before trying again, at `interval`: [`RETRY`], or the
/// interval if shorter, never less than a second.
pub fn retry_after(interval: chrono::Duration) -> chrono::Duration {
    super::disk::look_again_after(RETRY, interval)
}

impl Supervisor<'_> {
    /// A commit found git locked past the wait: the tick in progress is
    /// finished later, and the operator hears of it once in the log.
    pub(super) fn put_off_for_git(&mut self, error: &SupervisorError, cut: Cut) {
        if self.git_wait.is_none() {
            tracing::warn!(
                "{error}; another git is at work in {}: hearth's commit waits for it \
                 (looking again every {} s) and nothing is lost meanwhile",
                self.home.root().display(),
                retry_after(self.interval()).num_seconds()
            );
            self.git_wait = Some(GitWait {
                since: self.options.clock.now(),
                cut,
            });
        }
    }

    /// When to look again: [`retry_after`] the interval.
    pub(super) fn retry_for_git(&self) -> DateTime<Utc> {
        self.options.clock.now() + retry_after(self.interval())
    }

    /// Before a tick, while a commit is put off: the put-off tick is
    /// finished (a lock left by a killed git is removed by the commit
    /// itself, when its wait runs out). `None` when it is (or nothing
    /// waited); an error that is still git's lock sends the turn back to
    /// waiting.
    pub(super) fn finish_put_off(&mut self) -> Result<Option<LoopTurn>, SupervisorError> {
        let Some(wait) = self.git_wait.clone() else {
            return Ok(None);
        };
        self.last_tick = super::last_recorded_tick(self.home);
        let verdict = self.recover_unfinished_tick(wait.cut)?;
        self.git_wait = None;
        tracing::info!(
            "git let go; the commit put off since {} is made",
            crate::clock::to_second(wait.since)
        );
        Ok(self.act(verdict)?.map(LoopTurn::Return))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_gits_lock_is_waited_for() {
        let locked = RepoError::Locked {
            path: "/h".into(),
            message: "the index is locked".into(),
        };
        let other = RepoError::Git {
            path: "/h".into(),
            message: "object not found".into(),
        };
        assert!(is_git_locked(&SupervisorError::Repo(locked)));
        assert!(is_git_locked(&SupervisorError::Heal(HealError::Repo(
            RepoError::Locked {
                path: "/h".into(),
                message: "a ref is locked".into()
            }
        ))));
        assert!(!is_git_locked(&SupervisorError::Repo(other)));
    }

    #[test]
    fn the_wait_is_half_a_minute_at_most_and_never_zero() {
        let min = chrono::Duration::minutes;
        assert_eq!(retry_after(min(15)), chrono::Duration::seconds(30));
        assert_eq!(
            retry_after(chrono::Duration::seconds(10)),
            chrono::Duration::seconds(10)
        );
        assert_eq!(retry_after(min(0)), chrono::Duration::seconds(1));
    }
}
