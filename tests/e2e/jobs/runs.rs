//! Runs a crash cut or a failure ended: `unknown` and never re-run after a
//! model call, tried again when none was made.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::{last_message, worker, JobHome, DIGEST};
use crate::common::model_server::{anthropic, Answer, ModelServer};

/// A model that answers the first call of a job's run with a `write`, and
/// holds the next (its arrival noted in `held`) until the test kills the
/// supervisor; with `hold_first`, it holds the first call instead.
fn holding(held: PathBuf, hold_first: bool) -> Answer {
    let calls = Arc::new(AtomicUsize::new(0));
    Answer::Computed(Arc::new(move |body: &Value| {
        let last = last_message(body);
        let in_job = last.contains("<job-prompt") || last.contains("tool_result");
        if in_job {
            let n = calls.fetch_add(1, Ordering::SeqCst);
            if (n == 0 && hold_first) || (n == 1 && !hold_first) {
                std::fs::write(&held, "").unwrap();
                std::thread::sleep(Duration::from_secs(20));
            }
        }
        worker(body)
    }))
}

fn cut_a_run(hold_first: bool) -> (JobHome, ModelServer) {
    let dir = tempfile::tempdir().unwrap();
    let held = dir.path().join("held");
    let server = ModelServer::start(vec![holding(held.clone(), hold_first)]);
    let h = JobHome::new(&server, &[("digest", DIGEST)], "2026-11-24T06:00:00Z");
    let mut supervisor = h.home.spawn_with(h.cmd(&["run"]));
    h.home
        .wait_for(Duration::from_secs(30), "the run's held call", || {
            held.exists()
        });
    supervisor.kill().unwrap();
    supervisor.wait().unwrap();
    (h, server)
}

#[test]
fn a_run_cut_by_kill_9_after_a_model_call_is_unknown_flared_and_never_run_again() {
    let (h, server) = cut_a_run(false);
    let claims = h.runs();
    assert_eq!(claims.last().unwrap()["outcome"], "running", "{claims:?}");
    // The restart finds the cut run and does not run it again: after the
    // start's tick, the next run is the next day's.
    h.run_ticks(2);
    assert_eq!(
        h.outcomes("digest"),
        ["2026-11-24T07:00 unknown", "2026-11-25T07:00 done"]
    );
    let unknown = h
        .runs()
        .into_iter()
        .find(|r| r["outcome"] == "unknown")
        .unwrap();
    assert!(unknown["model_calls"].as_u64().unwrap() >= 1, "{unknown}");
    assert!(
        h.home
            .list("outbox")
            .iter()
            .any(|f| f.contains("flare-job-digest")),
        "the cut run is flared"
    );
    drop(server);
}

#[test]
fn a_run_cut_before_any_model_call_is_tried_again_for_the_same_time() {
    let (h, _server) = cut_a_run(true);
    h.run_ticks(1);
    assert_eq!(
        h.outcomes("digest"),
        ["2026-11-24T07:00 failed", "2026-11-24T07:00 done"]
    );
    let failed = h
        .runs()
        .into_iter()
        .find(|r| r["outcome"] == "failed")
        .unwrap();
    assert_eq!(failed["model_calls"], 0);
    assert!(failed["retry_at"].is_string(), "{failed}");
    assert!(
        !h.home
            .list("outbox")
            .iter()
            .any(|f| f.contains("flare-job-digest")),
        "a run tried again is not flared"
    );
}

#[test]
fn a_failed_run_is_tried_again_only_when_it_made_no_model_call() {
    // The job's first call: overloaded (nothing paid). Its second (the
    // retry) answers with a write, and the call after that fails: that
    // run made a call, so it is not tried again.
    let job_calls = Arc::new(AtomicUsize::new(0));
    let calls = job_calls.clone();
    let server = ModelServer::start(vec![Answer::Computed(Arc::new(move |body: &Value| {
        let last = last_message(body);
        if last.contains("<job-prompt") || last.contains("tool_result") {
            let n = calls.fetch_add(1, Ordering::SeqCst);
            if n == 0 || n == 2 {
                return Answer::Status {
                    status: 529,
                    headers: vec![],
                    body: anthropic::error_body("overloaded_error", "Overloaded"),
                };
            }
        }
        worker(body)
    }))]);
    let h = JobHome::new(&server, &[("digest", DIGEST)], "2026-11-24T06:00:00Z");
    h.run_ticks(6);
    let first_day: Vec<Value> = h
        .runs()
        .into_iter()
        .filter(|r| r["outcome"] != "running" && r["planned"] == "2026-11-24T07:00:00Z")
        .collect();
    assert_eq!(first_day.len(), 2, "{first_day:#?}");
    assert_eq!(first_day[0]["outcome"], "failed");
    assert_eq!(first_day[0]["model_calls"], 0);
    assert!(first_day[0]["retry_at"].is_string(), "{:#?}", first_day[0]);
    assert_eq!(first_day[1]["outcome"], "failed");
    assert_eq!(first_day[1]["model_calls"], 1);
    assert!(first_day[1]["retry_at"].is_null(), "{:#?}", first_day[1]);
    // The write the second try made is in its tick's commit; the day's
    // run is not tried a third time.
    assert_eq!(job_calls.load(Ordering::SeqCst).min(3), 3);
    assert!(!h
        .runs()
        .iter()
        .any(|r| r["planned"] == "2026-11-24T07:00:00Z" && r["outcome"] == "done"));
}

/// A run the day's budget skipped waits for the budget's next UTC day: it
/// was tried three times a minute apart instead, each skipped again, and
/// the scheduled time was lost.
#[test]
fn a_run_the_budget_skipped_waits_for_the_next_utc_day() {
    let server = ModelServer::start(vec![Answer::Computed(Arc::new(worker))]);
    let h = JobHome::new(&server, &[("digest", DIGEST)], "2026-11-24T06:30:00Z");
    let mut config = std::fs::read_to_string(h.home.file("hearth.toml")).unwrap();
    config.push_str("[budget]\ndaily_usd = 1.0\n");
    std::fs::write(h.home.file("hearth.toml"), config).unwrap();
    std::fs::write(
        h.home.file("state/budget.json"),
        r#"{"version": 1, "days": {"2026-11-24": 2.5}}"#,
    )
    .unwrap();
    h.run_ticks(3);
    let runs: Vec<Value> = h
        .runs()
        .into_iter()
        .filter(|r| r["outcome"] != "running")
        .collect();
    assert_eq!(
        h.outcomes("digest"),
        ["2026-11-24T07:00 skipped", "2026-11-24T07:00 done"],
        "{runs:#?}"
    );
    assert!(
        runs[0]["cause"]
            .as_str()
            .unwrap()
            .contains("budget is spent"),
        "{runs:#?}"
    );
    assert_eq!(runs[0]["retry_at"], "2026-11-25T00:00:00Z", "{runs:#?}");
    assert!(
        runs[1]["start"].as_str().unwrap() >= "2026-11-25T00:00:00Z",
        "{runs:#?}"
    );
}
