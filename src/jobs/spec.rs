//! A job as the operator writes it: `jobs/NAME.toml` (DESIGN 19).
//!
//! ```toml
//! schedule = "0 7 * * *"          # cron, five fields, or @daily…
//! timezone = "Europe/Berlin"      # default: the host's
//! prompt = "Write this morning's digest of memory/news/ to memory/digests/."
//! check = ["./bin/news-changed"]  # optional: exit 0 run, exit 1 nothing to do
//! check_timeout_s = 60
//! check_output = "outside"        # or "mine": whose words its stdout is
//! env = ["FEED_TOKEN"]            # what the check gets of hearth's environment
//! network = true                  # the check may reach the network (its sandbox)
//! max_usd = 0.50                  # the run stops past this
//! catch_up = "once"               # or "skip": a run missed while stopped
//!
//! [expect]                        # what done means, checked by hearth
//! wrote = "memory/digests/"
//! sent = false
//! proposal = false
//! ```
//!
//! The agent cannot write `jobs/` (its tools reach `memory/` and `outbox/`
//! only), and a job's `check` runs only while its file is the one the
//! operator trusted (`hearth trust`), as a tool's command does.

use std::path::Path;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::cron::{CronError, Schedule};
use crate::home::Home;

/// Where the jobs live, relative to the home.
pub const DIR: &str = crate::home::layout::rel::JOBS;

/// The largest manifest read: a job is a few lines.
const MAX_BYTES: u64 = 64 * 1024;

/// The manifest's fields, as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct JobManifest {
    schedule: String,
    #[serde(default)]
    timezone: Option<String>,
    prompt: String,
    #[serde(default)]
    check: Vec<String>,
    #[serde(default = "default_check_timeout")]
    check_timeout_s: u64,
    #[serde(default)]
    check_output: CheckOutput,
    #[serde(default)]
    env: Vec<String>,
    #[serde(default)]
    sandbox: Option<String>,
    #[serde(default)]
    network: bool,
    #[serde(default)]
    write: Vec<String>,
    #[serde(default)]
    read: Vec<String>,
    #[serde(default)]
    max_usd: Option<f64>,
    #[serde(default)]
    catch_up: CatchUp,
    #[serde(default)]
    expect: Expect,
}

fn default_check_timeout() -> u64 {
    60
}

/// Whose words a check's stdout is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CheckOutput {
    /// From outside (a feed, a web page): the run is an outside exchange.
    #[default]
    Outside,
    /// The operator's own (a hash, a count of their own files).
    Mine,
}

/// What a run missed while no supervisor ran does when it returns.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CatchUp {
    /// Runs once, however many were missed.
    #[default]
    Once,
    /// Is recorded `missed`, and the schedule goes on.
    Skip,
}

/// What done means, checked from the run's commit and calls.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    /// A file under this path changed in the run's commit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wrote: Option<String>,
    /// A letter to the operator went to the outbox.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub sent: bool,
    /// A proposal was made.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub proposal: bool,
}

impl Expect {
    /// Whether anything is expected at all.
    pub fn is_empty(&self) -> bool {
        self.wrote.is_none() && !self.sent && !self.proposal
    }
}

/// The zone a schedule is read in.
#[derive(Debug, Clone, PartialEq)]
pub enum Zone {
    /// The host's (`TZ`, `/etc/localtime`).
    Host,
    /// A named IANA zone.
    Named(chrono_tz::Tz),
}

impl Zone {
    /// Its name, for `hearth jobs`.
    pub fn name(&self) -> String {
        match self {
            Zone::Host => "host time".to_string(),
            Zone::Named(tz) => tz.name().to_string(),
        }
    }
}

/// A job, checked and ready to plan.
#[derive(Debug, Clone)]
pub struct Job {
    /// Its name: the file's stem.
    pub name: String,
    /// Its file, relative to the home.
    pub file: String,
    /// When it runs.
    pub schedule: Schedule,
    /// Where the schedule is read.
    pub zone: Zone,
    /// The run's user turn.
    pub prompt: String,
    /// Run first; exit 1 means nothing to do.
    pub check: Vec<String>,
    /// How long the check may take.
    pub check_timeout_s: u64,
    /// Whose words the check's stdout is.
    pub check_output: CheckOutput,
    /// The variables of hearth's environment the check gets, besides
    /// [`crate::process::ALWAYS_PASSED`] (never the model's key unless
    /// named, never a door's token).
    pub env: Vec<String>,
    /// What the check's process may reach (`crate::jail`): the sandbox
    /// with the file's `network` and `write`, or none (`sandbox = "none"`).
    pub confinement: crate::jail::Confinement,
    /// The run stops past this spend.
    pub max_usd: Option<f64>,
    /// What a missed run does.
    pub catch_up: CatchUp,
    /// What done means.
    pub expect: Expect,
    /// The digest `hearth trust` compares.
    pub digest: String,
}

