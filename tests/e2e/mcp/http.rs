//! `hearth mcp --http`, driven by the official Python SDK's Streamable HTTP
//! client (`client_http.py`): on loopback, and on every address with a
//! bearer token, which a client without it is refused (401).

use std::io::{BufRead, Write};
use std::process::{Child, Command, Stdio};

use serde_json::{json, Value};

use super::venv;
use crate::common::{finish, signal, TestHome};

/// Where the door's own log (its stderr) goes.
fn log_of(home: &TestHome) -> std::path::PathBuf {
    home.path.with_file_name("mcp-http.log")
}

/// `hearth mcp --http ADDR` started, and the URL it printed once bound.
struct Door {
    child: Child,
    url: String,
}

impl Door {
    fn open(home: &TestHome, addr: &str, token: Option<&str>) -> Door {
        let mut cmd = home.cmd(&["mcp", "--http", addr, "--allow-say"]);
        if let Some(token) = token {
            cmd.env("HEARTH_MCP_TOKEN", token);
        }
        let log = std::fs::File::create(log_of(home)).unwrap();
        let mut child = cmd.stdout(Stdio::piped()).stderr(log).spawn().unwrap();
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let url = line
            .trim()
            .strip_prefix("hearth: MCP at ")
            .unwrap_or_else(|| panic!("no address printed: {line:?}"))
            // A door bound to every address is reached on loopback here.
            .replace("0.0.0.0", "127.0.0.1");
        Door { child, url }
    }

    /// The SDK client's view of `calls`, or its error when refused.
    fn client(&self, token: Option<&str>, calls: Value) -> (bool, Value) {
        let script =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/e2e/mcp/client_http.py");
        let mut cmd = Command::new(venv().join("bin/python"));
        cmd.arg(script)
            .arg(&self.url)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(token) = token {
            cmd.env("MCP_TOKEN", token);
        }
        let mut child = cmd.spawn().unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(calls.to_string().as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        let seen: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|_| {
            panic!(
                "the client printed no JSON: {}\n{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            )
        });
        (out.status.success(), seen)
    }

    fn close(self) {
        signal(&self.child, libc::SIGTERM);
        finish(self.child, std::time::Duration::from_secs(10));
    }
}

#[test]
fn a_real_client_reads_the_memory_over_http_on_loopback_several_at_once() {
    let home = TestHome::with_config("");
    std::fs::write(
        home.file("memory/lighthouse.md"),
        "# Lighthouse\n\nThe keeper's name is Orla.\n",
    )
    .unwrap();
    home.ok(&["index"]);
    let door = Door::open(&home, "127.0.0.1:0", None);
    let calls = json!([
        {"name": "recall", "arguments": {"query": "what is the keeper's name?", "k": 3}},
        {"name": "say", "arguments": {"text": "over http"}},
    ]);
    // Clients at once: each its own session, one writer through the lock.
    let seen: Vec<(bool, Value)> = std::thread::scope(|s| {
        let clients: Vec<_> = (0..3)
            .map(|_| s.spawn(|| door.client(None, calls.clone())))
            .collect();
        clients.into_iter().map(|c| c.join().unwrap()).collect()
    });
    for (ok, seen) in &seen {
        assert!(ok, "{seen}");
        assert_eq!(seen["server"], "hearth");
        assert_eq!(seen["tools"], json!(["read", "recall", "say", "status"]));
        let recall = &seen["calls"][0];
        assert_eq!(recall["is_error"], false, "{seen}");
        assert!(
            recall["text"]
                .as_str()
                .unwrap()
                .contains("memory/lighthouse.md:3"),
            "{seen}"
        );
        assert_eq!(seen["calls"][1]["is_error"], false, "{seen}");
    }
    door.close();
    assert_eq!(
        home.list("inbox").len(),
        3,
        "each client's say is a message"
    );
}

#[test]
fn off_loopback_the_door_needs_a_token_and_refuses_a_client_without_it() {
    let home = TestHome::with_config("");
    // Without a token it does not open at all, and says how to.
    let out = home.output(&["mcp", "--http", "0.0.0.0:0"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("HEARTH_MCP_TOKEN"), "{err}");

    let token = "a-long-random-token-for-the-test";
    let door = Door::open(&home, "0.0.0.0:0", Some(token));
    let status = json!([{"name": "status", "arguments": {}}]);
    let (ok, seen) = door.client(None, status.clone());
    assert!(!ok, "a client without the token is refused: {seen}");
    // What it was refused with, on the wire.
    assert!(raw_initialize(&door.url, None).starts_with("HTTP/1.1 401"));
    let with = raw_initialize(&door.url, Some(token));
    assert!(with.starts_with("HTTP/1.1 200"), "{with}");
    let (ok, seen) = door.client(Some("a-long-random-token-for-the-tesT"), status.clone());
    assert!(!ok, "a wrong token is refused: {seen}");
    let (ok, seen) = door.client(Some(token), status);
    assert!(ok, "{seen}");
    assert_eq!(seen["calls"][0]["is_error"], false, "{seen}");
    door.close();
    let log = std::fs::read_to_string(log_of(&home)).unwrap();
    assert!(log.contains("over MCP on http://0.0.0.0:0/mcp"), "{log}");
    assert!(!log.contains(token), "the token is never logged: {log}");
}

/// An `initialize` POSTed by hand; the response's head and what came of it.
fn raw_initialize(url: &str, token: Option<&str>) -> String {
    use std::io::Read;
    let authority = url.trim_start_matches("http://").trim_end_matches("/mcp");
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"}}})
    .to_string();
    let auth = token.map_or(String::new(), |t| format!("Authorization: Bearer {t}\r\n"));
    let mut stream = std::net::TcpStream::connect(authority).unwrap();
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(5)))
        .unwrap();
    write!(
        stream,
        "POST /mcp HTTP/1.1\r\nHost: {authority}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\n{auth}Content-Length: {}\r\n\
         Connection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut head = [0u8; 64];
    let n = stream.read(&mut head).unwrap_or(0);
    String::from_utf8_lossy(&head[..n]).into_owned()
}
