//! The clock: a missed run caught up once, a daylight-saving change, a job
//! late or never due named by status, a run asked of a running supervisor,
//! and what a run would send.

use std::time::Duration;

use super::{worker, JobHome, KEY};
use crate::common::model_server::{Answer, ModelServer};
use crate::common::TestHome;

#[test]
fn a_missed_run_is_caught_up_once_after_a_stop_and_skip_only_records_it() {
    let server = ModelServer::start(vec![Answer::Respond(worker)]);
    let job = |catch_up: &str| {
        format!(
            "schedule = \"0 7 * * *\"\ntimezone = \"UTC\"\ncatch_up = \"{catch_up}\"\n\
             prompt = \"WRITE-DIGEST: the morning digest.\"\n[expect]\nwrote = \"memory/digests/\"\n"
        )
    };
    let h = JobHome::new(
        &server,
        &[("once", &job("once")), ("skip", &job("skip"))],
        "2026-11-24T06:00:00Z",
    );
    h.run_ticks(3);
    assert_eq!(h.outcomes("once"), ["2026-11-24T07:00 done"]);
    assert_eq!(h.outcomes("skip"), ["2026-11-24T07:00 done"]);

    // Stopped until the 27th at 09:00: the 25th, 26th and 27th passed.
    h.set_clock("2026-11-27T09:00:00Z");
    h.run_ticks(1);
    assert_eq!(
        h.outcomes("once"),
        [
            "2026-11-24T07:00 done",
            "2026-11-26T07:00 missed",
            "2026-11-27T07:00 done"
        ]
    );
    assert_eq!(
        h.outcomes("skip"),
        ["2026-11-24T07:00 done", "2026-11-27T07:00 missed"]
    );
    let missed = h
        .runs()
        .into_iter()
        .filter(|r| r["outcome"] == "missed")
        .map(|r| {
            (
                r["job"].as_str().unwrap().to_string(),
                r["times"].as_u64().unwrap(),
            )
        })
        .collect::<Vec<_>>();
    assert_eq!(missed, [("once".to_string(), 2), ("skip".to_string(), 3)]);
    let list = h.stdout(&["jobs"]);
    assert!(list.contains("misses:  2"), "{list}");
    assert!(list.contains("misses:  3"), "{list}");
    // Nothing is late: both wait for the 28th.
    assert!(!list.contains("LATE"), "{list}");
}

#[test]
fn a_daily_run_at_a_time_the_spring_change_skips_runs_once_at_the_change() {
    let server = ModelServer::start(vec![Answer::Respond(worker)]);
    let h = JobHome::new(
        &server,
        &[(
            "night",
            "schedule = \"30 2 * * *\"\ntimezone = \"America/New_York\"\n\
             prompt = \"WRITE-DIGEST: the night's digest.\"\n",
        )],
        "2026-03-07T00:00:00Z",
    );
    // The start's tick, then 7, 8 (02:30 does not exist: 03:00 EDT) and 9 March.
    h.run_ticks(4);
    let planned: Vec<String> = h
        .runs()
        .iter()
        .filter(|r| r["outcome"] == "done")
        .map(|r| r["planned"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        planned,
        [
            "2026-03-07T07:30:00Z",
            "2026-03-08T07:00:00Z",
            "2026-03-09T06:30:00Z"
        ]
    );
}

#[test]
fn status_check_names_a_job_that_has_not_fired_when_due_and_one_that_never_will() {
    let server = ModelServer::start(vec![Answer::Respond(worker)]);
    let h = JobHome::new(
        &server,
        &[
            (
                "digest",
                "schedule = \"0 7 * * *\"\ntimezone = \"UTC\"\nprompt = \"WRITE-DIGEST\"\n",
            ),
            (
                "leap",
                "schedule = \"0 0 30 2 *\"\ntimezone = \"UTC\"\nprompt = \"never\"\n",
            ),
            ("broken", "schedule = \"0 7 * *\"\nprompt = \"x\"\n"),
        ],
        "2026-11-24T06:00:00Z",
    );
    h.run_ticks(1);
    let out = h
        .home
        .cmd(&["status", "--check"])
        .env("HEARTH_NOW", "2026-11-25T09:00:00Z")
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success());
    assert!(
        said.contains("job digest was due at 2026-11-24T07:00:00Z and has not run"),
        "{said}"
    );
    assert!(said.contains("job leap never runs"), "{said}");
    let list = h
        .home
        .cmd(&["jobs"])
        .env("HEARTH_NOW", "2026-11-25T09:00:00Z")
        .output()
        .unwrap();
    let list = String::from_utf8_lossy(&list.stdout);
    assert!(
        list.contains("UNUSABLE: jobs/broken.toml: schedule \"0 7 * *\": 4 field(s)"),
        "{list}"
    );
}