impl Job {
    /// The first time after `after` it is due, or `None` for never.
    pub fn next_after(&self, after: DateTime<Utc>) -> Option<DateTime<Utc>> {
        match &self.zone {
            Zone::Host => self.schedule.next_after(&chrono::Local, after),
            Zone::Named(tz) => self.schedule.next_after(tz, after),
        }
    }

    /// "every day at 07:00 (Europe/Berlin)".
    pub fn when(&self) -> String {
        format!("{} ({})", self.schedule.describe(), self.zone.name())
    }
}

/// A job file that cannot be used: which, why, and the fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}: {why}; {fix}")]
pub struct JobProblem {
    /// The file, relative to the home.
    pub file: String,
    /// What is wrong.
    pub why: String,
    /// What to do.
    pub fix: String,
}

/// Every job in `jobs/`, by name, and the files that cannot be used.
pub fn load_all(home: &Home) -> (Vec<Job>, Vec<JobProblem>) {
    let mut jobs = Vec::new();
    let mut problems = Vec::new();
    let entries = match std::fs::read_dir(home.path(DIR)) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return (jobs, problems),
        // Jobs that cannot be listed are not "no jobs": said, with the fix.
        Err(e) => {
            problems.push(JobProblem {
                file: format!("{DIR}/"),
                why: format!("cannot be listed ({e})"),
                fix: "make it readable by the account hearth runs as".into(),
            });
            return (jobs, problems);
        }
    };
    let mut paths: Vec<_> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    paths.sort();
    for path in paths {
        match load(home, &path) {
            Ok(job) => jobs.push(job),
            Err(problem) => problems.push(problem),
        }
    }
    (jobs, problems)
}

/// One job file.
pub fn load(home: &Home, path: &Path) -> Result<Job, JobProblem> {
    let file = home.relative(path);
    let problem = |why: String, fix: &str| JobProblem {
        file: file.clone(),
        why,
        fix: fix.to_string(),
    };
    let name = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or_default()
        .to_string();
    if name.is_empty()
        || name.len() > 64
        || !name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    {
        return Err(problem(
            "a job's name is its file's name, and this one is not letters, digits, - and _".into(),
            "rename the file, e.g. jobs/morning-digest.toml",
        ));
    }
    let bytes = crate::bounded::read(path, MAX_BYTES)
        .map_err(|e| problem(e.to_string(), "make it a small TOML file"))?;
    let text = String::from_utf8(bytes.clone()).map_err(|e| {
        problem(
            format!("not UTF-8 (byte {})", e.utf8_error().valid_up_to()),
            "save it as UTF-8",
        )
    })?;
    let manifest: JobManifest = toml::from_str(&text).map_err(|e| {
        problem(
            e.message().to_string(),
            "see docs/guide.md \"Jobs\" for the keys (schedule, prompt, check, [expect]…)",
        )
    })?;
    let schedule = Schedule::parse(&manifest.schedule).map_err(|e: CronError| {
        problem(
            e.to_string(),
            "write five fields, e.g. schedule = \"0 7 * * *\"",
        )
    })?;
    let zone = match manifest.timezone.as_deref().map(str::trim) {
        None | Some("") => Zone::Host,
        Some(name) => Zone::Named(name.parse().map_err(|_| {
            problem(
                format!("timezone {name:?} is not an IANA zone"),
                "write a zone such as \"Europe/Berlin\" or \"UTC\", or leave it out for the host's",
            )
        })?),
    };
    if let Some((why, fix)) = unusable(&manifest) {
        return Err(problem(why, fix));
    }
    let confinement = confinement_of(home, &name, &manifest).map_err(|why| {
        problem(
            why.to_string(),
            "see docs/guide.md \"Jobs\": a check runs in the tool sandbox (network = true, \
             read and write = [\"/abs/dir\"] grant more)",
        )
    })?;
    Ok(Job {
        name,
        file,
        schedule,
        zone,
        prompt: manifest.prompt,
        check: manifest.check,
        check_timeout_s: manifest.check_timeout_s,
        check_output: manifest.check_output,
        env: manifest.env,
        confinement,
        max_usd: manifest.max_usd,
        catch_up: manifest.catch_up,
        expect: Expect {
            wrote: manifest
                .expect
                .wrote
                .map(|w| w.trim_start_matches("./").to_string()),
            ..manifest.expect
        },
        digest: crate::tools::trust::digest(&bytes),
    })
}

