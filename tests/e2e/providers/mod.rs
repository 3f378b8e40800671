//! Real model providers against a model API on 127.0.0.1 (started by each
//! test) that speaks the wire protocol byte for byte, SSE included.

#![allow(clippy::disallowed_methods)] // fixtures, not state

use std::time::Duration;

use crate::common::model_server::{anthropic, Answer, ModelServer};
use crate::common::TestHome;
use serde_json::Value;

pub(crate) const KEY: &str = "sk-ant-test-7f3a9c-DO-NOT-LEAK";

pub(crate) fn home_for(server: &ModelServer, extra: &str) -> TestHome {
    TestHome::with_config(&format!(
        "[model]\nprovider = \"anthropic\"\nmodel = \"claude-test\"\nbase_url = \"{}\"\ntimeout_s = 2\nmax_retries = 2\nretry_base_ms = 10\n{extra}",
        server.url
    ))
}

pub(crate) fn run(home: &TestHome, ticks: &str) -> std::process::Output {
    home.keyed(&["run", "--ticks", ticks], KEY)
        .output()
        .unwrap()
}

fn stream(events: Vec<String>) -> Answer {
    Answer::Stream { events, hang: None }
}

fn status(code: u16, headers: &[(&str, &str)], body: String) -> Answer {
    Answer::Status {
        status: code,
        headers: headers
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect(),
        body,
    }
}

/// Every file of the home, .git included, and stderr: none holds the key.
fn assert_key_never_written(home: &TestHome, stderr: &[u8]) {
    assert!(
        !String::from_utf8_lossy(stderr).contains(KEY),
        "the key is in stderr"
    );
    let log = home.git(&["log", "-p", "--all"]);
    assert!(
        !String::from_utf8_lossy(&log.stdout).contains(KEY),
        "the key is in history"
    );
    for entry in walkdir::WalkDir::new(&home.path).into_iter().flatten() {
        if entry.file_type().is_file() {
            let bytes = std::fs::read(entry.path()).unwrap();
            assert!(
                !bytes.windows(KEY.len()).any(|w| w == KEY.as_bytes()),
                "the key is in {}",
                entry.path().display()
            );
        }
    }
}

#[test]
fn a_full_anthropic_tick_streams_calls_a_tool_and_records_usage_and_cost() {
    let server = ModelServer::start(vec![
        stream(anthropic::message(
            "I will note that.",
            &[(
                "toolu_01",
                "journal",
                &["{\"te", "xt\": \"the operator likes ", "jazz\"}"],
            )],
            1000,
            50,
        )),
        stream(anthropic::message("Noted in my journal.", &[], 1200, 20)),
    ]);
    let home = home_for(
        &server,
        "[budget.prices.\"claude-test\"]\ninput_per_mtok = 3.0\noutput_per_mtok = 15.0\n",
    );
    home.ok(&["say", "remember that I like jazz"]);
    let out = run(&home, "1");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let tick = &home.ticks()[0];
    assert_eq!(tick["class"], "ok", "{tick}");
    assert_eq!(tick["tokens"]["in"], 2200);
    assert_eq!(tick["tokens"]["out"], 70);
    let cost = tick["cost_usd"].as_f64().unwrap();
    let expected = 2200.0 * 3.0 / 1e6 + 70.0 * 15.0 / 1e6;
    assert!((cost - expected).abs() < 1e-9, "{cost} vs {expected}");
    let commit = &home.history()[0];
    assert!(
        commit.message.contains(
            "Hearth-Tokens: sent=2200 uncached=2200 cache_read=0 cache_write_5m=0 cache_write_1h=0 out=70"
        ),
        "{}",
        commit.message
    );
    assert!(
        commit
            .message
            .contains(&format!("Hearth-Cost-USD: {expected:.4}")),
        "{}",
        commit.message
    );
    let journal: Vec<String> = commit
        .files
        .iter()
        .filter(|f| f.starts_with("memory/journal/2"))
        .cloned()
        .collect();
    assert_eq!(
        journal.len(),
        1,
        "the tool's effect is in the tick's commit: {:?}",
        commit.files
    );
    assert!(home.read(&journal[0]).contains("the operator likes jazz"));
    let messages = home.read("state/messages.json");
    assert!(
        messages.contains("Noted in my journal."),
        "the reply is persisted"
    );

    let requests = server.received();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].path, "/v1/messages");
    assert_eq!(requests[0].header("x-api-key"), Some(KEY));
    assert_eq!(requests[0].header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(requests[0].body["stream"], true);
    assert_eq!(requests[0].body["model"], "claude-test");
    let system = requests[0].body["system"].as_array().unwrap();
    assert_eq!(system.last().unwrap()["cache_control"]["type"], "ephemeral");
    assert!(system[0].get("cache_control").is_none());
    let second = requests[1].body["messages"].as_array().unwrap();
    let result = &second.last().unwrap()["content"][0];
    assert_eq!(result["type"], "tool_result");
    assert_eq!(result["tool_use_id"], "toolu_01");

    // The system prompt the API receives is the one `hearth context` shows.
    let context: Value = serde_json::from_str(&home.ok(&["context", "--json"])).unwrap();
    for (sent, shown) in system.iter().zip(context["system"].as_array().unwrap()) {
        assert_eq!(sent["text"], shown["text"]);
    }
    assert_key_never_written(&home, &out.stderr);
}

