//! What the model client adds per call: 100 streamed Anthropic calls
//! in-process against a local SSE server, beside `curl` fetching the same
//! stream (what a shell script would use) and a raw TCP read (the floor).
//!
//! `cargo bench --bench client`

mod common;

#[path = "../tests/common/model_server.rs"]
#[allow(dead_code)]
mod model_server;

use std::io::{Read, Write};
use std::process::Command;
use std::time::Duration;

use common::ms;
use hearth::config::{ModelConfig, ProviderKind};
use hearth::conversation::{Block, Message, Role};
use hearth::model::{provider_for, Request, SystemBlock, TurnFacts};
use model_server::{anthropic, Answer, ModelServer};

const CALLS: usize = 100;

fn main() {
    let events = anthropic::message(
        "Hello from the local server, streamed in pieces.",
        &[],
        100,
        12,
    );
    let server = ModelServer::start(vec![Answer::Stream { events, hang: None }]);
    let config = ModelConfig {
        provider: ProviderKind::Anthropic,
        model: "claude-test".into(),
        base_url: server.url.clone(),
        ..ModelConfig::default()
    };
    let mut provider = provider_for(&config, Some("sk-bench")).unwrap();
    let system = vec![SystemBlock::unjudged(
        "memory/prompt.md",
        "You are a bench.",
    )];
    let messages = vec![Message {
        outside: hearth::outside::Outside::none(),
        role: Role::User,
        content: vec![Block::Text { text: "hi".into() }],
    }];
    let facts = TurnFacts::default();
    let request = Request {
        system: &system,
        messages: &messages,
        tools: &[],
        max_tokens: 100,
        facts: Some(&facts),
        cache: None,
        cache_key: None,
    };

    let hearth = time(|| {
        let reply = provider.complete(&request, &mut |_| {}).unwrap();
        assert_eq!(reply.usage.output_tokens, 12);
    });
    let body = r#"{"model":"claude-test","max_tokens":100,"stream":true,"messages":[{"role":"user","content":"hi"}]}"#;
    let addr = server.url.trim_start_matches("http://").to_string();
    let raw = time(|| {
        let mut stream = std::net::TcpStream::connect(&addr).unwrap();
        write!(stream, "POST /v1/messages HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}", body.len()).unwrap();
        let mut out = Vec::new();
        stream.read_to_end(&mut out).unwrap();
        assert!(out.ends_with(b"\n\n"));
    });
    let curl = time(|| {
        let out = Command::new("curl")
            .args([
                "-sN",
                "-X",
                "POST",
                "-H",
                "content-type: application/json",
                "-d",
                body,
            ])
            .arg(format!("{}/v1/messages", server.url))
            .output()
            .unwrap();
        assert!(String::from_utf8_lossy(&out.stdout).contains("message_stop"));
    });
    println!("one streamed call against a local SSE server (median of {CALLS}):");
    println!("  raw TCP read (floor):        {:>8.3} ms", ms(raw));
    println!(
        "  hearth Anthropic client:     {:>8.3} ms   overhead over the floor {:.3} ms",
        ms(hearth),
        ms(hearth) - ms(raw)
    );
    println!(
        "  curl (process):              {:>8.3} ms   ratio curl/hearth {:.1}x",
        ms(curl),
        curl.as_secs_f64() / hearth.as_secs_f64()
    );
}

/// The median of `CALLS` calls.
fn time(f: impl FnMut()) -> Duration {
    common::percentile(&common::samples(CALLS, f), 50)
}
