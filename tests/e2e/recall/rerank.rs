//! Recall with the rerank model: one call, validated, one bounded retry,
//! and the lexical order (said so) when the model fails.

use super::*;
use crate::common::model_server::{anthropic, Answer, ModelServer};
use std::time::{Duration, Instant};

fn home(server: &ModelServer) -> TestHome {
    let home = TestHome::with_config(&format!(
        "[model]\nprovider = \"anthropic\"\nmodel = \"claude-test\"\nbase_url = \"{}\"\n[rerank]\nmodel = \"claude-cheap\"\n[recovery]\nwall_s = 1\n",
        server.url
    ));
    std::fs::write(
        home.file("memory/a.md"),
        "the heron waits by the river\n\nthe heron eats fish at dawn\n",
    )
    .unwrap();
    home
}

fn answer(text: &str) -> Answer {
    Answer::Stream {
        events: anthropic::message(text, &[], 100, 10),
        hang: None,
    }
}

/// Runs hearth with the model's key in the environment; it must succeed.
fn with_key(home: &TestHome, args: &[&str]) -> std::process::Output {
    home.ok_keyed(args, "sk-test")
}

fn recall_with_key(home: &TestHome, query: &str) -> (Value, Duration) {
    let start = Instant::now();
    let out = with_key(home, &["recall", "--json", "-k", "3", query]);
    (
        serde_json::from_slice(&out.stdout).unwrap(),
        start.elapsed(),
    )
}

#[test]
fn a_good_answer_reorders_and_notes_the_results() {
    let server = ModelServer::start(vec![answer(
        r#"{"results": [{"id": 2, "note": "says what the heron eats"}]}"#,
    )]);
    let home = home(&server);
    let lexical = recall(&home, "what does the heron eat");
    let (found, _) = recall_with_key(&home, "what does the heron eat");
    assert_eq!(found["order"], "reranked");
    let results = found["results"].as_array().unwrap();
    assert_eq!(results.len(), 1);
    assert_eq!(results[0]["note"], "says what the heron eats");
    assert_eq!(
        results[0]["excerpt"], lexical["results"][1]["excerpt"],
        "candidate 2 comes first"
    );
    assert_eq!(
        lexical["order"], "lexical",
        "without a key or model: lexical"
    );
    let request = &server.received()[0];
    assert_eq!(
        request.body["model"], "claude-cheap",
        "the [rerank] model is called"
    );
    assert!(request.body["messages"][0]["content"][0]["text"]
        .as_str()
        .unwrap()
        .contains("[1] (memory/a.md)"));
}

