//! When a job runs next: a pure function of its schedule, its ledger, when
//! the supervisor first saw it and when this supervisor started.
//!
//! The schedule counts on from the newest scheduled time the ledger closed
//! (or from when the job was first seen, so a new job never "catches up"
//! on times before it existed). Of the times that have passed since, the
//! newest runs (late, once) and the others are `missed`; with
//! `catch_up = "skip"` a time that passed while no supervisor ran is
//! missed too. A run that failed before any model call is tried again at
//! its `retry_at`, at most [`MAX_TRIES`] times.

use chrono::{DateTime, Utc};

use super::ledger::JobLedger;
use super::spec::{CatchUp, Job};

/// How many times one scheduled run is tried when each try fails before
/// any model call (a check that could not start, a refused connection).
pub const MAX_TRIES: usize = 3;

/// How many passed times are counted at most (a minutely job stopped for
/// a year): the rest are one `missed` line's worth anyway.
const MAX_PASSED: usize = 10_000;

/// A job's next run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Next {
    /// The scheduled time the run is for.
    pub planned: DateTime<Utc>,
    /// When to start it (≤ now: start now).
    pub at: DateTime<Utc>,
    /// It tries again a run that failed before any model call.
    pub retry: bool,
    /// Scheduled times passed and not to be run: recorded `missed`.
    pub missed: Vec<DateTime<Utc>>,
}

/// `job`'s next run as of `now`, or `None` when its schedule never fires.
/// `since`: when a supervisor first saw the job; `started`: when this one
/// started (times before it passed while none ran).
pub fn next(
    job: &Job,
    ledger: &JobLedger,
    since: DateTime<Utc>,
    started: DateTime<Utc>,
    now: DateTime<Utc>,
) -> Option<Next> {
    let last = ledger.last_planned(&job.name);
    let mut base = last.map_or(since, |l| l.max(since));
    if let Some((planned, at, tries)) = ledger.retry(&job.name) {
        // Tried again until the next scheduled time comes, or the tries
        // run out: the next time is the run's chance then.
        let following = job.next_after(planned);
        if tries < MAX_TRIES && following.is_none_or(|f| f > now) {
            return Some(Next {
                planned,
                at,
                retry: true,
                missed: Vec::new(),
            });
        }
        base = base.max(planned);
    }
    let mut passed = Vec::new();
    let mut t = base;
    let upcoming = loop {
        match job.next_after(t) {
            Some(n) if n <= now && passed.len() < MAX_PASSED => {
                passed.push(n);
                t = n;
            }
            Some(n) if n <= now => t = n,
            other => break other,
        }
    };
    match passed.last().copied() {
        None => upcoming.map(|planned| Next {
            planned,
            at: planned,
            retry: false,
            missed: Vec::new(),
        }),
        Some(newest) if newest <= started && job.catch_up == CatchUp::Skip => {
            upcoming.map(|planned| Next {
                planned,
                at: planned,
                retry: false,
                missed: passed,
            })
        }
        Some(newest) => {
            passed.pop();
            Some(Next {
                planned: newest,
                at: newest,
                retry: false,
                missed: passed,
            })
        }
    }
}

