//! Recall speed, side by side with the tools a user would otherwise use, in
//! one run on the same files: ripgrep (no index: every query reads the
//! corpus) and SQLite FTS5 (bm25), both through their command-line tools.
//!
//! Corpus: LoCoMo's dev turns as markdown, one conversation (small), and
//! spread over 5,000 files to ≥ 50 MB (large). Installs ripgrep with apt
//! when it is missing; a peer that cannot run is reported as skipped.
//!
//! `cargo bench --bench recall_speed`

#![allow(clippy::disallowed_methods)] // fixtures, not state

mod common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{median, ms};
use hearth::home::Home;
use hearth::recall::index::RecallIndex;
use serde_json::Value;

const HEARTH: &str = env!("CARGO_BIN_EXE_hearth");
const FILES: usize = 5_000;
const TARGET_BYTES: usize = 50 * 1024 * 1024;

fn main() {
    let Some(data) = common::locomo() else {
        return;
    };
    let (turns, questions) = corpus(&data);
    common::ensure_tool("rg", "ripgrep");
    common::ensure_tool("sqlite3", "sqlite3");

    println!("== one conversation ({} turns) ==", turns[0].len());
    let small = tempfile::tempdir().unwrap();
    let home = write_home(small.path(), &[turns[0].clone()], 1);
    run(&home, &questions[0], 40);

    let all: Vec<String> = turns.iter().flatten().cloned().collect();
    let per_copy: usize = all.iter().map(|t| t.len() + 2).sum();
    let copies = TARGET_BYTES.div_ceil(per_copy);
    println!(
        "\n== large: {copies} copies of all {} turns over {FILES} files ==",
        all.len()
    );
    let large = tempfile::tempdir().unwrap();
    let home = write_home(large.path(), &vec![all; copies], FILES);
    let qs: Vec<String> = questions.iter().flatten().cloned().collect();
    run(&home, &qs, 20);
}

/// Turns as markdown paragraphs per conversation, and questions.
fn corpus(data: &[Value]) -> (Vec<Vec<String>>, Vec<Vec<String>>) {
    let mut turns = Vec::new();
    let mut questions = Vec::new();
    for c in data {
        let conv = &c["conversation"];
        let mut t = Vec::new();
        for n in 1..100 {
            for turn in conv[format!("session_{n}")]
                .as_array()
                .into_iter()
                .flatten()
            {
                t.push(format!(
                    "[{}] {}: {}",
                    turn["dia_id"].as_str().unwrap_or(""),
                    turn["speaker"].as_str().unwrap_or(""),
                    turn["text"].as_str().unwrap_or("")
                ));
            }
        }
        turns.push(t);
        questions.push(
            c["qa"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|q| q["question"].as_str().map(str::to_string))
                .collect(),
        );
    }
    (turns, questions)
}

/// A home whose memory/ holds `chunks` (each a list of paragraphs) spread
/// round-robin over `files` files.
fn write_home(root: &Path, chunks: &[Vec<String>], files: usize) -> Home {
    let home = hearth::home::init(&root.join("home"), hearth::clock::Clock::System.now())
        .unwrap()
        .home;
    std::fs::remove_dir_all(home.memory_dir()).unwrap();
    let mut texts = vec![String::new(); files];
    let mut i = 0;
    for chunk in chunks {
        for paragraph in chunk {
            texts[i % files].push_str(paragraph);
            texts[i % files].push_str("\n\n");
            i += 1;
        }
    }
    for (n, text) in texts.iter().enumerate() {
        let dir = home.memory_dir().join(format!("d{:03}", n % 100));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(format!("f{n:05}.md")), text).unwrap();
    }
    home
}

fn corpus_bytes(home: &Home) -> u64 {
    walkdir::WalkDir::new(home.memory_dir())
        .into_iter()
        .flatten()
        .filter(|e| e.file_type().is_file())
        .map(|e| e.metadata().map(|m| m.len()).unwrap_or(0))
        .sum()
}

