//! A job's `check`: an argv the operator wrote, run before the model is
//! asked anything. Exit 0: there is work (its stdout goes into the run's
//! turn); exit 1: nothing to do, the run is `skipped` and costs nothing;
//! anything else, a timeout, or a command that cannot start: the check
//! failed, said with its stderr.
//!
//! It runs in the home, in its own process group (killed whole at its
//! timeout), with the supervisor's environment as `[flares] exec` does
//! (the operator's own command, trusted by digest as a tool's is), and
//! stdin closed.

use std::collections::BTreeMap;
use std::process::Stdio;
use std::time::{Duration, Instant};

use super::spec::Job;
use crate::home::Home;

/// The most of a check's stdout a run's turn carries.
pub const MAX_OUTPUT: usize = 16 * 1024;
/// How much of stderr a failure quotes.
const STDERR_TAIL: usize = 1000;

/// What a check said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CheckSaid {
    /// Work to do, with what it printed (bounded).
    Work(String),
    /// Nothing to do.
    Nothing,
    /// It failed: how.
    Failed(String),
}

/// Runs `job`'s check in `home`, with only the variables of `environment`
/// that every configured command gets and those the job names.
pub fn run(home: &Home, job: &Job, environment: &BTreeMap<String, String>) -> CheckSaid {
    let Some(program) = job.check.first() else {
        return CheckSaid::Work(String::new());
    };
    let mut command = match job.confinement.command(&job.check, home.root()) {
        Ok(command) => command,
        Err(e) => {
            return CheckSaid::Failed(format!(
                "its check {program:?} does not run: {e}; {}",
                e.hint()
            ))
        }
    };
    crate::process::confine_env(&mut command, environment, &job.env);
    command
        .env("HEARTH_HOME", home.root())
        .env("HEARTH_JOB", &job.name)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(e) => {
            return CheckSaid::Failed(format!(
                "its check {program:?} could not start: {e} (fix `check` in {})",
                job.file
            ))
        }
    };
    let pgid = child.id() as i32;
    let out = child
        .stdout
        .take()
        .map(|s| crate::process::drain(s, MAX_OUTPUT));
    let err = child
        .stderr
        .take()
        .map(|s| crate::process::drain(s, STDERR_TAIL * 4));
    let deadline = Instant::now() + Duration::from_secs(job.check_timeout_s);
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Ok(status),
            Ok(None) if Instant::now() >= deadline => break Err(None),
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => break Err(Some(e)),
        }
    };
    crate::process::signal_group(pgid, libc::SIGKILL);
    let _ = child.wait();
    let join = |h: Option<std::thread::JoinHandle<(Vec<u8>, bool)>>| {
        h.and_then(|h| h.join().ok()).unwrap_or_default()
    };
    let (out, cut) = join(out);
    let tail = crate::process::tail(&join(err).0, STDERR_TAIL);
    match status.map(|s| s.code()) {
        Err(None) => CheckSaid::Failed(format!(
            "its check was killed after check_timeout_s = {} (stderr: {tail})",
            job.check_timeout_s
        )),
        Err(Some(e)) => CheckSaid::Failed(format!("its check could not be waited for: {e}")),
        Ok(Some(0)) => {
            let mut text = String::from_utf8_lossy(&out).into_owned();
            if cut {
                text.push_str(&format!(
                    "\n[… the check's output cut at {MAX_OUTPUT} bytes]"
                ));
            }
            CheckSaid::Work(text)
        }
        Ok(Some(1)) => CheckSaid::Nothing,
        Ok(code) => CheckSaid::Failed(format!(
            "its check exited with {} (0 means work, 1 nothing to do; stderr: {tail})",
            code.map_or_else(|| "a signal".to_string(), |c| format!("code {c}"))
        )),
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // fixtures, not state
mod tests {
    use super::*;

    fn job(check: &[&str], timeout: u64) -> (tempfile::TempDir, Home, Job) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("hearth.toml"), "").unwrap();
        let home = Home::open(dir.path()).unwrap();
        let mut job = crate::jobs::plan::tests_job();
        job.check = check.iter().map(|s| s.to_string()).collect();
        job.check_timeout_s = timeout;
        (dir, home, job)
    }

    /// hearth's own environment, as a supervisor holds it: the model's key
    /// among the rest.
    fn env() -> BTreeMap<String, String> {
        [
            ("PATH", "/usr/local/bin:/usr/bin:/bin"),
            ("HOME", "/root"),
            ("ANTHROPIC_API_KEY", "sk-ant-secret"),
            ("HEARTH_WEB_TOKEN", "page-token"),
            ("FEED_TOKEN", "feed"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
    }

    #[test]
    fn a_check_gets_only_what_its_job_names_never_the_key() {
        let (_d, home, mut j) = job(&["sh", "-c", "env | sort"], 5);
        j.env = vec!["FEED_TOKEN".into(), "HEARTH_WEB_TOKEN".into()];
        let CheckSaid::Work(seen) = run(&home, &j, &env()) else {
            panic!("the check ran")
        };
        assert!(seen.contains("FEED_TOKEN=feed"), "{seen}");
        assert!(seen.contains("PATH=/usr/local/bin"), "{seen}");
        assert!(seen.contains("HEARTH_JOB=digest"), "{seen}");
        for never in ["sk-ant-secret", "page-token"] {
            assert!(!seen.contains(never), "{never} reached the check: {seen}");
        }
        assert!(!seen.lines().any(|l| l.starts_with("HOME=")), "{seen}");
    }

    #[test]
    fn exit_codes_say_work_nothing_or_failed() {
        let (_d, home, j) = job(&["sh", "-c", "echo new: 2 items"], 5);
        assert_eq!(
            run(&home, &j, &env()),
            CheckSaid::Work("new: 2 items\n".into())
        );
        let (_d, home, j) = job(&["sh", "-c", "exit 1"], 5);
        assert_eq!(run(&home, &j, &env()), CheckSaid::Nothing);
        let (_d, home, j) = job(&["sh", "-c", "echo broke >&2; exit 3"], 5);
        let said = run(&home, &j, &env());
        assert!(
            matches!(&said, CheckSaid::Failed(w) if w.contains("code 3") && w.contains("broke")),
            "{said:?}"
        );
        let (_d, home, j) = job(&["/no/such/check"], 5);
        assert!(
            matches!(run(&home, &j, &env()), CheckSaid::Failed(w) if w.contains("could not start"))
        );
    }

    #[test]
    fn a_check_that_hangs_is_killed_with_its_children_at_its_timeout() {
        let (_d, home, j) = job(&["sh", "-c", "sleep 30 & sleep 30"], 1);
        let started = Instant::now();
        let said = run(&home, &j, &env());
        assert!(
            matches!(&said, CheckSaid::Failed(w) if w.contains("check_timeout_s = 1")),
            "{said:?}"
        );
        assert!(started.elapsed() < Duration::from_secs(10));
    }
}