/// A daily job at 07:00 UTC, for tests.
#[cfg(test)]
pub(crate) fn tests_job() -> Job {
    use super::spec::{CheckOutput, Expect, Zone};
    Job {
        name: "digest".into(),
        file: "jobs/digest.toml".into(),
        schedule: super::cron::Schedule::parse("0 7 * * *").unwrap(),
        zone: Zone::Named(chrono_tz::UTC),
        prompt: "p".into(),
        check: Vec::new(),
        check_timeout_s: 60,
        check_output: CheckOutput::Outside,
        env: Vec::new(),
        confinement: crate::jail::Confinement::Unsandboxed,
        max_usd: None,
        catch_up: CatchUp::Once,
        expect: Expect::default(),
        digest: String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jobs::ledger::{JobOutcome, Run};

    fn at(text: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(text)
            .unwrap()
            .with_timezone(&Utc)
    }

    fn daily(catch_up: CatchUp) -> Job {
        Job {
            catch_up,
            ..tests_job()
        }
    }

    fn ledger(runs: Vec<Run>) -> JobLedger {
        JobLedger {
            runs,
            skipped: Vec::new(),
        }
    }

    #[test]
    fn a_new_job_waits_for_its_first_time() {
        let job = daily(CatchUp::Once);
        let now = at("2026-11-27T09:00:00Z");
        let next = next(&job, &ledger(vec![]), now, now, now).unwrap();
        assert_eq!(next.at, at("2026-11-28T07:00:00Z"));
        assert!(next.missed.is_empty());
    }

    #[test]
    fn three_nights_stopped_catch_up_once_and_say_the_rest_were_missed() {
        let job = daily(CatchUp::Once);
        let done = Run::new(
            "digest",
            at("2026-11-24T07:00:00Z"),
            at("2026-11-24T07:00:00Z"),
            JobOutcome::Done,
        );
        let started = at("2026-11-27T09:00:00Z");
        let next = next(
            &job,
            &ledger(vec![done.clone()]),
            at("2026-11-01T00:00:00Z"),
            started,
            started,
        )
        .unwrap();
        assert_eq!(next.planned, at("2026-11-27T07:00:00Z"));
        assert!(next.at <= started, "runs now");
        assert_eq!(
            next.missed,
            [at("2026-11-25T07:00:00Z"), at("2026-11-26T07:00:00Z")]
        );

        // Caught up: the schedule goes on from it.
        let caught = Run::new("digest", next.planned, started, JobOutcome::Done);
        let after = super::next(
            &job,
            &ledger(vec![done, caught]),
            at("2026-11-01T00:00:00Z"),
            started,
            started,
        )
        .unwrap();
        assert_eq!(after.at, at("2026-11-28T07:00:00Z"));
        assert!(after.missed.is_empty());
    }

    #[test]
    fn skip_records_what_passed_while_stopped_but_runs_what_is_late_while_running() {
        let job = daily(CatchUp::Skip);
        let done = Run::new(
            "digest",
            at("2026-11-25T07:00:00Z"),
            at("2026-11-25T07:00:00Z"),
            JobOutcome::Done,
        );
        let since = at("2026-11-01T00:00:00Z");
        let started = at("2026-11-27T09:00:00Z");
        let next = next(&job, &ledger(vec![done.clone()]), since, started, started).unwrap();
        assert_eq!(next.missed.len(), 2);
        assert_eq!(next.at, at("2026-11-28T07:00:00Z"));
        // Started before the time: late behind a long tick, it still runs.
        let started = at("2026-11-25T08:00:00Z");
        let now = at("2026-11-26T07:20:00Z");
        let late = super::next(&job, &ledger(vec![done]), since, started, now).unwrap();
        assert_eq!(late.planned, at("2026-11-26T07:00:00Z"));
        assert!(late.missed.is_empty());
    }

    #[test]
    fn a_failure_before_any_model_call_is_tried_again_until_the_next_time() {
        let job = daily(CatchUp::Once);
        let planned = at("2026-11-27T07:00:00Z");
        let mut failed = Run::new("digest", planned, planned, JobOutcome::Failed);
        failed.retry_at = Some(at("2026-11-27T07:05:00Z"));
        let since = at("2026-11-01T00:00:00Z");
        let now = at("2026-11-27T07:01:00Z");
        let next = next(&job, &ledger(vec![failed.clone()]), since, since, now).unwrap();
        assert_eq!(
            (next.planned, next.at, next.retry),
            (planned, at("2026-11-27T07:05:00Z"), true)
        );
        // Out of tries: the schedule goes on from the run it gave up.
        let runs = vec![failed.clone(), failed.clone(), failed];
        let next = super::next(&job, &ledger(runs), since, since, now).unwrap();
        assert!(!next.retry);
        assert_eq!(next.at, at("2026-11-28T07:00:00Z"));
    }
}
