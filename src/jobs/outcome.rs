//! How a job's run ended, decided in one place: a pure function of what
//! hearth observed — the check's word, the run's tick (how it ended, how
//! many model calls it made), the commit's evidence, the tries so far —
//! and never of the model's words. The supervisor gathers those values,
//! calls [`decide`], and writes what it returns on the run's ledger line;
//! it sets no outcome of its own.

use chrono::{DateTime, Duration, Utc};

use super::evidence::{self, Judgment, Observed};
use super::ledger::{JobOutcome, Run};
use super::plan::MAX_TRIES;
use super::spec::Expect;

/// The least wait before a run that failed without a model call is tried
/// again (an outage's backoff, when longer).
pub const RETRY_WAIT: Duration = Duration::seconds(60);

/// What ended a run, as hearth observed it.
#[derive(Debug, Clone)]
pub enum RunEnd<'a> {
    /// The check found nothing to do: no tick, no model call.
    NothingToDo,
    /// The check failed (or is not trusted, which `trusted` says).
    CheckFailed {
        /// How, in words.
        why: String,
        /// Whether the check is trusted (an untrusted one is not tried
        /// again: trying changes nothing).
        trusted: bool,
    },
    /// The run's tick was skipped by the budget gate.
    BudgetSpent {
        /// What the gate said.
        note: Option<String>,
    },
    /// The run's tick failed.
    TickFailed {
        /// Its cause, in words.
        cause: String,
        /// The model calls it made (none: it is tried again).
        calls: u32,
        /// The backoff it asked for (an outage's), if any.
        backoff: Option<Duration>,
    },
    /// The run's tick exited 0: what the job expects, and its commit's
    /// evidence, or why the commit could not be read.
    TickOk {
        /// The job's `[expect]`.
        expect: &'a Expect,
        /// What the commit and the calls showed.
        commit: Result<Observed, Unobserved>,
    },
    /// A crash cut the run's tick (`tick` names it) after `calls` model
    /// calls.
    Cut {
        /// `tick 12`, or `its tick`.
        tick: String,
        /// Model calls it had made.
        calls: u32,
    },
}

/// Why a run's commit could not be read to judge it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unobserved {
    /// The home has no commit at all.
    #[error("the home has no commit")]
    NoCommit,
    /// Something else committed after the run's tick.
    #[error("HEAD is not tick {tick}'s commit")]
    NotTheTicks {
        /// The run's tick.
        tick: u64,
    },
    /// git could not say what the commit changed.
    #[error("git could not list what it changed: {said}")]
    Git {
        /// What git said.
        said: String,
    },
}

/// The outcome and what goes with it on the ledger line.
#[derive(Debug, Clone, PartialEq)]
pub struct Decided {
    /// How the run ended.
    pub outcome: JobOutcome,
    /// Why, in words (none for a done run).
    pub cause: Option<String>,
    /// What the commit showed.
    pub evidence: Vec<String>,
    /// What `[expect]` wanted and the commit did not show.
    pub missing: Vec<String>,
    /// When it is tried again, if it is.
    pub retry_at: Option<DateTime<Utc>>,
}

impl Decided {
    fn of(outcome: JobOutcome, cause: impl Into<String>) -> Decided {
        Decided {
            outcome,
            cause: Some(cause.into()),
            evidence: Vec::new(),
            missing: Vec::new(),
            retry_at: None,
        }
    }

    fn retried_at(mut self, at: Option<DateTime<Utc>>) -> Decided {
        self.retry_at = at;
        self
    }

    /// Writes the decision on `run`.
    pub fn apply_to(self, run: &mut Run) {
        run.outcome = self.outcome;
        run.cause = self.cause;
        run.evidence = self.evidence;
        run.missing = self.missing;
        run.retry_at = self.retry_at;
    }
}

