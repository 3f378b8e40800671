//! The brake's cost and its report. Two parts:
//!
//! 1. The cost of the brake per writing tool call, side by side with the
//!    call it guards (a `write` of a small memory file): the brake reads
//!    the conversation for `read` calls and digests each required file.
//! 2. A scripted day in `warn` mode through the local model server (eight
//!    ticks: writes before and after the required read, a changed file, an
//!    override), then `hearth brake report` as the operator sees it.
//!
//! `cargo bench --bench brake`

#![allow(clippy::disallowed_methods)] // fixtures, not state

#[path = "../tests/common/mod.rs"]
mod common;

use std::time::Instant;

use chrono::DateTime;
use hearth::brake::gate::Gate;
use hearth::config::BrakeMode;
use hearth::conversation::{Block, Message, Role};
use hearth::home::Home;
use hearth::tools::{self, ToolContext};
use serde_json::json;

use common::model_server::{anthropic, Answer, ModelServer};
use common::TestHome;

const RULES: &str =
    "---\ntitle: House rules\nmust_read: true\n---\n# House rules\n\nNever delete the journal.\n";

fn main() {
    cost();
    scripted_day();
}

/// A conversation of `turns` tool rounds, one in ten a `read`.
fn conversation(turns: usize) -> Vec<Message> {
    let mut messages = Vec::new();
    for i in 0..turns {
        let (name, input, content) = if i % 10 == 0 {
            (
                "read",
                json!({"path": "memory/rules.md"}),
                RULES.to_string(),
            )
        } else {
            (
                "recall",
                json!({"query": format!("topic {i}")}),
                "x ".repeat(400),
            )
        };
        messages.push(Message {
            outside: hearth::outside::Outside::none(),
            role: Role::Assistant,
            content: vec![Block::ToolUse {
                id: format!("t{i}"),
                name: name.into(),
                input,
            }],
        });
        messages.push(Message {
            outside: hearth::outside::Outside::none(),
            role: Role::User,
            content: vec![Block::ToolResult {
                tool_use_id: format!("t{i}"),
                content,
                is_error: false,
            }],
        });
    }
    messages
}

fn cost() {
    let dir = tempfile::tempdir().unwrap();
    let now = DateTime::from_timestamp(1_800_000_000, 0).unwrap();
    let home = hearth::home::init(dir.path(), now).unwrap().home;
    std::fs::write(home.path("memory/rules.md"), RULES).unwrap();
    std::fs::write(home.path("memory/core/values.md"), "# Values\n\nBe kind.\n").unwrap();
    let required = vec![
        "memory/rules.md".to_string(),
        "memory/core/values.md".to_string(),
    ];
    let gate = Gate::open_for(&home, BrakeMode::Off, required.clone(), 1, now);
    let _ = gate;
    let on = Gate::open_for(&home, BrakeMode::Warn, required, 1, now);
    let normalise = |p: &str| Some(p.trim_start_matches("./").to_string());
    println!("cost of the brake per writing call (warn mode; the log line included)\n");
    println!("| conversation | brake | write it guards | ratio |");
    println!("|---|---|---|---|");
    for turns in [10, 100, 1000] {
        let messages = conversation(turns);
        let n = 2000;
        let start = Instant::now();
        for _ in 0..n {
            std::hint::black_box(on.check(
                &home,
                "write",
                "memory/x.md",
                true,
                &messages,
                normalise,
            ));
        }
        let brake = start.elapsed() / n;
        let mut ctx = context(&home, now);
        let start = Instant::now();
        for i in 0..n {
            tools::dispatch(
                &mut ctx,
                "write",
                &json!({"path": "memory/x.md", "content": format!("note {i}\n")}),
            )
            .unwrap();
        }
        let write = start.elapsed() / n;
        println!(
            "| {} messages | {:.1} µs | {:.1} µs | {:.2}× |",
            messages.len(),
            brake.as_secs_f64() * 1e6,
            write.as_secs_f64() * 1e6,
            brake.as_secs_f64() / write.as_secs_f64()
        );
        // The log grows by one line a call; start each size afresh.
        let _ = std::fs::remove_file(home.path("state/brake.jsonl"));
    }
    println!();
}

fn context(home: &Home, now: chrono::DateTime<chrono::Utc>) -> ToolContext<'_> {
    ToolContext {
        home,
        tick: 1,
        now,
        max_sleep_h: 24,
        recall_results: 3,
        max_write_bytes: 1 << 20,
        effects: Default::default(),
        operator: Vec::new(),
        trust: Default::default(),
        environment: Default::default(),
        peering: Default::default(),
        workdir: Default::default(),
        write_ahead: None,
        mcp: Default::default(),
        taint: Default::default(),
        origins: hearth::provenance::OriginJudge::open(home),
    }
}

fn call(id: &str, tool: &str, input: serde_json::Value) -> Answer {
    let args = input.to_string();
    Answer::Stream {
        events: anthropic::message("", &[(id, tool, &[args.as_str()])], 10, 1),
        hang: None,
    }
}

fn text(t: &str) -> Answer {
    Answer::Stream {
        events: anthropic::message(t, &[], 10, 1),
        hang: None,
    }
}

fn scripted_day() {
    let write = |id: &str| {
        call(
            id,
            "write",
            json!({"path": "memory/log.md", "content": format!("entry {id}\n")}),
        )
    };
    let read = |id: &str| call(id, "read", json!({"path": "memory/rules.md"}));
    let journal = |id: &str| call(id, "journal", json!({"text": format!("entry {id}")}));
    let script = vec![
        // 06:00 writes before reading; 08:00 reads, then writes.
        write("a1"),
        text("ok"),
        read("b1"),
        write("b2"),
        text("ok"),
        // 10:00 and 12:00 write again: the read is still in the conversation.
        journal("c1"),
        text("ok"),
        write("d1"),
        text("ok"),
        // 14:00 the operator edited the rules: the old read no longer counts.
        write("e1"),
        text("ok"),
        read("f1"),
        journal("f2"),
        text("ok"),
        // 18:00 a plain answer; 20:00 a write under the operator's override.
        text("Nothing to do."),
        write("h1"),
        text("ok"),
    ];
    let server = ModelServer::start(script);
    let home = TestHome::with_config(&format!(
        "[model]\nprovider = \"anthropic\"\nmodel = \"claude-test\"\nbase_url = \"{}\"\n[brake]\nmode = \"warn\"\n",
        server.url
    ));
    std::fs::write(home.file("memory/rules.md"), RULES).unwrap();
    for (hour, note) in [6, 8, 10, 12, 14, 16, 18, 20].iter().zip(0..) {
        if *hour == 14 {
            std::fs::write(
                home.file("memory/rules.md"),
                RULES.replace("Never", "Do not ever"),
            )
            .unwrap();
        }
        if *hour == 20 {
            home.ok(&[
                "brake",
                "override",
                "--ticks",
                "1",
                "--reason",
                "nightly import",
            ]);
        }
        home.ok(&["say", &format!("task {note}")]);
        let out = home
            .cmd(&["run", "--ticks", "1"])
            .env("ANTHROPIC_API_KEY", "sk-bench")
            .env("HEARTH_NOW", format!("2026-11-23T{hour:02}:00:00Z"))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    println!("`hearth brake report` after a scripted day in warn mode:\n");
    println!("{}", home.ok(&["brake", "report"]));
}
