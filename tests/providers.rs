//! Real model providers against a model API on 127.0.0.1 (started by each
//! test) that speaks the wire protocol byte for byte, SSE included.

#![allow(clippy::disallowed_methods)] // fixtures, not state

mod common;

use std::time::Duration;

use common::model_server::{anthropic, Answer, ModelServer};
use common::TestHome;
use serde_json::Value;

const KEY: &str = "sk-ant-test-7f3a9c-DO-NOT-LEAK";

fn home_for(server: &ModelServer, extra: &str) -> TestHome {
    TestHome::with_config(&format!(
        "[model]\nprovider = \"anthropic\"\nmodel = \"claude-test\"\nbase_url = \"{}\"\ntimeout_s = 2\nmax_retries = 2\nretry_base_ms = 10\n{extra}",
        server.url
    ))
}

fn run(home: &TestHome, ticks: &str) -> std::process::Output {
    home.cmd(&["run", "--ticks", ticks])
        .env("ANTHROPIC_API_KEY", KEY)
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
        commit.message.contains("Hearth-Tokens: in=2200 out=70"),
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
    assert!(
        home.read("state/messages.json").contains("hello"),
        "the question stays written ahead"
    );
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
    assert!(
        tick["note"].as_str().unwrap().contains("cannot reach"),
        "{tick}"
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
fn invalid_json_in_a_tool_call_is_a_contract_violation() {
    let (tick, _, _) = fault(
        vec![stream(anthropic::message(
            "x",
            &[("t1", "journal", &["{\"text\": "])],
            10,
            1,
        ))],
        "",
    );
    assert_eq!(tick["class"], "contract-violation", "{tick}");
}

#[test]
fn a_tool_that_does_not_exist_is_a_coverage_gap() {
    let (tick, _, _) = fault(
        vec![
            stream(anthropic::message(
                "x",
                &[("t1", "browse_web", &["{}"])],
                10,
                1,
            )),
            stream(anthropic::message("ok", &[], 10, 1)),
        ],
        "",
    );
    assert_eq!(tick["class"], "coverage-gap", "{tick}");
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
    let home = TestHome::with_config("[model]\nprovider = \"anthropic\"\nmodel = \"m\"\n");
    let out = home.output(&["run", "--ticks", "1"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("ANTHROPIC_API_KEY"), "{err}");
    assert!(home.ticks().is_empty());
}

fn openai_home(server: &ModelServer) -> TestHome {
    TestHome::with_config(&format!(
        "[model]\nprovider = \"openai\"\nmodel = \"llama3.1\"\nbase_url = \"{}/v1\"\napi_key_env = \"OLLAMA_KEY\"\ntimeout_s = 2\nmax_retries = 1\nretry_base_ms = 10\n[budget.prices.\"llama3.1\"]\ninput_per_mtok = 1.0\noutput_per_mtok = 2.0\n",
        server.url
    ))
}

fn run_openai(home: &TestHome) -> std::process::Output {
    home.cmd(&["run", "--ticks", "1"])
        .env("OLLAMA_KEY", KEY)
        .output()
        .unwrap()
}

#[test]
fn a_full_openai_compatible_tick_with_a_fragmented_tool_call() {
    use common::model_server::openai;
    let server = ModelServer::start(vec![
        stream(openai::completion(
            "Sending a reply.",
            &[(
                "call_1",
                "send",
                &["{\"body\": \"hel", "lo from llama\"", "}"],
            )],
            500,
            40,
        )),
        stream(openai::completion("Done.", &[], 600, 5)),
    ]);
    let home = openai_home(&server);
    home.ok(&["say", "say hello"]);
    let out = run_openai(&home);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tick = &home.ticks()[0];
    assert_eq!(tick["class"], "ok", "{tick}");
    assert_eq!(tick["tokens"]["in"], 1100);
    assert_eq!(tick["tokens"]["out"], 45);
    let outbox = home.list("outbox");
    assert_eq!(outbox.len(), 1);
    assert!(home
        .read(&format!("outbox/{}", outbox[0]))
        .contains("hello from llama"));

    let requests = server.received();
    assert_eq!(requests[0].path, "/v1/chat/completions");
    assert_eq!(
        requests[0].header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert_eq!(requests[0].body["stream_options"]["include_usage"], true);
    assert_eq!(requests[0].body["messages"][0]["role"], "system");
    let second = requests[1].body["messages"].as_array().unwrap();
    assert_eq!(second[second.len() - 2]["tool_calls"][0]["id"], "call_1");
    assert_eq!(second.last().unwrap()["role"], "tool");
    assert_eq!(second.last().unwrap()["tool_call_id"], "call_1");
    assert_key_never_written(&home, &out.stderr);
}

#[test]
fn an_openai_stream_without_done_is_model_limitation() {
    use common::model_server::openai;
    let mut events = openai::completion("cut", &[], 5, 1);
    events.pop();
    let server = ModelServer::start(vec![stream(events)]);
    let home = openai_home(&server);
    assert!(run_openai(&home).status.success());
    assert_eq!(home.ticks()[0]["class"], "model-limitation");
}

#[test]
fn past_the_daily_budget_ticks_are_skipped_with_exit_3_and_one_flare() {
    let server = ModelServer::start(vec![stream(anthropic::message("ok", &[], 1000, 0))]);
    let home = home_for(
        &server,
        "[budget]\ndaily_usd = 1.5\n[budget.prices.\"claude-test\"]\ninput_per_mtok = 1000.0\noutput_per_mtok = 0.0\n",
    );
    let out = run(&home, "4");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let classes: Vec<String> = home
        .ticks()
        .iter()
        .map(|t| t["class"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(classes, ["ok", "ok", "skipped", "skipped"]);
    assert_eq!(home.ticks()[2]["exit"], 3);
    assert_eq!(server.received().len(), 2, "skipped ticks call no model");
    let budget: Value = serde_json::from_str(&home.read("state/budget.json")).unwrap();
    let spent: f64 = budget["days"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_f64().unwrap())
        .sum();
    assert!((spent - 2.0).abs() < 1e-9, "{budget}");
    let flares: Vec<String> = home
        .list("outbox")
        .into_iter()
        .filter(|n| n.contains("flare-budget"))
        .collect();
    assert_eq!(flares.len(), 1, "one budget flare per day");
    assert!(home
        .read(&format!("outbox/{}", flares[0]))
        .contains("daily_usd"));
    assert_eq!(home.history()[0].summary, "tick 4: exit 3 (skipped)");
}

#[test]
fn provider_outages_back_off_and_never_heal_but_a_real_failure_streak_does() {
    let mut script = vec![stream(anthropic::message("fine", &[], 10, 1))];
    script.extend((0..20).map(|_| {
        status(
            529,
            &[],
            anthropic::error_body("overloaded_error", "Overloaded"),
        )
    }));
    script.push(stream(anthropic::message(
        "x",
        &[("t1", "journal", &["{not json"])],
        10,
        1,
    )));
    let server = ModelServer::start(script);
    let home = home_for(
        &server,
        "[healer]\noutage_backoff_ms = 1\noutage_backoff_max_ms = 8\n",
    );
    std::fs::write(
        home.file("hearth.toml"),
        home.read("hearth.toml")
            .replace("max_retries = 2", "max_retries = 0"),
    )
    .unwrap();
    let out = run(&home, "26");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let ticks = home.ticks();
    assert_eq!(ticks[0]["class"], "ok");
    let outages: Vec<&Value> = ticks.iter().filter(|t| t["outage"] == true).collect();
    assert_eq!(outages.len(), 20, "every 529 tick is an outage");
    assert!(outages.iter().all(|t| t["class"] == "model-limitation"));
    let backoffs: Vec<u64> = outages
        .iter()
        .map(|t| t["backoff_ms"].as_u64().unwrap())
        .collect();
    assert_eq!(&backoffs[..5], &[1, 2, 4, 8, 8], "doubling, capped");

    let heals: Vec<String> = home
        .history()
        .iter()
        .filter(|c| c.summary.starts_with("heal: "))
        .map(|c| c.summary.clone())
        .collect();
    assert_eq!(
        heals.len(),
        1,
        "20 outages heal nothing; 5 contract violations heal once"
    );
    assert!(heals[0].ends_with("after 5 failed ticks"), "{heals:?}");
}

#[test]
fn killed_mid_stream_the_question_is_on_disk_and_no_half_reply() {
    let mut events = anthropic::message("this reply never finishes", &[], 10, 1);
    events.truncate(4);
    let server = ModelServer::start(vec![Answer::Stream {
        events,
        hang: Some(Duration::from_secs(30)),
    }]);
    let home = home_for(&server, "[tick]\ntimeout_s = 60\n");
    std::fs::write(
        home.file("hearth.toml"),
        home.read("hearth.toml")
            .replace("timeout_s = 2", "timeout_s = 60"),
    )
    .unwrap();
    home.ok(&["say", "the question that must survive"]);
    let mut cmd = home.cmd(&["run", "--ticks", "1"]);
    cmd.env("ANTHROPIC_API_KEY", KEY);
    let child = home.spawn_with(cmd);
    home.wait_for(Duration::from_secs(10), "the model call", || {
        server.received().len() == 1
    });
    std::thread::sleep(Duration::from_millis(300));
    common::signal(&child, libc::SIGKILL);
    common::finish(child, Duration::from_secs(5));

    let messages: Value = serde_json::from_str(&home.read("state/messages.json")).expect("parses");
    let turns = messages["messages"].as_array().unwrap();
    assert_eq!(turns.len(), 1, "only the user turn: {turns:?}");
    assert!(turns[0]["content"][0]["text"]
        .as_str()
        .unwrap()
        .contains("the question that must survive"));
    assert!(!home.read("state/messages.json").contains("never finishes"));
}

#[test]
fn a_429_for_a_spent_account_is_not_retried() {
    let (tick, requests, _) = fault(
        vec![status(
            429,
            &[("retry-after", "0")],
            r#"{"error":{"type":"insufficient_quota","code":"insufficient_quota","message":"You exceeded your current quota, please check your plan and billing details."}}"#.into(),
        )],
        "",
    );
    assert_eq!(tick["class"], "model-limitation");
    assert_eq!(requests, 1, "waiting does not refill an account");
}

#[test]
fn layer_1_restores_a_core_memory_a_tick_broke_and_flares() {
    let server = ModelServer::start(vec![
        stream(anthropic::message(
            "Rewriting my values.",
            &[(
                "t1",
                "write",
                &[
                    r#"{"path": "memory/core/values.md", "content": "---\ntags: [identity\n---\nbroken\n"}"#,
                ],
            )],
            10,
            1,
        )),
        stream(anthropic::message("Done.", &[], 10, 1)),
    ]);
    let home = home_for(&server, "");
    let before = home.read("memory/core/values.md");
    assert!(run(&home, "1").status.success());
    assert_eq!(home.read("memory/core/values.md"), before, "restored");
    let flare = home
        .list("outbox")
        .into_iter()
        .find(|n| n.contains("flare-layer1"))
        .expect("a layer1 flare");
    let flare = home.read(&format!("outbox/{flare}"));
    assert!(flare.contains("memory/core/values.md:"), "{flare}");
    assert!(
        flare.contains("tags: [identity"),
        "what the tick wrote is quoted"
    );
    let status = home.git(&["status", "--porcelain"]);
    assert_eq!(
        String::from_utf8_lossy(&status.stdout),
        "",
        "the restore is committed with the tick"
    );
}

#[test]
fn ticks_that_ignore_the_inbox_are_quiet_and_three_flare_once() {
    let server = ModelServer::start(vec![stream(anthropic::message(
        "I am thinking about it.",
        &[],
        10,
        1,
    ))]);
    let home = home_for(&server, "");
    for n in 0..4 {
        home.ok(&["say", &format!("please answer me ({n})")]);
        assert!(run(&home, "1").status.success());
    }
    let ticks = home.ticks();
    assert!(ticks.iter().all(|t| t["class"] == "ok"));
    assert!(
        ticks[0]["quiet"]
            .as_str()
            .unwrap()
            .contains("changed nothing"),
        "{}",
        ticks[0]
    );
    assert!(
        ticks[1]["quiet"]
            .as_str()
            .unwrap()
            .contains("repeated the previous reply"),
        "{}",
        ticks[1]
    );
    let flares: Vec<String> = home
        .list("outbox")
        .into_iter()
        .filter(|n| n.contains("flare-quiet-failure"))
        .collect();
    assert_eq!(flares.len(), 1, "one flare for the streak of 3: {flares:?}");
}
