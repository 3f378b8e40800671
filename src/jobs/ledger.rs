//! `state/jobs.jsonl`: the execution ledger of the jobs, one JSON line per
//! step, append-only, written by the supervisor. A run is claimed before
//! it starts (`running`, with its tick) and closed by a line of its
//! outcome; a `running` line with no outcome after it is a run a crash
//! cut, closed `unknown` at the next start (and never re-run blindly).
//!
//! Reading is forgiving as the tick ledger's is: a line that does not
//! parse is named and skipped. It rotates as that one does: once the live
//! file holds [`SEGMENT_BYTES`], it is renamed whole into `state/jobs/`
//! (numbered, so the names sort), and every commit stops carrying an
//! ever-growing copy. Readers read the segments and the live file: the
//! schedule of a weekly job counts from a run many segments back.

use std::path::Path;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::atomic;

/// The ledger, relative to the home.
pub const FILE: &str = crate::home::layout::rel::JOB_RUNS;

/// The live file's size at which it is rotated out.
pub const SEGMENT_BYTES: u64 = 256 * 1024;

/// Where its segments go: `state/jobs/` beside `state/jobs.jsonl`.
fn segments_dir(path: &Path) -> std::path::PathBuf {
    path.with_extension("")
}

/// The segments, oldest first.
fn segments(path: &Path) -> Vec<std::path::PathBuf> {
    let mut found: Vec<_> = std::fs::read_dir(segments_dir(path))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    found.sort();
    found
}

/// How a run ended (or that it is under way).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum JobOutcome {
    /// Claimed: its tick is starting or running.
    Running,
    /// The tick exited 0 and the expected evidence is in its commit.
    Done,
    /// The tick exited 0 and the expected evidence is missing.
    Unmet,
    /// Its check said there is nothing to do: no model call.
    Skipped,
    /// The check or the tick failed; `cause` says how.
    Failed,
    /// A crash cut it, or its commit could not be read: whether it did
    /// its work is not known.
    Unknown,
    /// Due while no supervisor ran, and not caught up.
    Missed,
}

impl JobOutcome {
    /// As the ledger and `hearth jobs` spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            JobOutcome::Running => "running",
            JobOutcome::Done => "done",
            JobOutcome::Unmet => "unmet",
            JobOutcome::Skipped => "skipped",
            JobOutcome::Failed => "failed",
            JobOutcome::Unknown => "unknown",
            JobOutcome::Missed => "missed",
        }
    }
}

/// One line of the ledger.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Run {
    /// The job's name.
    pub job: String,
    /// The scheduled time this run is for.
    pub planned: DateTime<Utc>,
    /// When the step began.
    pub start: DateTime<Utc>,
    /// When it ended (not for `running`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end: Option<DateTime<Utc>>,
    /// How it ended.
    pub outcome: JobOutcome,
    /// The tick that ran it, when one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tick: Option<u64>,
    /// What showed it done (`memory/digests/2026-11-27.md written`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub evidence: Vec<String>,
    /// What was expected and not found.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing: Vec<String>,
    /// Why it failed, was cut, or was skipped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause: Option<String>,
    /// Model requests answered (0: nothing was paid, a retry is safe).
    #[serde(default)]
    pub model_calls: u32,
    /// Tokens the run's requests sent and received.
    #[serde(default)]
    pub tokens: u64,
    /// What the run cost.
    #[serde(default)]
    pub cost_usd: f64,
    /// It made no model call and will be tried again then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_at: Option<DateTime<Utc>>,
    /// For `missed`: how many scheduled times it stands for.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub times: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl Run {
    /// `planned 2026-11-27T07:00:00Z: done (tick 42) — wrote memory/digests/a.md · $0.0123`
    pub fn describe(&self) -> String {
        let mut text = format!(
            "planned {}: {}",
            crate::clock::to_second(self.planned),
            self.outcome.as_str()
        );
        if let Some(tick) = self.tick {
            text.push_str(&format!(" (tick {tick})"));
        }
        if self.times > 1 {
            text.push_str(&format!(" ×{}", self.times));
        }
        let mut said = self.evidence.clone();
        if !self.missing.is_empty() {
            said.push(format!("missing: {}", self.missing.join(", ")));
        }
        if let Some(cause) = &self.cause {
            said.push(cause.clone());
        }
        if let Some(at) = self.retry_at {
            said.push(format!("tried again at {}", crate::clock::to_second(at)));
        }
        if !said.is_empty() {
            text.push_str(" — ");
            text.push_str(&said.join("; "));
        }
        if self.model_calls > 0 || self.cost_usd > 0.0 {
            text.push_str(&format!(
                " · {} call(s), {} tokens, ${:.4}",
                self.model_calls, self.tokens, self.cost_usd
            ));
        }
        text
    }

    /// A step of `job` for `planned`, begun at `start`.
    pub fn new(
        job: &str,
        planned: DateTime<Utc>,
        start: DateTime<Utc>,
        outcome: JobOutcome,
    ) -> Run {
        Run {
            job: job.to_string(),
            planned,
            start,
            end: None,
            outcome,
            tick: None,
            evidence: Vec::new(),
            missing: Vec::new(),
            cause: None,
            model_calls: 0,
            tokens: 0,
            cost_usd: 0.0,
            retry_at: None,
            times: 0,
        }
    }
}