#[test]
fn system_blocks_are_byte_identical_across_ticks_and_cached() {
    let cached: Vec<String> = anthropic::message("ok", &[], 10, 1)
        .into_iter()
        .map(|e| {
            e.replace(
                "\"cache_read_input_tokens\":0",
                "\"cache_read_input_tokens\":50",
            )
        })
        .collect();
    let server = ModelServer::start(vec![stream(cached)]);
    let home = home_for(&server, "");
    assert!(run(&home, "2").status.success());
    assert_eq!(
        home.ticks()[1]["tokens"]["cache_read"],
        50,
        "cache reads are recorded"
    );
    let requests = server.received();
    assert_eq!(requests.len(), 2);
    assert_eq!(
        requests[0].body["system"].to_string(),
        requests[1].body["system"].to_string(),
        "byte-identical system blocks"
    );
    assert_eq!(
        requests[1].body["system"]
            .as_array()
            .unwrap()
            .last()
            .unwrap()["cache_control"]["type"],
        "ephemeral"
    );
}

/// One tick against `script`; returns its ledger line and the requests.
fn fault(script: Vec<Answer>, extra: &str) -> (Value, usize, TestHome) {
    let server = ModelServer::start(script);
    let home = home_for(&server, extra);
    home.ok(&["say", "hello"]);
    let out = run(&home, "1");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_key_never_written(&home, &out.stderr);
    let tick = home.ticks()[0].clone();
    (tick, server.received().len(), home)
}

#[test]
fn a_429_with_retry_after_is_retried_then_succeeds() {
    let (tick, requests, _) = fault(
        vec![
            status(
                429,
                &[("retry-after", "0")],
                anthropic::error_body("rate_limit_error", "slow down"),
            ),
            stream(anthropic::message("hi", &[], 10, 1)),
        ],
        "",
    );
    assert_eq!(tick["class"], "ok", "{tick}");
    assert_eq!(requests, 2);
}

#[test]
fn repeated_500s_exhaust_the_retries_as_model_limitation() {
    let (tick, requests, home) = fault(
        vec![status(500, &[], anthropic::error_body("api_error", "boom"))],
        "",
    );
    assert_eq!(tick["class"], "model-limitation", "{tick}");
    assert_eq!(requests, 3, "1 try + [model] max_retries = 2");
    assert!(
        tick["note"].as_str().unwrap().contains("HTTP 500"),
        "{tick}"
    );
    // An outage: the model was never reached, so nothing was asked.
    assert!(
        !home.read("state/messages.json").contains("hello"),
        "no user turn is left behind by an outage"
    );
    assert_eq!(
        home.list("inbox").len(),
        1,
        "the message waits for the next tick"
    );
    assert!(tick.get("inbox").is_none(), "{tick}");
}

#[test]
fn a_529_overloaded_is_retried_and_recorded() {
    let (tick, requests, _) = fault(
        vec![status(
            529,
            &[],
            anthropic::error_body("overloaded_error", "Overloaded"),
        )],
        "",
    );
    assert_eq!(tick["class"], "model-limitation");
    assert_eq!(requests, 3);
    assert!(
        tick["note"].as_str().unwrap().contains("Overloaded"),
        "{tick}"
    );
}

#[test]
fn a_refused_connection_is_model_limitation() {
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let home = TestHome::with_config(&format!(
        "[model]\nprovider = \"anthropic\"\nmodel = \"m\"\nbase_url = \"{url}\"\nmax_retries = 1\nretry_base_ms = 10\n"
    ));
    assert!(run(&home, "1").status.success());
    let tick = &home.ticks()[0];
    assert_eq!(tick["class"], "model-limitation");
    let note = tick["note"].as_str().unwrap();
    assert!(
        note.contains("cannot reach") && note.contains(&format!("{url}/v1/messages")),
        "the refused URL is named: {tick}"
    );
}

#[test]
fn a_stalled_stream_times_out() {
    let mut events = anthropic::message("never finished", &[], 10, 1);
    events.truncate(3);
    let (tick, _, _) = fault(
        vec![Answer::Stream {
            events,
            hang: Some(Duration::from_secs(6)),
        }],
        "[tick]\ntimeout_s = 30\n",
    );
    assert_eq!(tick["class"], "model-limitation", "{tick}");
    let note = tick["note"].as_str().unwrap();
    assert!(
        note.contains("timed out") || note.contains("stalled"),
        "{note}"
    );
}