#[test]
fn nothing_relevant_is_a_legal_answer() {
    let server = ModelServer::start(vec![answer(r#"{"results": []}"#)]);
    let home = home(&server);
    let (found, _) = recall_with_key(&home, "heron");
    assert_eq!(found["order"], "reranked");
    assert!(found["results"].as_array().unwrap().is_empty());
    let text = with_key(&home, &["recall", "heron"]);
    assert!(String::from_utf8_lossy(&text.stdout).contains("nothing relevant"));
}

#[test]
fn garbage_is_retried_with_fewer_candidates_then_the_lexical_order_stands() {
    let server = ModelServer::start(vec![
        answer("I think the second one"),
        answer("still not JSON"),
    ]);
    let home = home(&server);
    let (found, _) = recall_with_key(&home, "heron");
    assert_eq!(found["order"], "lexical");
    assert!(found["lexical_because"]
        .as_str()
        .unwrap()
        .contains("rerank failed"));
    assert_eq!(found["results"].as_array().unwrap().len(), 2);
    let requests = server.received();
    assert_eq!(requests.len(), 2, "one retry");
    let first = requests[0].body["messages"][0]["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_string();
    let second = requests[1].body["messages"][0]["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        first.contains("[2]") && !second.contains("[2]"),
        "the retry shows fewer candidates"
    );
}

#[test]
fn the_agent_calls_recall_in_a_tick_and_gets_cited_blocks_back() {
    let server = ModelServer::start(vec![
        Answer::Stream {
            events: anthropic::message(
                "Let me look that up.",
                &[(
                    "toolu_r",
                    "recall",
                    &["{\"query\": \"what do herons eat\"}"],
                )],
                100,
                10,
            ),
            hang: None,
        },
        answer("Herons eat fish at dawn (memory/a.md:3)."),
    ]);
    let home = home(&server);
    home.ok(&["say", "what do herons eat?"]);
    with_key(&home, &["run", "--ticks", "1"]);
    assert_eq!(home.ticks()[0]["class"], "ok");
    let requests = server.received();
    assert_eq!(requests.len(), 2);
    let tools: Vec<&str> = requests[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(tools.contains(&"recall"), "{tools:?}");
    let result = &requests[1].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()["content"][0];
    assert_eq!(result["tool_use_id"], "toolu_r");
    let text = result["content"].to_string();
    assert!(
        // Cited as `hearth recall` cites: path:line@commit.
        text.contains("1. memory/a.md:3@") && text.contains("the heron eats fish at dawn"),
        "{text}"
    );
}

#[test]
fn a_retry_that_does_not_fit_recovery_extra_tokens_is_not_made() {
    let server = ModelServer::start(vec![answer("not JSON"), answer("never asked")]);
    let home = home(&server);
    let config = std::fs::read_to_string(home.file("hearth.toml")).unwrap();
    std::fs::write(
        home.file("hearth.toml"),
        config.replace("wall_s = 1\n", "wall_s = 1\nextra_tokens = 50\n"),
    )
    .unwrap();
    let (found, _) = recall_with_key(&home, "heron");
    assert_eq!(found["order"], "lexical");
    assert!(
        found["lexical_because"]
            .as_str()
            .unwrap()
            .contains("extra_tokens"),
        "{found}"
    );
    assert_eq!(server.received().len(), 1, "no retry");
}

#[test]
fn a_hanging_rerank_falls_back_within_the_recovery_budget() {
    let mut events = anthropic::message("{}", &[], 1, 1);
    events.truncate(1);
    let server = ModelServer::start(vec![Answer::Stream {
        events,
        hang: Some(Duration::from_secs(20)),
    }]);
    let home = home(&server);
    let (found, took) = recall_with_key(&home, "heron");
    assert_eq!(found["order"], "lexical");
    assert!(
        took < Duration::from_secs(6),
        "took {took:?} with [recovery] wall_s = 1"
    );
}

/// The shapes small local models really answer a rerank in (issue 33):
/// each read as the model meant it, none sent back for a retry.
#[test]
fn a_numbered_list_prose_with_citations_or_fenced_json_reorders_the_results() {
    for shape in [
        "1. [2] says what the heron eats\n2. [1] where it waits",
        "The most relevant is candidate 2; candidate 1 is about something else.",
        "```json\n{\"results\": [{\"id\": 2, \"note\": \"what it eats\"}]}\n```",
        "2, 1",
    ] {
        let server = ModelServer::start(vec![answer(shape)]);
        let home = home(&server);
        let lexical = recall(&home, "what does the heron eat");
        let (found, _) = recall_with_key(&home, "what does the heron eat");
        assert_eq!(found["order"], "reranked", "{shape:?}: {found}");
        assert_eq!(
            found["results"][0]["excerpt"], lexical["results"][1]["excerpt"],
            "{shape:?}: candidate 2 comes first"
        );
        assert_eq!(server.received().len(), 1, "{shape:?}: no retry needed");
    }
}

#[test]
fn an_empty_answer_keeps_the_lexical_order_and_says_so() {
    let server = ModelServer::start(vec![answer(""), answer("")]);
    let home = home(&server);
    let (found, _) = recall_with_key(&home, "heron");
    assert_eq!(found["order"], "lexical");
    let why = found["lexical_because"].as_str().unwrap();
    assert!(why.contains("the answer was empty"), "{why}");
    assert_eq!(found["results"].as_array().unwrap().len(), 2);
    let text = with_key(&home, &["recall", "heron"]);
    let said =
        String::from_utf8_lossy(&text.stdout).into_owned() + &String::from_utf8_lossy(&text.stderr);
    assert!(
        said.contains("the answer was empty"),
        "the text output says so: {said}"
    );
}

#[test]
fn every_rerank_call_is_on_the_ledger_counts_against_the_cap_and_stops_there() {
    let server = ModelServer::start(vec![Answer::Stream {
        // 100,000 input tokens at the shipped price of claude-sonnet-4-5
        // ($3 / MTok): $0.30 a call.
        events: anthropic::message(
            r#"{"results": [{"id": 1, "note": "the heron"}]}"#,
            &[],
            100_000,
            10,
        ),
        hang: None,
    }]);
    let home = TestHome::with_config(&format!(
        "[model]\nprovider = \"anthropic\"\nmodel = \"claude-sonnet-4-5-20250929\"\n\
         base_url = \"{}\"\n[budget]\ndaily_usd = 0.5\n",
        server.url
    ));
    std::fs::write(home.file("memory/a.md"), "the heron waits by the river\n").unwrap();
    let (first, _) = recall_with_key(&home, "where does the heron wait");
    assert_eq!(first["order"], "reranked");
    let (_, _) = recall_with_key(&home, "where does the heron wait");
    assert_eq!(server.received().len(), 2);
    let ledger = home.read("state/calls.jsonl");
    let calls: Vec<Value> = ledger
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(calls.len(), 2, "{ledger}");
    let spent: f64 = calls.iter().map(|c| c["cost_usd"].as_f64().unwrap()).sum();
    assert!((spent - 0.6).abs() < 0.01, "{ledger}");
    let subjects = String::from_utf8(home.git(&["log", "--format=%s"]).stdout).unwrap();
    assert_eq!(
        subjects.matches("recall: a rerank call").count(),
        2,
        "{subjects}"
    );
    // Over the cap: no call, the lexical order, and why.
    let (third, _) = recall_with_key(&home, "where does the heron wait");
    assert_eq!(server.received().len(), 2, "no third call");
    assert_eq!(third["order"], "lexical");
    assert!(
        third["lexical_because"]
            .as_str()
            .unwrap()
            .contains("daily budget is spent"),
        "{third}"
    );
    let status = home.ok(&["status", "--json"]);
    let status: Value = serde_json::from_str(&status).unwrap();
    assert!(
        (status["spent_today_usd"].as_f64().unwrap() - 0.6).abs() < 0.01,
        "{status}"
    );
    assert!(
        (status["spent_today"]["calls"].as_f64().unwrap() - 0.6).abs() < 0.01,
        "the part recall spent: {status}"
    );
    // `hearth day` counts the same money as `hearth status`: the reranks
    // are spend, whichever surface the operator reads.
    let day: Value = serde_json::from_str(&home.ok(&["day", "--json"])).unwrap();
    assert_eq!(
        day["spend_usd"], status["spent_today_usd"],
        "day: {day}\nstatus: {status}"
    );
    assert_eq!(day["spent"], status["spent_today"], "door by door: {day}");
    let text = home.ok(&["day"]);
    assert!(
        text.contains("$0.60 spent ($0.60 of it by recall's rerank)"),
        "{text}"
    );
}

#[test]
fn a_day_with_no_spend_says_nothing_was_spent_not_minus_nothing() {
    let home = TestHome::with_config("");
    let day: Value = serde_json::from_str(&home.ok(&["day", "--json"])).unwrap();
    assert_eq!(day["spend_usd"].to_string(), "0.0", "{day}");
    assert_eq!(day["spent"]["ticks"].to_string(), "0.0", "{day}");
    let status: Value = serde_json::from_str(&home.ok(&["status", "--json"])).unwrap();
    assert_eq!(status["spent_today_usd"].to_string(), "0.0", "{status}");
}
