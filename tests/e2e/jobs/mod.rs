//! Jobs (issue 52): work at set times whose "done" hearth checks. Each
//! test runs the real supervisor on a simulated clock (the wait for a
//! job's time is a move of the clock) against a model API on 127.0.0.1
//! that does what a job's prompt says, or only says it did; checks are
//! real child processes, and a run is cut by a real `kill -9`.
//!
//! `evidence.rs`: done and unmet, a check's skip, the spending cap, no
//! model; `runs.rs`: retries and runs a crash cut; `clock.rs`: catch-up,
//! daylight saving, lateness, a run asked for; `week.rs`: the guide's jobs.

mod clock;
mod evidence;
mod runs;
mod week;

use std::path::PathBuf;

use serde_json::Value;

use crate::common::model_server::{anthropic, Answer, ModelServer};
use crate::common::TestHome;

pub(super) const KEY: &str = "sk-ant-jobs";

/// A daily digest at 07:00 UTC, done when a file under `memory/digests/`
/// is in its run's commit.
pub(super) const DIGEST: &str = "schedule = \"0 7 * * *\"\ntimezone = \"UTC\"\n\
     prompt = \"WRITE-DIGEST: the morning digest.\"\n[expect]\nwrote = \"memory/digests/\"\n";

/// The request's last message, as JSON text: what a scripted model reads.
pub(super) fn last_message(body: &Value) -> String {
    body["messages"]
        .as_array()
        .and_then(|m| m.last())
        .map(Value::to_string)
        .unwrap_or_default()
}

pub(super) fn stream(text: &str, tools: &[(&str, &str, &[&str])]) -> Answer {
    Answer::Stream {
        events: anthropic::message(text, tools, 400, 20),
        hang: None,
    }
}

/// The time a job's turn says its run is planned for (`2026-11-24`).
pub(super) fn planned_day(turn: &str) -> String {
    let at = turn
        .find("planned for ")
        .map_or(0, |i| i + "planned for ".len());
    turn.get(at..at + 10).unwrap_or("unknown").to_string()
}

/// The job a turn runs (`digest`).
fn job_name(turn: &str) -> String {
    let at = turn
        .find("run of the job `")
        .map_or(0, |i| i + "run of the job `".len());
    turn[at..]
        .split('`')
        .next()
        .unwrap_or("unknown")
        .to_string()
}

/// A model that does what a job's prompt asks: `WRITE-DIGEST` writes the
/// job's digest of the day with `write`; `CLAIM-ONLY` says it wrote it and calls
/// nothing; anything else (an interval tick) has nothing to do.
pub(super) fn worker(body: &Value) -> Answer {
    let last = last_message(body);
    if last.contains("tool_result") {
        return stream("Done.", &[]);
    }
    if last.contains("<job-prompt") && last.contains("WRITE-DIGEST") {
        let day = planned_day(&last);
        let job = job_name(&last);
        let args = format!(
            "{{\"path\": \"memory/digests/{job}-{day}.md\", \"content\": \"# Digest {day}\\n\\nThe harbour was calm.\\n\"}}"
        );
        return stream(
            "Writing the digest.",
            &[("toolu_1", "write", &[args.as_str()])],
        );
    }
    if last.contains("<job-prompt") && last.contains("CLAIM-ONLY") {
        return stream(
            "I wrote today's digest to memory/digests/today.md and it is done.",
            &[],
        );
    }
    stream("Nothing needs doing.", &[])
}

/// A home on `server` whose interval is a day (jobs set the pace), with
/// `jobs` as `jobs/NAME.toml`, and its simulated clock at `start`.
pub(super) struct JobHome {
    pub(super) home: TestHome,
    _clock_dir: tempfile::TempDir,
    pub(super) clock: PathBuf,
}

impl JobHome {
    pub(super) fn new(server: &ModelServer, jobs: &[(&str, &str)], start: &str) -> JobHome {
        let home = TestHome::with_config(&format!(
            "[model]\nprovider = \"anthropic\"\nmodel = \"claude-sonnet-4-5-20250929\"\n\
             base_url = \"{}\"\ntimeout_s = 5\nmax_retries = 0\n[tick]\ninterval_s = 86400\n",
            server.url
        ));
        std::fs::create_dir_all(home.file("jobs")).unwrap();
        for (name, text) in jobs {
            std::fs::write(home.file(&format!("jobs/{name}.toml")), text).unwrap();
        }
        let clock_dir = tempfile::tempdir().unwrap();
        let clock = clock_dir.path().join("now");
        std::fs::write(&clock, start).unwrap();
        JobHome {
            home,
            _clock_dir: clock_dir,
            clock,
        }
    }

    pub(super) fn cmd(&self, args: &[&str]) -> std::process::Command {
        let mut cmd = self.home.keyed(args, KEY);
        // The host's zone, for jobs that name none: pinned, as the clock is.
        cmd.env("HEARTH_SIM_CLOCK", &self.clock).env("TZ", "UTC");
        cmd
    }

    /// `hearth run --ticks N` on the simulated clock, to its end.
    pub(super) fn run_ticks(&self, n: u32) {
        let out = self
            .cmd(&["run", "--ticks", &n.to_string(), "--interval", "86400"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "hearth run: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    pub(super) fn set_clock(&self, at: &str) {
        std::fs::write(&self.clock, at).unwrap();
    }

    /// `state/jobs.jsonl`, parsed.
    pub(super) fn runs(&self) -> Vec<Value> {
        std::fs::read_to_string(self.home.file("state/jobs.jsonl"))
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    /// The outcomes of `job`'s runs, `planned-day outcome` each, claims left out.
    pub(super) fn outcomes(&self, job: &str) -> Vec<String> {
        self.runs()
            .iter()
            .filter(|r| r["job"] == job && r["outcome"] != "running")
            .map(|r| {
                let planned = r["planned"].as_str().unwrap_or("");
                format!("{} {}", &planned[..16], r["outcome"].as_str().unwrap_or(""))
            })
            .collect()
    }

    pub(super) fn stdout(&self, args: &[&str]) -> String {
        let out = self.cmd(args).output().unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

pub(super) fn job_prompts(server: &ModelServer) -> usize {
    server
        .received()
        .iter()
        .filter(|r| {
            let last = last_message(&r.body);
            last.contains("<job-prompt") && !last.contains("tool_result")
        })
        .count()
}