fn run(home: &Home, questions: &[String], runs: usize) {
    let bytes = corpus_bytes(home);
    let mb = bytes as f64 / 1e6;
    println!("corpus: {mb:.1} MB");

    let start = Instant::now();
    let mut index = RecallIndex::open(home).unwrap();
    index.reconcile(home).unwrap();
    let build = start.elapsed();
    println!(
        "hearth full index build:        {:>9.1} ms  ({:.1} MB/s)",
        ms(build),
        mb / build.as_secs_f64()
    );

    let warm = median((0..questions.len().min(200)).map(|i| {
        let q = &questions[i];
        let t = Instant::now();
        index.search(q, 20).unwrap();
        t.elapsed()
    }));
    println!("hearth warm query (in-process): {:>9.3} ms p50", ms(warm));

    let some_file = walkdir::WalkDir::new(home.memory_dir())
        .into_iter()
        .flatten()
        .find(|e| e.file_type().is_file())
        .unwrap()
        .into_path();
    let mut text = std::fs::read_to_string(&some_file).unwrap();
    text.push_str("\n\na freshly written note about pelicans\n");
    std::fs::write(&some_file, text).unwrap();
    let t = Instant::now();
    index.reconcile(home).unwrap();
    println!(
        "hearth one-file update, walk:   {:>9.1} ms (no supervisor: stat every file, re-index the edited one)",
        ms(t.elapsed())
    );
    let updates = median((0..5).map(|i| {
        let mut text = std::fs::read_to_string(&some_file).unwrap();
        text.push_str(&format!("\n\nanother note about pelicans, {i}\n"));
        std::fs::write(&some_file, text).unwrap();
        let changed = std::collections::BTreeSet::from([home.relative(&some_file)]);
        let t = Instant::now();
        index.reconcile_paths(home, &changed, None).unwrap();
        t.elapsed()
    }));
    println!(
        "hearth one-file update:         {:>9.1} ms p50 (supervisor: the path its watcher saw)",
        ms(updates)
    );

    let process = median((0..runs).map(|i| {
        let q = &questions[i % questions.len()];
        let t = Instant::now();
        let out = Command::new(HEARTH)
            .args(["recall", "--no-rerank", "--json", "--home"])
            .arg(home.root())
            .arg(q)
            .env("RUST_LOG", "error")
            .stdout(Stdio::piped())
            .output()
            .unwrap();
        assert!(out.status.success());
        t.elapsed()
    }));
    println!(
        "hearth recall (whole process):  {:>9.1} ms p50",
        ms(process)
    );

    let rg = median((0..runs).map(|i| {
        let words = words(&questions[i % questions.len()]);
        let mut cmd = Command::new("rg");
        cmd.args(["-i", "-c", "--no-messages"]);
        for w in &words {
            cmd.args(["-e", w]);
        }
        let t = Instant::now();
        let _ = cmd.arg(home.memory_dir()).stdout(Stdio::null()).status();
        t.elapsed()
    }));
    if Command::new("rg").arg("--version").output().is_ok() {
        println!(
            "ripgrep over the same files:    {:>9.1} ms p50   ratio rg/hearth {:.1}x",
            ms(rg),
            rg.as_secs_f64() / process.as_secs_f64()
        );
    } else {
        println!("ripgrep: skipped (not installed)");
    }

    match fts5(home, questions, runs) {
        Some((fts_build, query)) => {
            println!(
                "SQLite FTS5 build:              {:>9.1} ms  ({:.1} MB/s)   ratio fts5/hearth {:.1}x",
                ms(fts_build),
                mb / fts_build.as_secs_f64(),
                fts_build.as_secs_f64() / build.as_secs_f64()
            );
            println!(
                "SQLite FTS5 query (process):    {:>9.1} ms p50   ratio fts5/hearth {:.1}x",
                ms(query),
                query.as_secs_f64() / process.as_secs_f64()
            );
        }
        None => println!("SQLite FTS5: skipped (sqlite3 not installed)"),
    }
}

/// Builds an FTS5 database of the same paragraphs, then times queries.
fn fts5(home: &Home, questions: &[String], runs: usize) -> Option<(Duration, Duration)> {
    Command::new("sqlite3").arg("--version").output().ok()?;
    let db = home.runtime_dir().join("fts5.db");
    let mut sql = String::from(
        "CREATE VIRTUAL TABLE b USING fts5(body, tokenize='porter unicode61');\nBEGIN;\n",
    );
    for entry in walkdir::WalkDir::new(home.memory_dir())
        .into_iter()
        .flatten()
    {
        if entry.file_type().is_file() {
            let text = std::fs::read_to_string(entry.path()).ok()?;
            for paragraph in text.split("\n\n").filter(|p| !p.trim().is_empty()) {
                sql.push_str(&format!(
                    "INSERT INTO b(body) VALUES ('{}');\n",
                    paragraph.replace('\'', "''")
                ));
            }
        }
    }
    sql.push_str("COMMIT;\n");
    let script = home.runtime_dir().join("fts5.sql");
    std::fs::write(&script, sql).ok()?;
    let t = Instant::now();
    let status = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "sqlite3 '{}' < '{}'",
            db.display(),
            script.display()
        ))
        .status()
        .ok()?;
    let build = t.elapsed();
    if !status.success() {
        return None;
    }
    let query = median((0..runs).map(|i| {
        let match_expr: Vec<String> = words(&questions[i % questions.len()])
            .iter()
            .map(|w| format!("\"{w}\""))
            .collect();
        let q = format!(
            "SELECT rowid FROM b WHERE b MATCH '{}' ORDER BY bm25(b) LIMIT 20;",
            match_expr.join(" OR ").replace('\'', "''")
        );
        let t = Instant::now();
        let _ = Command::new("sqlite3")
            .arg(&db)
            .arg(q)
            .stdout(Stdio::null())
            .status();
        t.elapsed()
    }));
    Some((build, query))
}

fn words(question: &str) -> Vec<String> {
    question
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.len() > 2)
        .map(str::to_lowercase)
        .collect()
}