#[test]
fn a_stream_cut_before_message_stop_is_an_error_not_a_partial_answer() {
    let mut events = anthropic::message("half an ans", &[], 10, 1);
    events.truncate(events.len() - 2);
    let (tick, _, home) = fault(vec![stream(events)], "");
    assert_eq!(tick["class"], "model-limitation", "{tick}");
    assert!(tick["note"]
        .as_str()
        .unwrap()
        .contains("before message_stop"));
    assert!(
        !home.read("state/messages.json").contains("half an ans"),
        "no partial reply kept"
    );
}

#[test]
fn an_error_event_after_200_is_model_limitation() {
    let mut events = anthropic::message("x", &[], 10, 1);
    events.truncate(2);
    events.push(anthropic::error_event("overloaded_error", "Overloaded"));
    let (tick, _, _) = fault(vec![stream(events)], "");
    assert_eq!(tick["class"], "model-limitation");
    assert!(
        tick["note"].as_str().unwrap().contains("overloaded_error"),
        "{tick}"
    );
}

#[test]
fn invalid_json_in_a_tool_call_gets_one_correction_then_is_a_contract_violation() {
    let broken = || {
        stream(anthropic::message(
            "x",
            &[("t1", "journal", &["{\"text\": "])],
            10,
            1,
        ))
    };
    let (tick, requests, _) = fault(vec![broken()], "");
    assert_eq!(tick["class"], "contract-violation", "{tick}");
    assert_eq!(requests, 2, "one second chance");

    let fixed = stream(anthropic::message(
        "",
        &[("t2", "journal", &["{\"text\": \"noted\"}"])],
        10,
        1,
    ));
    let server = ModelServer::start(vec![
        broken(),
        fixed,
        stream(anthropic::message("done", &[], 10, 1)),
    ]);
    let home = home_for(&server, "");
    home.ok(&["say", "hello"]);
    assert!(run(&home, "1").status.success());
    let tick = &home.ticks()[0];
    assert_eq!(tick["class"], "ok", "{tick}");
    let recovery = &tick["recoveries"][0];
    assert_eq!(
        recovery["strategy"], "malformed call returned to the model",
        "{tick}"
    );
    assert_eq!(recovery["outcome"], "recovered");
    let second = server.received()[1].body["messages"].to_string();
    assert!(
        second.contains("not JSON"),
        "the model is told what was wrong: {second}"
    );
    assert!(
        !home
            .read("state/messages.json")
            .contains("your last answer was not used"),
        "the correction is not stored"
    );
}

#[test]
fn a_tool_that_does_not_exist_goes_back_to_the_model_and_is_a_coverage_gap_only_if_it_cannot_finish(
) {
    let browse = || {
        stream(anthropic::message(
            "x",
            &[("t1", "browse_web", &["{}"])],
            10,
            1,
        ))
    };
    let (tick, _, _) = fault(
        vec![browse(), stream(anthropic::message("ok", &[], 10, 1))],
        "",
    );
    assert_eq!(tick["class"], "ok", "the model got past it: {tick}");
    assert_eq!(
        crate::common::tool_recovery(&tick, "browse_web").as_deref(),
        Some("recovered"),
        "{tick}"
    );

    let (tick, _, _) = fault(vec![browse()], "[tick]\nmax_tool_rounds = 2\n");
    assert_eq!(tick["class"], "coverage-gap", "{tick}");
    assert_eq!(
        crate::common::tool_recovery(&tick, "browse_web").as_deref(),
        Some("failed")
    );
}

#[test]
fn more_tool_rounds_than_allowed_is_a_contract_violation() {
    let (tick, requests, _) = fault(
        vec![stream(anthropic::message(
            "again",
            &[("t", "read", &["{\"path\": \"memory/identity.md\"}"])],
            10,
            1,
        ))],
        "[tick]\nmax_tool_rounds = 2\n",
    );
    assert_eq!(tick["class"], "contract-violation", "{tick}");
    assert_eq!(
        requests, 3,
        "two rounds of tools, then the third call is the one too many"
    );
    assert!(tick["note"].as_str().unwrap().contains("max_tool_rounds"));
}

#[test]
fn an_explicit_provider_without_its_key_is_a_clear_start_up_error() {
    let home =
        TestHome::with_config("[model]\nprovider = \"anthropic\"\nmodel = \"claude-sonnet-4-5\"\n");
    let out = home.output(&["run", "--ticks", "1"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("ANTHROPIC_API_KEY"), "{err}");
    assert!(home.ticks().is_empty());
}

pub(crate) mod acting;
mod ask;
mod brake;
mod cache;
mod mcp_tools;
mod openai;
pub(crate) mod operator_tools;
mod outages;
mod overflow;
mod real_servers;
mod signals;
mod spend;
mod stops;
mod usage;

use openai::{openai_home, run_openai};