/// What the file's sandbox keys give the check of job `name`.
fn confinement_of(
    home: &Home,
    name: &str,
    m: &JobManifest,
) -> Result<crate::jail::Confinement, crate::jail::KeysRefused> {
    let keys = crate::jail::Keys {
        sandbox: m.sandbox.as_deref(),
        network: m.network,
        write: &m.write,
        read: &m.read,
    };
    crate::jail::Confinement::from_keys(home.root(), &format!("job-{name}"), &keys)
}

/// What makes a manifest that parsed unusable, and the fix.
fn unusable(m: &JobManifest) -> Option<(String, &'static str)> {
    if m.prompt.trim().is_empty() {
        return Some((
            "its prompt is empty".into(),
            "say what the run is to do: prompt = \"…\"",
        ));
    }
    if m.check.first().is_some_and(|c| c.trim().is_empty()) {
        return Some((
            "check names no command".into(),
            "write an argv list, e.g. check = [\"./bin/changed\"], or leave it out",
        ));
    }
    if m.check_timeout_s == 0 {
        return Some((
            "check_timeout_s = 0 leaves the check no time".into(),
            "give it seconds, e.g. check_timeout_s = 60",
        ));
    }
    if m.max_usd.is_some_and(|usd| usd.is_nan() || usd <= 0.0) {
        return Some((
            "max_usd must be more than 0".into(),
            "give the most one run may spend, e.g. max_usd = 0.50, or leave it out",
        ));
    }
    if let Some(wrote) = &m.expect.wrote {
        let wrote = wrote.trim_start_matches("./");
        if !(wrote.starts_with("memory/") || wrote.starts_with("outbox/")) || wrote.contains("..") {
            return Some((
                format!("[expect] wrote = {wrote:?} is not where the agent writes"),
                "name a path under memory/ (or outbox/), e.g. wrote = \"memory/digests/\"",
            ));
        }
    }
    None
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // fixtures, not state
mod tests {
    use super::*;

    fn home_with(name: &str, text: &str) -> (tempfile::TempDir, Home) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("hearth.toml"), "").unwrap();
        std::fs::create_dir(dir.path().join(DIR)).unwrap();
        std::fs::write(dir.path().join(DIR).join(name), text).unwrap();
        let home = Home::open(dir.path()).unwrap();
        (dir, home)
    }

    #[test]
    fn a_job_reads_with_its_defaults() {
        let (_d, home) = home_with(
            "digest.toml",
            "schedule = \"0 7 * * *\"\ntimezone = \"Europe/Berlin\"\nprompt = \"digest\"\n\
             [expect]\nwrote = \"./memory/digests/\"\n",
        );
        let (jobs, problems) = load_all(&home);
        assert!(problems.is_empty(), "{problems:?}");
        let job = &jobs[0];
        assert_eq!(job.name, "digest");
        assert_eq!(job.catch_up, CatchUp::Once);
        assert_eq!(job.check_output, CheckOutput::Outside);
        assert_eq!(job.expect.wrote.as_deref(), Some("memory/digests/"));
        assert_eq!(job.when(), "every day at 07:00 (Europe/Berlin)");
    }

    #[test]
    fn a_broken_job_names_its_file_and_the_fix_and_the_others_still_load() {
        for (text, says) in [
            (
                "schedule = \"0 7 * *\"\nprompt = \"x\"\n",
                "a schedule has five",
            ),
            (
                "schedule = \"0 7 * * *\"\nprompt = \"x\"\ntimezone = \"Mars/Olympus\"\n",
                "not an IANA zone",
            ),
            (
                "schedule = \"0 7 * * *\"\nprompt = \"x\"\nschedul = 1\n",
                "unknown field `schedul`",
            ),
            (
                "schedule = \"0 7 * * *\"\nprompt = \" \"\n",
                "prompt is empty",
            ),
            (
                "schedule = \"0 7 * * *\"\nprompt = \"x\"\n[expect]\nwrote = \"tools/\"\n",
                "not where the agent writes",
            ),
            (
                "schedule = \"0 7 * * *\"\nprompt = \"x\"\nmax_usd = 0\n",
                "more than 0",
            ),
            ("prompt = \"x\"\n", "missing field `schedule`"),
        ] {
            let (_d, home) = home_with("bad.toml", text);
            std::fs::write(
                home.path("jobs/good.toml"),
                "schedule = \"@daily\"\nprompt = \"p\"\n",
            )
            .unwrap();
            let (jobs, problems) = load_all(&home);
            assert_eq!(jobs.len(), 1, "{text}");
            let said = problems[0].to_string();
            assert!(
                said.starts_with("jobs/bad.toml: ") && said.contains(says),
                "{said}"
            );
        }
        let (_d, home) = home_with("bad.toml", "");
        std::fs::write(home.path("jobs/bad.toml"), b"prompt = \"\xff\"\n").unwrap();
        assert!(load_all(&home).1[0].to_string().contains("not UTF-8"));
    }
}
