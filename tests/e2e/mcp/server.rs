//! `hearth mcp`, driven by the official Python SDK's stdio client
//! (`client.py`): initialize, list the tools, call them.

use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::{json, Value};

use super::venv;
use crate::common::model_server::{anthropic, Answer, ModelServer};
use crate::common::TestHome;

/// Runs `client.py` against `hearth --home HOME mcp ARGS…` with `calls`;
/// what the client saw, as JSON.
fn client(home: &TestHome, args: &[&str], env: &[(&str, &str)], calls: Value) -> Value {
    let venv = venv();
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/e2e/mcp/client.py");
    let mut cmd = Command::new(venv.join("bin/python"));
    cmd.arg(script)
        .arg(env!("CARGO_BIN_EXE_hearth"))
        .arg("--home")
        .arg(&home.path)
        .arg("mcp")
        .args(args)
        // The SDK gives the server its default environment and these.
        .env("HEARTH_NOW", "2026-11-24T10:00:00Z")
        .envs(env.iter().copied())
        .env(
            "PASS_ENV",
            env.iter()
                .map(|(n, _)| *n)
                .chain(["HEARTH_NOW"])
                .collect::<Vec<_>>()
                .join(","),
        )
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(calls.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "the MCP client failed: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn call(seen: &Value, i: usize) -> (&str, bool) {
    let c = &seen["calls"][i];
    (
        c["text"].as_str().unwrap(),
        c["is_error"].as_bool().unwrap(),
    )
}

#[test]
fn a_real_client_recalls_with_citations_reads_and_sees_status() {
    let home = TestHome::with_config("");
    std::fs::write(
        home.file("memory/lighthouse.md"),
        "# Lighthouse\n\nThe keeper of the Skerry light is Ingrid Vale.\nShe winds the clock at dusk.\n",
    )
    .unwrap();
    home.git(&["add", "-A"]);
    home.git(&["commit", "-qm", "a note on the light"]);
    let head = String::from_utf8(home.git(&["rev-parse", "--short=7", "HEAD"]).stdout).unwrap();
    let seen = client(
        &home,
        &[],
        &[],
        json!([
            {"name": "recall", "arguments": {"query": "who keeps the Skerry light?", "k": 3}},
            {"name": "read", "arguments": {"path": "memory/lighthouse.md"}},
            {"name": "read", "arguments": {"path": "hearth.toml"}},
            {"name": "status"},
            {"name": "say", "arguments": {"text": "hello"}},
            {"name": "recall", "arguments": {"query": 7}}
        ]),
    );
    assert_eq!(seen["server"], "hearth");
    let tools: Vec<&str> = seen["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(tools, ["recall", "read", "status"], "read-only by default");
    assert!(seen["tools"]
        .as_array()
        .unwrap()
        .iter()
        .all(|t| t["read_only"] == true));

    let (recall, failed) = call(&seen, 0);
    assert!(!failed, "{recall}");
    let cited = format!("memory/lighthouse.md:3-4@{}", head.trim());
    assert!(
        recall.contains(&format!("1. {cited}  by operator")),
        "{cited} first, by the operator:\n{recall}"
    );
    let structured = &seen["calls"][0]["structured"]["results"][0];
    assert_eq!(structured["citation"], cited);
    assert_eq!(structured["by"], "operator");

    let (read, failed) = call(&seen, 1);
    assert!(
        !failed && read.contains("She winds the clock at dusk."),
        "{read}"
    );
    let (refused, failed) = call(&seen, 2);
    assert!(failed && refused.contains("hint:"), "{refused}");
    let (status, failed) = call(&seen, 3);
    assert!(
        !failed && status.contains("supervisor: not running"),
        "{status}"
    );
    // The door says what `hearth status` says, verdict first.
    assert!(
        status.starts_with("health:     trouble: the supervisor is not running"),
        "{status}"
    );
    assert_eq!(status, home.ok(&["status"]).trim_end(), "the CLI's words");
    let (say, failed) = call(&seen, 4);
    assert!(failed && say.contains("--allow-say"), "{say}");
    let (bad, failed) = call(&seen, 5);
    assert!(failed && bad.contains("invalid arguments"), "{bad}");
    assert!(home.list("inbox").iter().all(|f| !f.ends_with(".md")));
}

#[test]
fn opened_doors_say_as_the_operator_and_ask_the_agent() {
    const KEY: &str = "sk-ant-test-mcp";
    let server = ModelServer::start(vec![Answer::Stream {
        events: anthropic::message("The light is kept by Ingrid Vale.", &[], 10, 5),
        hang: None,
    }]);
    let home = TestHome::with_config(&format!(
        "[model]\nprovider = \"anthropic\"\nmodel = \"claude-test\"\nbase_url = \"{}\"\n\
         timeout_s = 10\nmax_retries = 0\n[budget]\ndaily_usd = 0\n",
        server.url
    ));
    home.git(&["commit", "-qam", "config"]);
    let seen = client(
        &home,
        &["--allow-say", "--allow-ask"],
        &[("ANTHROPIC_API_KEY", KEY)],
        json!([
            {"name": "say", "arguments": {"text": "Please check the lamp oil."}},
            {"name": "ask", "arguments": {"question": "Who keeps the light?"}}
        ]),
    );
    let (said, failed) = call(&seen, 0);
    assert!(!failed && said.starts_with("delivered: inbox/"), "{said}");
    let rel = said.trim_start_matches("delivered: ").to_string();
    assert!(home.read(&rel).contains("Please check the lamp oil."));
    let log = String::from_utf8(home.git(&["log", "--format=%an|%s"]).stdout).unwrap();
    assert!(
        log.lines().any(|l| l.ends_with(&format!("|say: {rel}"))),
        "the same commit as `hearth say`:\n{log}"
    );

    let (answer, failed) = call(&seen, 1);
    assert!(!failed, "{answer}");
    assert_eq!(answer, "The light is kept by Ingrid Vale.");
    let asked = &server.received()[0];
    assert_eq!(asked.header("x-api-key"), Some(KEY));
    assert!(asked.body.to_string().contains("Who keeps the light?"));
    assert!(
        home.read("state/sessions.jsonl")
            .contains("The light is kept by Ingrid Vale."),
        "the ask is recorded as any ask is"
    );
}

/// `hearth mcp` on raw stdin: every line gets its answer, as JSON-RPC 2.0
/// says, and none makes it hold more than a line's bound.
#[test]
fn every_line_is_answered_as_the_specification_says_and_none_is_held_whole() {
    let home = TestHome::with_config("");
    let lines = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}).to_string(),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string(),
        "{not json".to_string(),
        "x".repeat(3 * 1024 * 1024),
        json!({"id": 5, "method": "tools/list"}).to_string(),
        json!({"jsonrpc": "2.0", "id": 6, "method": "no/such/method"}).to_string(),
        json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "recall", "arguments": {"query": "tide ".repeat(2000)}}}).to_string(),
        json!({"jsonrpc": "2.0", "id": 8, "method": "tools/list"}).to_string(),
    ];
    let mut child = home
        .cmd(&["mcp"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let input = lines.join("\n") + "\n";
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    let answers: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let code = |id: Value| {
        answers
            .iter()
            .filter(|a| a["id"] == id)
            .map(|a| a["error"]["code"].as_i64())
            .collect::<Vec<_>>()
    };
    assert_eq!(answers.len(), 7, "{answers:?}");
    let unknown_ids = code(Value::Null);
    assert!(
        unknown_ids.contains(&Some(-32700)) && unknown_ids.contains(&Some(-32600)),
        "the unparsable line and the one over the bound: {answers:?}"
    );
    assert_eq!(code(json!(5)), [Some(-32600)], "no \"jsonrpc\": \"2.0\"");
    assert_eq!(code(json!(6)), [Some(-32601)], "method not found");
    let long = answers.iter().find(|a| a["id"] == 7).unwrap();
    let text = long["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(
        long["result"]["isError"] == true && text.contains("over the limit of 4096"),
        "{long}"
    );
    assert!(answers
        .iter()
        .any(|a| a["id"] == 8 && a["result"]["tools"].is_array()));
}