/// How the run ended, from what was `seen` at `end` by a run tried
/// `tried` times before.
pub fn decide(seen: RunEnd<'_>, tried: usize, end: DateTime<Utc>) -> Decided {
    let tries_left = tried + 1 < MAX_TRIES;
    match seen {
        RunEnd::NothingToDo => Decided::of(JobOutcome::Skipped, "its check found nothing to do"),
        RunEnd::CheckFailed { why, trusted } => {
            // Trying an untrusted check again changes nothing.
            let again = (trusted && tries_left).then(|| end + RETRY_WAIT);
            Decided::of(JobOutcome::Failed, why).retried_at(again)
        }
        // The day's budget is spent: every try before the next UTC day
        // would be skipped too, and use up the run's tries in three
        // minutes. Not a failure, and not a try.
        RunEnd::BudgetSpent { note } => Decided::of(
            JobOutcome::Skipped,
            format!(
                "the day's budget is spent ({}): tried again on the next UTC day",
                note.as_deref().unwrap_or("[budget] daily_usd")
            ),
        )
        .retried_at(Some(crate::budget::next_day(end))),
        RunEnd::TickFailed {
            cause,
            calls,
            backoff,
        } => {
            let wait = backoff.unwrap_or(RETRY_WAIT).max(RETRY_WAIT);
            let again = (calls == 0 && tries_left).then(|| end + wait);
            Decided::of(JobOutcome::Failed, cause).retried_at(again)
        }
        // Not "unmet": what is missing was never looked at.
        RunEnd::TickOk {
            commit: Err(why), ..
        } => Decided::of(
            JobOutcome::Unknown,
            format!("its commit could not be read to judge it: {why}"),
        ),
        RunEnd::TickOk {
            expect,
            commit: Ok(observed),
        } => {
            let (outcome, evidence, missing) = match evidence::judge(expect, &observed) {
                Judgment::Done(found) => (JobOutcome::Done, found, Vec::new()),
                Judgment::Unmet { missing, found } => (JobOutcome::Unmet, found, missing),
            };
            Decided {
                outcome,
                cause: None,
                evidence,
                missing,
                retry_at: None,
            }
        }
        // It may have acted already (sent, posted, written): hearth does
        // not run it again by itself.
        RunEnd::Cut { tick, calls: 0 } => Decided::of(
            JobOutcome::Failed,
            format!(
                "cut before any model call (the supervisor stopped during {tick}): tried again"
            ),
        )
        .retried_at(Some(end)),
        RunEnd::Cut { tick, calls } => Decided::of(
            JobOutcome::Unknown,
            format!(
                "the supervisor stopped during {tick}, after {calls} model call(s): whether \
                 the run did its work is not known"
            ),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t() -> DateTime<Utc> {
        DateTime::from_timestamp(1_795_000_000, 0).unwrap()
    }

    fn expect_wrote(dir: &str) -> Expect {
        Expect {
            wrote: Some(dir.into()),
            ..Expect::default()
        }
    }

    #[test]
    fn done_and_unmet_come_from_the_commit_and_an_unreadable_commit_is_unknown() {
        let expect = expect_wrote("memory/digests");
        let wrote = Observed {
            changed: vec!["memory/digests/d.md".into()],
            ..Observed::default()
        };
        let ok = |commit| RunEnd::TickOk {
            expect: &expect,
            commit,
        };
        let done = decide(ok(Ok(wrote)), 0, t());
        assert_eq!(done.outcome, JobOutcome::Done);
        assert_eq!(done.evidence, ["wrote memory/digests/d.md"]);
        let idle = decide(ok(Ok(Observed::default())), 0, t());
        assert_eq!(idle.outcome, JobOutcome::Unmet);
        assert_eq!(idle.missing, ["a file written under memory/digests"]);
        let blind = decide(ok(Err(Unobserved::NotTheTicks { tick: 3 })), 0, t());
        assert_eq!(blind.outcome, JobOutcome::Unknown);
        assert!(blind.missing.is_empty(), "nothing was looked at");
    }

    #[test]
    fn a_failure_is_tried_again_only_when_no_model_call_was_made_and_tries_are_left() {
        let failed = |calls, tried| {
            let seen = RunEnd::TickFailed {
                cause: "the model API is unreachable".into(),
                calls,
                backoff: Some(Duration::minutes(5)),
            };
            decide(seen, tried, t())
        };
        assert_eq!(failed(0, 0).retry_at, Some(t() + Duration::minutes(5)));
        assert_eq!(failed(1, 0).retry_at, None, "it may have acted");
        assert_eq!(failed(0, MAX_TRIES - 1).retry_at, None, "no tries left");
        let untrusted = RunEnd::CheckFailed {
            why: "not trusted".into(),
            trusted: false,
        };
        assert_eq!(decide(untrusted, 0, t()).retry_at, None);
    }

    #[test]
    fn a_spent_budget_skips_until_the_next_day_and_a_cut_after_a_call_is_unknown() {
        let skipped = decide(RunEnd::BudgetSpent { note: None }, 0, t());
        assert_eq!(skipped.outcome, JobOutcome::Skipped);
        assert_eq!(skipped.retry_at, Some(crate::budget::next_day(t())));
        let cut = |calls| {
            let tick = "tick 4".to_string();
            decide(RunEnd::Cut { tick, calls }, 0, t())
        };
        assert_eq!(cut(0).outcome, JobOutcome::Failed);
        assert_eq!(cut(0).retry_at, Some(t()));
        assert_eq!(cut(2).outcome, JobOutcome::Unknown);
        assert_eq!(cut(2).retry_at, None);
    }
}