/// The ledger as read: its lines in order, and those that did not parse.
#[derive(Debug, Default)]
pub struct JobLedger {
    /// Every line that parsed, oldest first.
    pub runs: Vec<Run>,
    /// (line number, problem) for each that did not.
    pub skipped: Vec<(usize, String)>,
}

impl JobLedger {
    /// Reads the segments of `path` and `path` itself, oldest first; a
    /// missing file is an empty ledger.
    pub fn read(path: &Path) -> std::io::Result<JobLedger> {
        let mut all = JobLedger::default();
        for file in segments(path).iter().map(|p| p.as_path()).chain([path]) {
            let part = JobLedger::read_file(file)
                .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", file.display())))?;
            all.runs.extend(part.runs);
            all.skipped.extend(part.skipped);
        }
        Ok(all)
    }

    fn read_file(path: &Path) -> std::io::Result<JobLedger> {
        let text = match std::fs::read(path) {
            Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(JobLedger::default()),
            Err(e) => return Err(e),
        };
        let mut ledger = JobLedger::default();
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            match serde_json::from_str(line) {
                Ok(run) => ledger.runs.push(run),
                Err(e) => ledger.skipped.push((i + 1, e.to_string())),
            }
        }
        Ok(ledger)
    }

    /// `job`'s lines, oldest first.
    pub fn of<'a>(&'a self, job: &'a str) -> impl DoubleEndedIterator<Item = &'a Run> + 'a {
        self.runs.iter().filter(move |r| r.job == job)
    }

    /// The newest line of `job` that is an outcome (not `running`).
    pub fn last_outcome<'a>(&'a self, job: &'a str) -> Option<&'a Run> {
        self.of(job)
            .rev()
            .find(|r| r.outcome != JobOutcome::Running)
    }

    /// Runs claimed and never closed: a crash cut them.
    pub fn unclosed(&self) -> Vec<&Run> {
        let mut open: Vec<&Run> = Vec::new();
        for run in &self.runs {
            open.retain(|o| !(o.job == run.job && o.planned == run.planned));
            if run.outcome == JobOutcome::Running {
                open.push(run);
            }
        }
        open
    }

    /// The scheduled time `job`'s schedule counts on from: its newest run
    /// or miss — a claim with no outcome too (a run cut short is never
    /// taken for one not yet run) — unless that run is to be tried again.
    pub fn last_planned(&self, job: &str) -> Option<DateTime<Utc>> {
        self.of(job)
            .filter(|r| r.retry_at.is_none())
            .map(|r| r.planned)
            .max()
    }

    /// A run to try again (it failed before any model call, or the
    /// budget skipped it): its scheduled time, when to try, and how many
    /// times it was tried (a skip for the budget is no try).
    pub fn retry(&self, job: &str) -> Option<(DateTime<Utc>, DateTime<Utc>, usize)> {
        let last = self.last_outcome(job)?;
        let at = last.retry_at?;
        let tries = self
            .of(job)
            .filter(|r| r.planned == last.planned)
            .filter(|r| !matches!(r.outcome, JobOutcome::Running | JobOutcome::Skipped))
            .count();
        Some((last.planned, at, tries))
    }

    /// How many of `job`'s newest runs in a row were `unmet` (runs its
    /// check skipped and misses do not break the streak, nor count).
    pub fn unmet_streak(&self, job: &str) -> usize {
        self.of(job)
            .rev()
            .filter(|r| {
                !matches!(
                    r.outcome,
                    JobOutcome::Running | JobOutcome::Skipped | JobOutcome::Missed
                )
            })
            .take_while(|r| r.outcome == JobOutcome::Unmet)
            .count()
    }

    /// How many scheduled times of `job` were missed, in all.
    pub fn misses(&self, job: &str) -> u32 {
        self.of(job)
            .filter(|r| r.outcome == JobOutcome::Missed)
            .map(|r| r.times.max(1))
            .sum()
    }
}

