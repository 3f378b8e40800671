//! MCP servers as operator tools, through a real tick: `mcp-server-time`
//! (PyPI, its authors' own server) and `tests/e2e/mcp/broken.py`'s servers
//! that exit, answer garbage, never answer, or hang in a call.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::json;

use super::operator_tools::{call, done, home_with_tool, result_sent};
use super::*;

fn broken(mode: &str) -> Vec<String> {
    let venv = crate::e2e::mcp::venv();
    vec![
        venv.join("bin/python").display().to_string(),
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/e2e/mcp/broken.py")
            .display()
            .to_string(),
        mode.to_string(),
    ]
}

fn manifest(name: &str, argv: &[String], extra: &str) -> String {
    format!(
        "name = \"{name}\"\nmcp = {}\n{extra}\n",
        serde_json::to_string(argv).unwrap()
    )
}

fn offered(server: &ModelServer, i: usize) -> Vec<String> {
    server.received()[i].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

fn tick_with(home: &TestHome, vars: &[(&str, &str)]) -> std::process::Output {
    home.keyed(&["run", "--ticks", "1"], KEY)
        .envs(vars.iter().copied())
        .output()
        .unwrap()
}

#[test]
fn a_real_mcp_servers_tool_answers_the_model_in_a_tick() {
    let venv = crate::e2e::mcp::venv();
    let time = vec![
        venv.join("bin/mcp-server-time").display().to_string(),
        "--local-timezone".into(),
        "UTC".into(),
    ];
    let (server, home) = home_with_tool(
        "clock",
        &manifest("clock", &time, "timeout_s = 20"),
        vec![
            call(
                "clock__get_current_time",
                json!({"timezone": "Europe/Oslo"}),
            ),
            done(),
        ],
        true,
    );
    home.ok(&["say", "what time is it in Oslo?"]);
    let out = tick_with(&home, &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tools = &server.received()[0].body["tools"];
    let get = tools
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "clock__get_current_time")
        .unwrap_or_else(|| panic!("offered under the manifest's prefix: {tools}"));
    assert!(
        get["input_schema"]["properties"]["timezone"].is_object(),
        "the server's own schema: {get}"
    );
    // The time server marks its tools openWorldHint: false: its words
    // are shown as they are.
    assert_eq!(
        get["description"],
        "Get current time in a specific timezone"
    );
    assert!(offered(&server, 0).contains(&"clock__convert_time".to_string()));
    let got = result_sent(&server);
    assert!(
        got.contains("Europe/Oslo") && got.contains("datetime") && !got.ends_with("[error]"),
        "the server's answer reached the model: {got}"
    );
    assert_eq!(home.ticks()[0]["class"], "ok");
}

#[test]
fn servers_that_exit_babble_or_never_answer_are_named_once_and_the_ticks_go_on() {
    let (exit, garbage, silent) = (broken("exit"), broken("garbage"), broken("silent"));
    let late = broken("lateexit");
    let (server, home) = home_with_tool(
        "quits",
        &manifest("quits", &exit, "timeout_s = 5"),
        vec![done(), done()],
        false,
    );
    for (name, argv, timeout) in [
        ("babbles", &garbage, 1),
        ("mute", &silent, 1),
        ("late", &late, 5),
    ] {
        std::fs::write(
            home.file(&format!("tools/{name}.toml")),
            manifest(name, argv, &format!("timeout_s = {timeout}")),
        )
        .unwrap();
    }
    home.ok(&["trust"]);
    let started = Instant::now();
    for n in 0..2 {
        home.ok(&["say", &format!("message {n}")]);
        let out = tick_with(&home, &[]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "bounded by timeout_s"
    );
    for tick in home.ticks() {
        assert_eq!(tick["class"], "ok", "the tick goes on: {tick}");
    }
    for i in 0..2 {
        let names = offered(&server, i);
        assert!(
            names.iter().all(|n| !n.contains("__")),
            "no tool of a broken server is offered: {names:?}"
        );
    }
    let flares: Vec<String> = home
        .list("outbox")
        .into_iter()
        .filter(|f| f.contains("tools"))
        .collect();
    assert_eq!(flares.len(), 1, "named once, not every tick: {flares:?}");
    let flare = home.read(&format!("outbox/{}", flares[0]));
    for (file, why) in [
        ("tools/quits.toml", "cannot open /nonexistent/config.yaml"),
        // rmcp skips a line that is not JSON-RPC: to hearth, garbage is
        // a server that never answers.
        (
            "tools/babbles.toml",
            "did not answer within its timeout_s = 1",
        ),
        ("tools/mute.toml", "timeout_s = 1"),
        // Its stderr comes after its stdout closed: read to the end first.
        ("tools/late.toml", "cannot open /nonexistent/late.yaml"),
    ] {
        let line = flare
            .lines()
            .find(|l| l.contains(file))
            .unwrap_or_else(|| panic!("{file} is named:\n{flare}"));
        assert!(line.contains(why), "{file}: {why}:\n{line}");
    }
}

#[test]
fn a_call_past_its_timeout_kills_the_servers_group_and_output_is_bounded() {
    let slow = broken("slowcall");
    let dir = tempfile::tempdir().unwrap();
    let pidfile: PathBuf = dir.path().join("grandchild.pid");
    let mark = crate::common::sleep_mark();
    let (server, home) = home_with_tool(
        "slow",
        &manifest(
            "slow",
            &slow,
            &format!(
                "timeout_s = 2\nmax_output_bytes = 100\n\
                 env = [\"PATH\", \"PIDFILE\", \"SLEEP_MARK\"]\nwrite = [{:?}]",
                dir.path()
            ),
        ),
        vec![
            call("slow__shout", json!({"text": "fire"})),
            call("slow__wait", json!({})),
            done(),
        ],
        true,
    );
    home.ok(&["say", "go"]);
    let out = tick_with(
        &home,
        &[
            ("PIDFILE", pidfile.to_str().unwrap()),
            ("SLEEP_MARK", mark.as_str()),
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let requests = server.received();
    let shout = requests[1].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()["content"][0]["content"]
        .as_str()
        .unwrap()
        .to_string();
    // An open-world server's descriptions are its words, labelled quoted.
    let tools = requests[0].body["tools"].to_string();
    assert!(
        tools.contains("[This description is the MCP server slow's own words, quoted"),
        "{tools}"
    );
    // Open-world output comes fenced as quoted data; what is inside is
    // bounded.
    let (fence, body) = shout.split_once(">\n").unwrap();
    assert!(fence.starts_with("<outside-content source=\"the output of slow__shout\""));
    assert!(body.starts_with("FIRE! FIRE!"), "{shout}");
    assert!(
        body.len() < 200 && body.contains("[… output cut at max_output_bytes = 100]"),
        "bounded: {shout}"
    );
    let waited = requests[2].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .to_string();
    assert!(
        waited.contains("killed after its timeout_s = 2") && waited.contains("\"is_error\":true"),
        "{waited}"
    );
    // The grandchild started (it wrote its pid, in the sandbox's own pid
    // namespace); it is found on the host by its command line.
    assert!(pidfile.exists(), "the grandchild was started");
    let grandchild = ["sleep", mark.as_str()];
    let deadline = Instant::now() + Duration::from_secs(5);
    while crate::common::running_with_argv(&grandchild) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        !crate::common::running_with_argv(&grandchild),
        "the server's grandchild went with its group"
    );
}

/// `[brake] mode = "enforce"` and a `must_read` memory nobody has read:
/// every writing tool is refused.
fn brake_enforced_until_the_rules_are_read(home: &TestHome) {
    std::fs::write(
        home.file("hearth.toml"),
        format!(
            "{}[brake]\nmode = \"enforce\"\n",
            std::fs::read_to_string(home.file("hearth.toml")).unwrap()
        ),
    )
    .unwrap();
    std::fs::write(
        home.file("memory/core/rules.md"),
        "---\ntitle: House rules\nmust_read: true\n---\n# House rules\n\nAsk before shouting.\n",
    )
    .unwrap();
}

#[test]
fn the_brake_lets_a_read_only_mcp_tool_through_and_stops_one_that_writes() {
    let slow = broken("slowcall");
    let venv = crate::e2e::mcp::venv();
    let time = vec![venv.join("bin/mcp-server-time").display().to_string()];
    let (server, home) = home_with_tool(
        "slow",
        &manifest("slow", &slow, "timeout_s = 10"),
        vec![
            call("clock__get_current_time", json!({"timezone": "UTC"})),
            call("slow__shout", json!({"text": "hi"})),
            done(),
        ],
        false,
    );
    std::fs::write(
        home.file("tools/clock.toml"),
        manifest("clock", &time, "timeout_s = 20"),
    )
    .unwrap();
    brake_enforced_until_the_rules_are_read(&home);
    home.ok(&["trust"]);
    home.ok(&["say", "time, then shout"]);
    assert!(tick_with(&home, &[]).status.success());
    let requests = server.received();
    let clock = requests[1].body["messages"].to_string();
    assert!(
        clock.contains("datetime") && !clock.contains("refused by the brake"),
        "readOnlyHint: true is a read: {clock}"
    );
    let shout = requests[2].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .to_string();
    assert!(
        shout.contains("refused by the brake"),
        "no readOnlyHint: it writes, and waits for the read: {shout}"
    );
}

#[test]
fn a_changed_mcp_manifest_offers_nothing_until_trusted_again() {
    let venv = crate::e2e::mcp::venv();
    let time = vec![venv.join("bin/mcp-server-time").display().to_string()];
    let (server, home) = home_with_tool(
        "clock",
        &manifest("clock", &time, "timeout_s = 20"),
        vec![done(), done()],
        true,
    );
    // The operator's tool changes after it was trusted: a new argument.
    let changed = [time.clone(), vec!["--local-timezone".into(), "UTC".into()]].concat();
    std::fs::write(
        home.file("tools/clock.toml"),
        manifest("clock", &changed, "timeout_s = 20"),
    )
    .unwrap();
    home.ok(&["say", "hello"]);
    assert!(tick_with(&home, &[]).status.success());
    assert!(
        offered(&server, 0).iter().all(|n| !n.starts_with("clock")),
        "{:?}",
        offered(&server, 0)
    );
    home.ok(&["trust"]);
    home.ok(&["say", "hello again"]);
    assert!(tick_with(&home, &[]).status.success());
    assert!(offered(&server, 1).contains(&"clock__get_current_time".to_string()));
}

#[test]
fn an_operator_may_vouch_for_a_whole_server_as_read_only() {
    let slow = broken("slowcall");
    let (server, home) = home_with_tool(
        "slow",
        &manifest("slow", &slow, "timeout_s = 10\nread_only = true"),
        vec![call("slow__shout", json!({"text": "hi"})), done()],
        false,
    );
    brake_enforced_until_the_rules_are_read(&home);
    home.ok(&["trust"]);
    home.ok(&["say", "shout"]);
    assert!(tick_with(&home, &[]).status.success());
    let got = result_sent(&server);
    assert!(
        got.contains(">\nHI! HI!") && !got.contains("refused by the brake"),
        "{got}"
    );
}
