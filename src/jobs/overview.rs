//! The jobs as `hearth jobs` and `hearth status` show them: each job's
//! schedule in words, its next run, its last outcome, its misses — and a
//! job that has not fired when it was due, named.

use chrono::{DateTime, Duration, Utc};

use super::ledger::{JobLedger, Run};
use super::plan;
use super::seen::JobsSeen;
use super::spec::{load_all, Job, JobProblem};
use crate::home::layout::rel;
use crate::home::Home;

/// One job, as listed.
#[derive(Debug, Clone)]
pub struct JobView {
    /// The job.
    pub job: Job,
    /// Its next scheduled run (`None`: its schedule never fires).
    pub next: Option<DateTime<Utc>>,
    /// The scheduled time it should have run at and has not, past the
    /// grace a running tick may take.
    pub late_since: Option<DateTime<Utc>>,
    /// Its newest outcome.
    pub last: Option<Run>,
    /// Scheduled times missed, in all.
    pub misses: u32,
    /// Unmet runs in a row now.
    pub unmet_streak: usize,
    /// Its runs, every step (for `jobs show`).
    pub history: Vec<Run>,
}

impl JobView {
    /// Its runs as `jobs show` lists them, oldest first: a claim
    /// (`running`) only while it is open, since its outcome follows it.
    pub fn runs_shown(&self) -> impl DoubleEndedIterator<Item = &Run> + '_ {
        self.history.iter().enumerate().filter_map(|(i, run)| {
            let closed = self.history[i + 1..].iter().any(|later| {
                later.planned == run.planned && later.outcome != super::ledger::JobOutcome::Running
            });
            (run.outcome != super::ledger::JobOutcome::Running || !closed).then_some(run)
        })
    }

    /// Why `status --check` names it, if it does.
    pub fn trouble(&self) -> Option<String> {
        if self.next.is_none() && self.late_since.is_none() {
            return Some(format!(
                "job {} never runs: its schedule \"{}\" matches no date",
                self.job.name,
                self.job.schedule.text()
            ));
        }
        self.late_since.map(|since| {
            format!(
                "job {} was due at {} and has not run",
                self.job.name,
                crate::clock::to_second(since)
            )
        })
    }
}

/// How long past its time a run may still be running before it is late:
/// a tick's time limit (`[tick] timeout_s`, 600 s without a readable
/// config) and a minute. One figure for `status`, `jobs` and the page.
pub fn late_grace(config: Option<&crate::config::Config>) -> Duration {
    let timeout = config.map_or(600, |c| c.tick.timeout_s);
    Duration::seconds(i64::try_from(timeout).unwrap_or(i64::MAX / 2) + 60)
}

/// Every job with what the ledger says of it at `now`, and the job files
/// that cannot be used. A run is late once `grace` (a tick's time limit,
/// and a minute) has passed since it was due.
pub fn overview(
    home: &Home,
    now: DateTime<Utc>,
    grace: Duration,
) -> (Vec<JobView>, Vec<JobProblem>, Vec<String>) {
    let (jobs, problems) = load_all(home);
    let mut notes = Vec::new();
    let path = home.path(rel::JOB_RUNS);
    let ledger = JobLedger::read(&path).unwrap_or_else(|e| {
        notes.push(format!("{} cannot be read: {e}", path.display()));
        JobLedger::default()
    });
    for (line, problem) in &ledger.skipped {
        notes.push(format!(
            "{}:{line}: a line that does not parse: {problem}",
            path.display()
        ));
    }
    let seen = JobsSeen::load(home);
    let views = jobs
        .into_iter()
        .map(|job| {
            let since = seen.of(&job.name, now);
            // Nothing counts as passed "while stopped" here: a time that
            // passed and was not run is late, whatever catch_up says.
            let next = plan::next(&job, &ledger, since, DateTime::<Utc>::MIN_UTC, now);
            let late_since = next.as_ref().and_then(|n| {
                let first = n.missed.first().copied().unwrap_or(n.at);
                (n.at + grace < now).then_some(first)
            });
            let upcoming = match &next {
                Some(n) if n.at > now => Some(n.at),
                _ => job.next_after(now),
            };
            JobView {
                next: upcoming,
                late_since,
                last: ledger.last_outcome(&job.name).cloned(),
                misses: ledger.misses(&job.name),
                unmet_streak: ledger.unmet_streak(&job.name),
                history: ledger.of(&job.name).cloned().collect(),
                job,
            }
        })
        .collect();
    (views, problems, notes)
}
