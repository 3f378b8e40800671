//! The chat API's stream as a client feels it, beside the model server
//! alone: from the model server sending its first text delta to that text
//! arriving — at `hearth ask`'s stdout (the shell door), and at a client
//! of `POST /v1/chat/completions` with `stream: true` (the page, which
//! runs `hearth ask` as its child and relays each piece as a chunk), and
//! at the thread's page (`POST /talk/ask`, relayed as `text` events).
//! Target (issue 69): within 50 ms of the model server's first token.
//!
//! `cargo bench --bench chat`

#![allow(clippy::disallowed_methods)] // fixtures, not state

#[path = "../tests/common/mod.rs"]
mod common;

use std::io::Read;
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::model_server::{anthropic, Answer, ModelServer};
use common::TestHome;

const RUNS: usize = 15;
const TOKEN: &str = "a-long-random-token-for-the-chat-bench";

fn main() {
    let pause = Duration::from_millis(40);
    let server = ModelServer::start(vec![Answer::Paced {
        events: anthropic::message("The keeper of the lighthouse is Orla.", &[], 10, 5),
        pause,
    }]);
    let home = TestHome::with_config(&format!(
        "[model]\nprovider = \"anthropic\"\nmodel = \"claude-test\"\nbase_url = \"{}\"\n",
        server.url
    ));
    // The first text delta is the 4th event: written 3 pauses after the
    // request arrived.
    let first_sent = |server: &ModelServer| server.received().last().unwrap().at + pause * 3;

    let mut shell = Vec::new();
    for n in 0..RUNS {
        let mut child = home
            .cmd(&["ask", &format!("who keeps the beacon on night {n}?")])
            .env("ANTHROPIC_API_KEY", "sk-bench")
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdout = child.stdout.take().unwrap();
        let mut first = [0u8; 1];
        stdout.read_exact(&mut first).unwrap();
        let at = Instant::now();
        std::io::copy(&mut stdout, &mut std::io::sink()).unwrap();
        assert!(child.wait().unwrap().success());
        shell.push(at.saturating_duration_since(first_sent(&server)));
    }

    let mut web = home.cmd(&["web", "--listen", "127.0.0.1:0", "--allow-act"]);
    web.env("HEARTH_WEB_TOKEN", TOKEN)
        .env("ANTHROPIC_API_KEY", "sk-bench")
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut page = web.spawn().unwrap();
    let base = common::page_address(&mut page);
    let model = home.path.file_name().unwrap().to_str().unwrap().to_string();
    let client = reqwest::blocking::Client::new();
    let mut chat = Vec::new();
    for n in 0..RUNS {
        let body = serde_json::json!({"model": model, "stream": true, "messages": [
            {"role": "user", "content": format!("who keeps the beacon on night {n}?")}]});
        let mut response = client
            .post(format!("{base}/v1/chat/completions"))
            .bearer_auth(TOKEN)
            .json(&body)
            .send()
            .unwrap();
        assert!(response.status().is_success(), "{}", response.status());
        // The first chunk with text (the opening one has none).
        let mut seen = Vec::new();
        let mut byte = [0u8; 1];
        let marker = b"\"content\":\"T";
        while !seen.ends_with(marker) {
            response.read_exact(&mut byte).unwrap();
            seen.push(byte[0]);
        }
        let at = Instant::now();
        std::io::copy(&mut response, &mut std::io::sink()).unwrap();
        chat.push(at.saturating_duration_since(first_sent(&server)));
    }
    // The thread's ask, as the page's script sends it: a form, with the
    // page's origin, asking for events; the first `text` event's data.
    let mut talk = Vec::new();
    for n in 0..RUNS {
        let mut response = client
            .post(format!("{base}/talk/ask"))
            .bearer_auth(TOKEN)
            .header("origin", &base)
            .header("accept", "text/event-stream")
            .form(&[("text", format!("who keeps the beacon on evening {n}?"))])
            .send()
            .unwrap();
        assert!(response.status().is_success(), "{}", response.status());
        let mut seen = Vec::new();
        let mut byte = [0u8; 1];
        while !seen.ends_with(b"event: text\ndata: T") {
            response.read_exact(&mut byte).unwrap();
            seen.push(byte[0]);
        }
        let at = Instant::now();
        std::io::copy(&mut response, &mut std::io::sink()).unwrap();
        talk.push(at.saturating_duration_since(first_sent(&server)));
    }
    let _ = page.kill();
    let _ = page.wait();

    let p50 = |v: &mut Vec<Duration>| {
        v.sort();
        v[v.len() / 2].as_secs_f64() * 1000.0
    };
    let (shell, chat, talk) = (p50(&mut shell), p50(&mut chat), p50(&mut talk));
    println!("first text after the model server sent it ({RUNS} runs each, p50)\n");
    println!("| door | lag | target |");
    println!("|---|---|---|");
    println!("| hearth ask → stdout | {shell:.2} ms | ≤ 5 ms |");
    println!("| POST /v1/chat/completions, stream → client | {chat:.2} ms | ≤ 50 ms |");
    println!("| POST /talk/ask, events → the page | {talk:.2} ms | ≤ 50 ms |");
    println!("\nchat API / shell: {:.2}×", chat / shell.max(0.001));
}
