//! `hearth ask`'s speed as a user feels it, on a home of 10,000 memory
//! files, beside `hearth recall --no-rerank` on the same home:
//! - from process start to the request leaving hearth (everything before
//!   the model: boot, sessions, tiers, recall, the write-ahead);
//! - from a chunk leaving the model server to its bytes on stdout.
//!
//! `cargo bench --bench ask` (ASK_FILES=N to change the home's size)

#![allow(clippy::disallowed_methods)] // fixtures, not state

#[path = "../tests/common/mod.rs"]
mod common;

use std::io::Read;
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::model_server::{anthropic, Answer, ModelServer};
use common::TestHome;

const RUNS: usize = 15;

fn main() {
    let files: usize = std::env::var("ASK_FILES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(10_000);
    let pause = Duration::from_millis(40);
    let server = ModelServer::start(vec![Answer::Paced {
        events: anthropic::message("The keeper of the lighthouse is Orla.", &[], 10, 5),
        pause,
    }]);
    let home = TestHome::with_config(&format!(
        "[model]\nprovider = \"anthropic\"\nmodel = \"claude-test\"\nbase_url = \"{}\"\n",
        server.url
    ));
    let topics = [
        "tide", "harbour", "keeper", "storm", "ledger", "orchard", "pier", "beacon",
    ];
    for i in 0..files {
        let dir = home.file(&format!("memory/notes/{:03}", i / 100));
        std::fs::create_dir_all(&dir).unwrap();
        let t = topics[i % topics.len()];
        std::fs::write(
            dir.join(format!("n{i}.md")),
            format!(
                "# Note {i}\n\nThe {t} log for day {i}: calm water, {} boats.\n",
                i % 17
            ),
        )
        .unwrap();
    }
    // Warm the index and boot's scan cache once, as a running home has
    // them; files younger than hearth's racy window (a few seconds) are
    // read again on every scan, as they must be, so let them age first.
    home.ok(&["index"]);
    std::thread::sleep(Duration::from_secs(4));
    home.ok(&["context"]);

    let (mut alone, mut lag_alone) = measure(&home, &server, pause);
    // The usual case: the agent is alive, its supervisor watching memory/.
    let mut run = home.cmd(&["run", "--interval", "86400"]);
    run.env("ANTHROPIC_API_KEY", "sk-bench");
    let supervisor = home.spawn_with(run);
    home.wait_for(Duration::from_secs(30), "the supervisor", || {
        home.log().contains("supervising")
    });
    let (mut supervised, mut lag_supervised) = measure(&home, &server, pause);
    common::finish_after_term(supervisor);
    let mut recall = Vec::new();
    for n in 0..RUNS {
        let started = Instant::now();
        home.ok(&[
            "recall",
            &format!("who keeps the beacon on night {n}?"),
            "--no-rerank",
        ]);
        recall.push(started.elapsed());
    }
    let p50 = |v: &mut Vec<Duration>| {
        v.sort();
        v[v.len() / 2]
    };
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let r = p50(&mut recall);
    let (a, s) = (p50(&mut alone), p50(&mut supervised));
    println!("hearth ask on a home of {files} memory files ({RUNS} runs each, p50)\n");
    println!("| what | no supervisor | supervisor running | target |");
    println!("|---|---|---|---|");
    println!(
        "| ask: process start → request leaves hearth | {:.1} ms | {:.1} ms | ≤ 30 ms |",
        ms(a),
        ms(s)
    );
    println!(
        "| ask: chunk leaves the server → on stdout | {:.2} ms | {:.2} ms | ≤ 5 ms |",
        ms(p50(&mut lag_alone)),
        ms(p50(&mut lag_supervised))
    );
    println!(
        "| recall --no-rerank: whole command | {:.1} ms | | — |",
        ms(r)
    );
    println!(
        "\nask before the model / recall --no-rerank: {:.2}× alone, {:.2}× supervised",
        ms(a) / ms(r),
        ms(s) / ms(r)
    );
}

/// `RUNS` asks: (process start → request received, chunk sent → on stdout).
fn measure(
    home: &TestHome,
    server: &ModelServer,
    pause: Duration,
) -> (Vec<Duration>, Vec<Duration>) {
    let mut before_model = Vec::new();
    let mut chunk_lag = Vec::new();
    for n in 0..RUNS {
        let started = Instant::now();
        let mut child = home
            .cmd(&["ask", &format!("who keeps the beacon on night {n}?")])
            .env("ANTHROPIC_API_KEY", "sk-bench")
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdout = child.stdout.take().unwrap();
        let mut first = [0u8; 1];
        stdout.read_exact(&mut first).unwrap();
        let first_at = Instant::now();
        let mut rest = Vec::new();
        stdout.read_to_end(&mut rest).unwrap();
        assert!(child.wait().unwrap().success());
        let arrived = server.received().last().unwrap().at;
        before_model.push(arrived - started);
        // The first text delta is the 4th event: written 3 pauses after
        // the request arrived.
        let sent = arrived + pause * 3;
        chunk_lag.push(first_at.saturating_duration_since(sent));
    }
    (before_model, chunk_lag)
}