#[test]
fn jobs_run_asks_a_running_supervisor_which_runs_it_between_ticks_at_once() {
    let server = ModelServer::start(vec![Answer::Respond(worker)]);
    let home = TestHome::with_config(&format!(
        "[model]\nprovider = \"anthropic\"\nmodel = \"claude-sonnet-4-5-20250929\"\n\
         base_url = \"{}\"\ntimeout_s = 5\nmax_retries = 0\n[tick]\ninterval_s = 3600\n",
        server.url
    ));
    std::fs::create_dir_all(home.file("jobs")).unwrap();
    std::fs::write(
        home.file("jobs/digest.toml"),
        "schedule = \"0 7 * * *\"\nprompt = \"WRITE-DIGEST: the morning digest.\"\n\
         [expect]\nwrote = \"memory/digests/\"\n",
    )
    .unwrap();
    let mut cmd = home.unpinned(&["run"]);
    cmd.env("ANTHROPIC_API_KEY", KEY);
    let supervisor = home.spawn_with(cmd);
    home.wait_for(Duration::from_secs(30), "the first tick", || {
        home.ticks().len() == 1 && home.log().contains("tick 1: exit 0")
    });
    let said = home.ok(&["jobs", "run", "digest"]);
    assert!(said.contains("asked the running supervisor"), "{said}");
    home.wait_for(Duration::from_secs(20), "the requested run", || {
        std::fs::read_to_string(home.file("state/jobs.jsonl"))
            .is_ok_and(|l| l.contains("\"outcome\":\"done\""))
    });
    // One run, by request, with the evidence; the interval tick still
    // waits for its hour.
    let show = home.ok(&["jobs", "show", "digest"]);
    assert!(
        show.contains(": done (tick 2) — wrote memory/digests/digest-"),
        "{show}"
    );
    assert_eq!(home.ticks().len(), 2);
    assert_eq!(home.ticks()[1]["job"], "digest");
    crate::common::finish_after_term(supervisor);
}

#[test]
fn context_shows_what_a_jobs_run_would_send_and_names_a_job_that_is_not_there() {
    let home = TestHome::new();
    home.ok(&["init"]);
    std::fs::create_dir_all(home.file("jobs")).unwrap();
    std::fs::write(
        home.file("jobs/digest.toml"),
        "schedule = \"0 7 * * *\"\ntimezone = \"UTC\"\nprompt = \"Write the digest.\"\n\
         [expect]\nwrote = \"memory/digests/\"\n",
    )
    .unwrap();
    let shown = home.ok(&["context", "--job", "digest"]);
    assert!(
        shown.contains("<job-prompt file=\"jobs/digest.toml\">\nWrite the digest.\n</job-prompt>")
            && shown.contains("hearth checks its commit for: a file written under memory/digests/"),
        "{shown}"
    );
    assert!(
        home.list("state").iter().all(|f| f != "jobs.jsonl"),
        "nothing is run or recorded"
    );
    let out = home.output(&["context", "--job", "nope"]);
    assert_eq!(out.status.code(), Some(1));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("there is no jobs/nope.toml") && said.contains("hearth jobs"),
        "{said}"
    );
}
