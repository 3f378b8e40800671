//! Jobs in the loop (DESIGN 19): which job is due, its check, its run as
//! a tick of its own door, and the ledger line that says how it ended —
//! judged from the run's commit and calls, never from its words.
//!
//! A run is claimed in `state/jobs.jsonl` before its tick starts, so a
//! run a crash cuts is found at the next look: `unknown` (flared, never
//! re-run) when it had made a model call, else tried again. How each step
//! goes on the record, and the job's incident, are `job_record.rs`'s.

use chrono::{DateTime, Duration, Utc};

use super::turns::TickEnd;
use super::{Supervisor, SupervisorError};
use crate::exchange::class::Class;
use crate::exchange::ledger::TickRecord;
use crate::jobs::check::{self, CheckSaid};
use crate::jobs::evidence::Observed;
use crate::jobs::ledger::{self, JobLedger, JobOutcome, Run};
use crate::jobs::outcome::{self, RunEnd, Unobserved};
use crate::jobs::plan::{self, Next};
use crate::jobs::turn::{CheckFound, JobTurn};
use crate::jobs::{spec::CheckOutput, Job};

/// Where `hearth jobs run NAME` asks a running supervisor for a run.
const REQUESTS: &str = crate::home::layout::rel::JOB_REQUESTS;

/// A run to start now.
pub(super) struct DueRun {
    job: Job,
    planned: DateTime<Utc>,
    /// How many times this scheduled run was tried before.
    tried: usize,
    /// Asked for by `hearth jobs run` (not by the schedule).
    requested: bool,
}