/// Appends `run` (one line, fsynced), rotating a full live file out
/// first.
pub fn append(path: &Path, run: &Run) -> Result<(), atomic::WriteError> {
    rotate_if_full(path, SEGMENT_BYTES)?;
    let line = serde_json::to_string(run).expect("a job run serialises");
    atomic::append_line(path, &line)
}

/// Renames the live file to the next numbered segment once it holds
/// `limit` bytes. One rename: a crash leaves it live or rotated.
fn rotate_if_full(path: &Path, limit: u64) -> Result<(), atomic::WriteError> {
    if std::fs::metadata(path).map_or(true, |m| m.len() < limit) {
        return Ok(());
    }
    let err = |source| atomic::WriteError {
        path: path.to_path_buf(),
        source,
    };
    let dir = segments_dir(path);
    std::fs::create_dir_all(&dir).map_err(err)?;
    let mut n = segments(path).len() + 1;
    let mut target = dir.join(format!("{n:06}.jsonl"));
    while target.exists() {
        n += 1;
        target = dir.join(format!("{n:06}.jsonl"));
    }
    std::fs::rename(path, &target).map_err(err)
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // fixtures, not state
mod tests {
    use super::*;

    fn at(h: u32) -> DateTime<Utc> {
        DateTime::from_timestamp(1_795_000_000 + i64::from(h) * 3600, 0).unwrap()
    }

    fn run(job: &str, h: u32, outcome: JobOutcome) -> Run {
        Run::new(job, at(h), at(h), outcome)
    }

    #[test]
    fn a_claim_without_an_outcome_is_unclosed() {
        let ledger = JobLedger {
            skipped: Vec::new(),
            runs: vec![
                run("a", 1, JobOutcome::Running),
                run("a", 1, JobOutcome::Done),
                run("b", 2, JobOutcome::Running),
                run("a", 3, JobOutcome::Running),
            ],
        };
        let open: Vec<_> = ledger
            .unclosed()
            .iter()
            .map(|r| (r.job.clone(), r.planned))
            .collect();
        assert_eq!(open, [("b".to_string(), at(2)), ("a".to_string(), at(3))]);
        // The open claim counts: a run cut short is never run again blindly.
        assert_eq!(ledger.last_planned("a"), Some(at(3)));
    }

    #[test]
    fn the_unmet_streak_skips_what_its_check_skipped() {
        let ledger = JobLedger {
            skipped: Vec::new(),
            runs: vec![
                run("a", 1, JobOutcome::Unmet),
                run("a", 2, JobOutcome::Done),
                run("a", 3, JobOutcome::Unmet),
                run("a", 4, JobOutcome::Skipped),
                run("a", 5, JobOutcome::Unmet),
            ],
        };
        assert_eq!(ledger.unmet_streak("a"), 2);
        assert_eq!(ledger.unmet_streak("b"), 0);
    }

    #[test]
    fn a_full_ledger_rotates_and_is_still_read_whole_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("jobs.jsonl");
        let weekly = run("week", 0, JobOutcome::Done);
        append(&path, &weekly).unwrap();
        for h in 1..=40 {
            rotate_if_full(&path, 600).unwrap();
            let line = serde_json::to_string(&run("hourly", h, JobOutcome::Skipped)).unwrap();
            atomic::append_line(&path, &line).unwrap();
        }
        rotate_if_full(&path, 600).unwrap();
        let claim = run("hourly", 41, JobOutcome::Running);
        append(&path, &claim).unwrap();
        assert!(segments(&path).len() > 5, "{:?}", segments(&path));
        let ledger = JobLedger::read(&path).unwrap();
        assert_eq!(ledger.runs.len(), 42);
        // The weekly job's run, many segments back, still sets its base.
        assert_eq!(ledger.last_planned("week"), Some(at(0)));
        assert_eq!(ledger.last_planned("hourly"), Some(at(41)));
        assert_eq!(ledger.unclosed().len(), 1);
    }

    #[test]
    fn a_failure_before_any_model_call_is_retried_and_counted() {
        let mut failed = run("a", 1, JobOutcome::Failed);
        failed.retry_at = Some(at(2));
        let ledger = JobLedger {
            runs: vec![run("a", 0, JobOutcome::Done), failed.clone(), failed],
            skipped: Vec::new(),
        };
        assert_eq!(ledger.retry("a"), Some((at(1), at(2), 2)));
        // The schedule counts on from the last run that is not retried.
        assert_eq!(ledger.last_planned("a"), Some(at(0)));
    }
}
