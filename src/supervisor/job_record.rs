//! A job's run on the record (DESIGN 19): each step a line of
//! `state/jobs.jsonl` and a commit of its own; the job's incident opened
//! after unmet runs in a row and resolved by a done one; and the runs a
//! crash cut, found and closed — `unknown` and flared when they had made a
//! model call, tried again when they had not.

use super::{Supervisor, SupervisorError};
use crate::home::layout::rel;
use crate::home::lock::CommitLock;
use crate::jobs::ledger::{self, JobOutcome, Run};
use crate::jobs::outcome::{self, RunEnd};
use crate::jobs::Job;
use crate::mailbox::cause::{Cause, Clearing};
use crate::mailbox::outbox::{self, Letter};
use crate::repo::{trailers, Identity};

impl Supervisor<'_> {
    /// After a run is recorded: its incident opened after `[jobs]
    /// unmet_flare` unmet runs in a row, resolved by a done one.
    pub(super) fn after_run(&mut self, job: &Job, run: &Run) -> Result<(), SupervisorError> {
        let kind = Cause::job(&job.name);
        match run.outcome {
            JobOutcome::Done => {
                let why = format!("job {}'s run was done", job.name);
                self.notices.clear(Clearing::JobDone(&job.name), &why);
            }
            JobOutcome::Unmet => {
                let streak = self
                    .job_ledger()
                    .map_or(0, |ledger| ledger.unmet_streak(&job.name));
                let threshold = self.config.jobs.unmet_flare as usize;
                if threshold > 0 && streak >= threshold {
                    let body = format!(
                        "The job `{}` ({}) ran {streak} time(s) in a row, exited 0, and did \
                         not do what its [expect] says: missing {}.\n\n\
                         What the runs did is in `hearth jobs show {}` and in their ticks' \
                         commits; the model's own account does not count. Look at the prompt \
                         in {} (is the work possible with the agent's tools?), then run \
                         `hearth jobs run {}` to try it now.\n",
                        job.name,
                        job.when(),
                        run.missing.join(", "),
                        job.name,
                        job.file,
                        job.name
                    );
                    let subject = format!("job {} runs but does not do its work", job.name);
                    self.post_job_flare(&kind, &subject, &body, run.tick)?;
                }
            }
            JobOutcome::Unknown => {
                let body = format!(
                    "A run of the job `{}` ended, but whether it did its work could not be \
                     told: {}.\n\nLook at its tick's commit (`hearth jobs show {}`, `git log`); \
                     if the work is not done, run `hearth jobs run {}`.\n",
                    job.name,
                    run.cause.as_deref().unwrap_or("no cause was recorded"),
                    job.name,
                    job.name
                );
                let subject = format!("a run of job {} could not be judged", job.name);
                self.post_job_flare(&kind, &subject, &body, run.tick)?;
            }
            _ => {}
        }
        Ok(())
    }

    fn post_job_flare(
        &mut self,
        kind: &Cause,
        subject: &str,
        body: &str,
        tick: Option<u64>,
    ) -> Result<(), SupervisorError> {
        let mut flare = Letter::flare(kind.clone(), subject, body);
        flare.tick = tick;
        outbox::post(self.home, &flare, self.options.clock.now())?;
        self.notices.new_flares();
        let now = self.options.clock.now();
        let _lock = CommitLock::acquire(self.home)?;
        self.repo.commit(
            &[rel::STATE, rel::OUTBOX],
            &Identity::hearth(),
            &format!("flare: {subject}"),
            now,
        )?;
        Ok(())
    }

    /// Appends `run` to the ledger, to be committed with whatever is
    /// committed next (a tick, another run, the stop): a check that found
    /// nothing to do is worth a line, not a commit.
    pub(super) fn record_job_uncommitted(&mut self, run: &Run) -> Result<(), SupervisorError> {
        ledger::append(&self.home.path(ledger::FILE), run)?;
        Ok(())
    }

    /// Appends `run` to the ledger and commits it (with any lines
    /// recorded uncommitted before it).
    pub(super) fn record_job(&mut self, run: &Run, subject: &str) -> Result<(), SupervisorError> {
        ledger::append(&self.home.path(ledger::FILE), run)?;
        let _lock = CommitLock::acquire(self.home)?;
        let mut message = format!("{subject}\n\n");
        message.push_str(&trailers::line(trailers::JOB, &run.job));
        message.push_str(&trailers::line(trailers::JOB_OUTCOME, run.outcome.as_str()));
        self.repo.commit(
            &[rel::JOB_RUNS, rel::JOB_SEGMENTS, rel::JOBS_SEEN],
            &Identity::hearth(),
            &message,
            self.options.clock.now(),
        )?;
        Ok(())
    }

    /// At start-up, before the tick a dead supervisor left is recovered
    /// (its report is still on disk): each run a crash cut is closed —
    /// tried again when it had made no model call, else `unknown`, flared,
    /// and never re-run by hearth.
    pub(super) fn close_cut_job_runs(&mut self) -> Result<(), SupervisorError> {
        let Some(ledger) = self.job_ledger() else {
            return Ok(());
        };
        let cut: Vec<Run> = ledger.unclosed().into_iter().cloned().collect();
        let now = self.options.clock.now();
        for claim in cut {
            let calls = claim.tick.map_or(0, |n| self.calls_of_cut_tick(n));
            let mut run = claim.clone();
            run.end = Some(now);
            run.model_calls = calls;
            let tick = claim
                .tick
                .map_or("its tick".to_string(), |n| format!("tick {n}"));
            let seen = RunEnd::Cut {
                tick: tick.clone(),
                calls,
            };
            outcome::decide(seen, 0, now).apply_to(&mut run);
            if run.outcome != JobOutcome::Unknown {
                self.record_job(&run, &format!("job {}: cut before any model call", run.job))?;
                continue;
            }
            self.record_job(&run, &format!("job {}: unknown (cut by a crash)", run.job))?;
            let body = format!(
                "A run of the job `{}` (planned for {}) was cut when the supervisor stopped \
                 during {tick}, after {calls} model call(s). hearth does not run it again by \
                 itself: it may have acted already (sent, posted, written).\n\n\
                 Look at what {tick} did (`git log`, `hearth jobs show {}`); if the work is \
                 not done, run `hearth jobs run {}`.\n",
                run.job,
                crate::clock::to_second(run.planned),
                run.job,
                run.job
            );
            let subject = format!("a run of job {} was cut by a crash", run.job);
            self.post_job_flare(&Cause::job(&run.job), &subject, &body, claim.tick)?;
        }
        Ok(())
    }

    /// How many model calls the cut tick `number` made: its report's count,
    /// or its ledger line's tokens when it was recorded.
    fn calls_of_cut_tick(&self, number: u64) -> u32 {
        if let Some(report) = crate::exchange::report::TickReport::load_with_paid(self.home, number)
        {
            let usage = &report.outcome.usage;
            let paid = usage.input_tokens + usage.output_tokens + usage.cache_read_tokens > 0;
            return report.outcome.calls.max(u32::from(paid));
        }
        match &self.last_tick {
            Some(last) if last.tick == number => {
                u32::from(last.tokens.sent() + last.tokens.output > 0)
            }
            _ => 0,
        }
    }
}