impl Supervisor<'_> {
    /// The jobs as their files say now, each noted as seen; files that
    /// cannot be used are said once.
    fn jobs_now(&mut self) -> Vec<Job> {
        let (jobs, problems) = crate::jobs::load_all(self.home);
        for problem in problems {
            let said = problem.to_string();
            if self.said.problem(&said) {
                tracing::warn!("{said}");
            }
        }
        let names: Vec<&str> = jobs.iter().map(|j| j.name.as_str()).collect();
        let now = self.options.clock.now();
        if let Err(e) = self.jobs_seen.note(self.home, &names, now) {
            tracing::warn!("{e}");
        }
        jobs
    }

    /// The ledger, or `None` when it cannot be read: then which runs were
    /// claimed and closed is unknown, and no job runs until it can be
    /// (said once) — a run is never started blind to one that was cut.
    pub(super) fn job_ledger(&mut self) -> Option<JobLedger> {
        let path = self.home.path(ledger::FILE);
        match JobLedger::read(&path) {
            Ok(ledger) => {
                for (line, problem) in &ledger.skipped {
                    let said = format!(
                        "{}:{line}: skipped a line that does not parse: {problem}",
                        path.display()
                    );
                    if self.said.problem(&said) {
                        tracing::warn!("{said}");
                    }
                }
                Some(ledger)
            }
            Err(e) => {
                let said = format!(
                    "{} cannot be read ({e}): no job runs until it can (fix its permissions \
                     or the disk; the runs it records are not known meanwhile)",
                    path.display()
                );
                if self.said.problem(&said) {
                    tracing::warn!("{said}");
                }
                None
            }
        }
    }

    /// Each job's next run as of now, with the ledger they were planned
    /// from; `None` when the ledger cannot be read.
    fn job_plans(&mut self) -> Option<(Vec<(Job, Next)>, JobLedger)> {
        let jobs = self.jobs_now();
        let ledger = self.job_ledger()?;
        let now = self.options.clock.now();
        let plans = jobs
            .into_iter()
            .filter_map(|job| {
                let since = self.jobs_seen.of(&job.name, now);
                plan::next(&job, &ledger, since, self.started, now).map(|n| (job, n))
            })
            .collect();
        Some((plans, ledger))
    }

    /// When the wait should end for a job: the earliest next run, or now
    /// for a run `hearth jobs run` asked for.
    /// A request approved from the page ends the wait too.
    pub(super) fn next_job_due(&mut self) -> Option<DateTime<Utc>> {
        if self.approved_waiting() {
            return Some(self.options.clock.now());
        }
        let (plans, _) = self.job_plans()?;
        if !requested_jobs(self.home).is_empty() {
            return Some(self.options.clock.now());
        }
        plans.iter().map(|(_, next)| next.at).min()
    }

    /// The run to start now, if one is due (a requested one first), with
    /// the times passed on the way recorded as `missed`.
    pub(super) fn due_job(&mut self) -> Result<Option<DueRun>, SupervisorError> {
        // A run is claimed and closed within one turn: a claim still open
        // now was cut (its commit failed on a full disk, say).
        self.close_cut_job_runs()?;
        let now = self.options.clock.now();
        let Some((plans, ledger)) = self.job_plans() else {
            return Ok(None);
        };
        let mut requested = requested_jobs(self.home);
        if let Some(name) = self.options.run_job.take() {
            requested.insert(0, name);
        }
        for name in requested {
            let request = self.home.path(REQUESTS).join(&name);
            let asked_on = crate::jobs::asked::asked_digest(&request);
            let _ = std::fs::remove_file(&request);
            match plans.iter().find(|(job, _)| job.name == name) {
                Some((job, _)) if asked_on.as_ref().is_some_and(|d| d != &job.digest) => {
                    tracing::warn!(
                        "job {name} was asked for on a version of jobs/{name}.toml that has \
                         changed since: not run; look at it and ask again (`hearth jobs run \
                         {name}`)"
                    );
                }
                Some((job, _)) => {
                    return Ok(Some(DueRun {
                        job: job.clone(),
                        planned: now,
                        tried: 0,
                        requested: true,
                    }))
                }
                None => tracing::warn!(
                    "`hearth jobs run {name}`: there is no usable jobs/{name}.toml (see `hearth jobs`)"
                ),
            }
        }
        for (job, next) in &plans {
            if next.missed.is_empty() {
                continue;
            }
            let mut missed = Run::new(
                &job.name,
                *next.missed.last().unwrap_or(&now),
                now,
                JobOutcome::Missed,
            );
            missed.end = Some(now);
            missed.times = u32::try_from(next.missed.len()).unwrap_or(u32::MAX);
            missed.cause = Some(if next.missed.last().is_some_and(|t| *t <= self.started) {
                "due while no supervisor ran".to_string()
            } else {
                "due while another run or tick held the turn".to_string()
            });
            self.record_job(
                &missed,
                &format!("job {}: missed {} scheduled run(s)", job.name, missed.times),
            )?;
        }
        let due = plans
            .into_iter()
            .filter(|(_, next)| next.at <= now)
            .min_by_key(|(_, next)| next.planned);
        Ok(due.map(|(job, next)| DueRun {
            tried: if next.retry {
                ledger.retry(&job.name).map_or(0, |(_, _, tries)| tries)
            } else {
                0
            },
            job,
            planned: next.planned,
            requested: false,
        }))
    }

    /// Runs `due`: its check, then (when there is work) its tick, and
    /// records how it ended. The tick's end, when a tick ran.
    pub(super) fn run_job(&mut self, due: DueRun) -> Result<Option<TickEnd>, SupervisorError> {
        let DueRun {
            job,
            planned,
            tried,
            requested,
        } = due;
        let start = self.options.clock.now();
        let found = match self.check_job(&job, planned, start, tried)? {
            Some(found) => found,
            None => return Ok(None),
        };
        let number = self.last_tick.as_ref().map_or(0, |t| t.tick) + 1;
        let mut claim = Run::new(&job.name, planned, start, JobOutcome::Running);
        claim.tick = Some(number);
        ledger::append(&self.home.path(ledger::FILE), &claim)?;
        tracing::info!(
            "job {}: running{} as tick {number} (planned for {})",
            job.name,
            if requested { " by request" } else { "" },
            crate::clock::to_second(planned)
        );
        let turn = JobTurn::of(&job, planned, found);
        let end = self.run_one_tick(Some(&turn))?;
        let run = self.judge_run(&job, claim, &end, tried);
        let subject = match run.outcome {
            JobOutcome::Done => match run.evidence.first() {
                Some(first) => format!("job {}: done: {first}", job.name),
                None => format!("job {}: done", job.name),
            },
            JobOutcome::Unmet => format!("job {}: unmet: {}", job.name, run.missing.join(", ")),
            _ => format!("job {}: {}", job.name, run.outcome.as_str()),
        };
        self.record_job(&run, &subject)?;
        self.after_run(&job, &run)?;
        Ok(Some(end))
    }

    /// The check, when the job has one: `Some(what it printed)` when there
    /// is work; `None` when the run ends here (skipped, or failed, and
    /// recorded).
    fn check_job(
        &mut self,
        job: &Job,
        planned: DateTime<Utc>,
        start: DateTime<Utc>,
        tried: usize,
    ) -> Result<Option<Option<CheckFound>>, SupervisorError> {
        if job.check.is_empty() {
            return Ok(Some(None));
        }
        let trusted = crate::tools::trust::Trust::load(self.home).trusts(&job.file, &job.digest);
        let said = if trusted {
            check::run(self.home, job, &self.options.environment)
        } else {
            CheckSaid::Failed(format!(
                "its check does not run: {} changed since you trusted it (or never was); read \
                 it, then run `hearth trust`",
                job.file
            ))
        };
        let now = self.options.clock.now();
        let seen = match said {
            CheckSaid::Work(text) => {
                return Ok(Some(Some(CheckFound {
                    text,
                    outside: job.check_output == CheckOutput::Outside,
                })))
            }
            CheckSaid::Nothing => RunEnd::NothingToDo,
            CheckSaid::Failed(why) => {
                tracing::warn!("job {}: {why}", job.name);
                RunEnd::CheckFailed { why, trusted }
            }
        };
        let mut run = Run::new(&job.name, planned, start, JobOutcome::Skipped);
        run.end = Some(now);
        outcome::decide(seen, tried, now).apply_to(&mut run);
        let subject = match run.outcome {
            JobOutcome::Skipped => {
                // A check that finds nothing, every few minutes, is no
                // commit of its own: its line rides in the next commit.
                self.record_job_uncommitted(&run)?;
                self.after_run(job, &run)?;
                return Ok(None);
            }
            _ if !trusted => format!("job {}: its check is not trusted", job.name),
            _ => format!("job {}: its check failed", job.name),
        };
        self.record_job(&run, &subject)?;
        self.after_run(job, &run)?;
        Ok(None)
    }

    /// The run's ledger line from its tick: what hearth observed of the
    /// tick (and, when it exited 0, of its commit), decided by
    /// [`outcome::decide`].
    fn judge_run(&self, job: &Job, claim: Run, end: &TickEnd, tried: usize) -> Run {
        let record = &end.record;
        let mut run = claim;
        run.end = Some(record.end);
        run.model_calls = end.calls;
        run.tokens = record.tokens.sent() + record.tokens.output;
        run.cost_usd = record.cost_usd;
        let seen = match record.class {
            Class::Skipped => RunEnd::BudgetSpent {
                note: record.note.clone(),
            },
            Class::Ok => RunEnd::TickOk {
                expect: &job.expect,
                commit: self.changed_by_tick(record).map(|changed| Observed {
                    changed,
                    sent: record.sent.clone(),
                    proposal: record.proposal,
                }),
            },
            _ => RunEnd::TickFailed {
                cause: record.note.clone().unwrap_or_else(|| {
                    format!(
                        "its tick exited {} ({})",
                        record.exit,
                        record.class.as_str()
                    )
                }),
                calls: end.calls,
                backoff: record
                    .backoff_ms
                    .map(|ms| Duration::milliseconds(ms as i64)),
            },
        };
        outcome::decide(seen, tried, record.end).apply_to(&mut run);
        run
    }

    /// What tick `record`'s commit added or changed, or why that cannot
    /// be told (HEAD is not its commit, or git could not say).
    fn changed_by_tick(&self, record: &TickRecord) -> Result<Vec<String>, Unobserved> {
        let head = self.repo.head().ok_or(Unobserved::NoCommit)?;
        let ours = self
            .repo
            .message(&head)
            .is_some_and(|m| m.starts_with(&format!("tick {}: ", record.tick)));
        if !ours {
            return Err(Unobserved::NotTheTicks { tick: record.tick });
        }
        self.repo.changed_in(&head).map_err(|e| Unobserved::Git {
            said: e.to_string(),
        })
    }
}

/// The jobs `hearth jobs run` asked a running supervisor for, oldest first.
fn requested_jobs(home: &crate::home::Home) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(home.path(REQUESTS)) else {
        return Vec::new();
    };
    let mut found: Vec<(std::time::SystemTime, String)> = entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_str()?.to_string();
            // A request being written (its hidden temp file) is not one yet.
            if name.starts_with('.') {
                return None;
            }
            let at = e.metadata().and_then(|m| m.modified()).ok()?;
            Some((at, name))
        })
        .collect();
    found.sort();
    found.into_iter().map(|(_, name)| name).collect()
}
