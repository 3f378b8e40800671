//! `hearth recall QUERY [--json] [-k N] [--candidates N] [--no-rerank]`

use std::path::Path;
use std::process::ExitCode;

use hearth::config::Config;
use hearth::recall::index::{Hit, RecallIndex};
use hearth::recall::rerank::{self, Ranked};
use hearth::repo::Repo;
use serde_json::json;

use super::{CommandError, Env};

#[derive(clap::Args)]
pub struct Args {
    /// What to look for.
    #[arg(required = true, num_args = 1..)]
    query: Vec<String>,
    /// Print JSON.
    #[arg(long)]
    json: bool,
    /// How many results (default: [recall] results).
    #[arg(short = 'k', value_name = "N")]
    k: Option<usize>,
    /// How many lexical candidates to consider (default: [recall] candidates).
    #[arg(long, value_name = "N")]
    candidates: Option<usize>,
    /// Lexical order only, no rerank call.
    #[arg(long)]
    no_rerank: bool,
}

pub fn run(env: &Env, flag: Option<&Path>, args: Args) -> Result<ExitCode, CommandError> {
    let home = env.open_home(flag)?;
    let config = Config::load(&home.config_path()).unwrap_or_else(|e| {
        eprintln!("warning: {e}; using the default [recall] settings");
        Config::default()
    });
    let query = args.query.join(" ");
    let k = args.k.unwrap_or(config.recall.results).max(1);
    let candidates = args.candidates.unwrap_or(config.recall.candidates).max(k);
    let mut index = RecallIndex::open(&home).map_err(|e| CommandError::new(e, None))?;
    let reconciled = index
        .reconcile(&home)
        .map_err(|e| CommandError::new(e, None))?;
    for problem in &reconciled.skipped {
        eprintln!("warning: {problem}");
    }
    let hits = index
        .search(&query, candidates)
        .map_err(|e| CommandError::new(e, None))?;
    let ranked = if args.no_rerank {
        Ranked::Lexical("--no-rerank".into())
    } else {
        let rerank_model = rerank::rerank_config(&config);
        let key = hearth::model::key_variable(&rerank_model).and_then(|v| std::env::var(v).ok());
        rerank::with_config(&config, key.as_deref(), &query, &hits, k)
    };
    let (results, order, reason): (Vec<(Hit, String)>, &str, Option<String>) = match ranked {
        Ranked::Reranked(chosen) => (
            chosen
                .into_iter()
                .map(|(i, note)| (hits[i].clone(), note))
                .collect(),
            "reranked",
            None,
        ),
        Ranked::NothingRelevant => (Vec::new(), "reranked", None),
        Ranked::Lexical(reason) => (
            hits.into_iter()
                .take(k)
                .map(|h| (h, String::new()))
                .collect(),
            "lexical",
            Some(reason),
        ),
    };
    let repo = Repo::open(home.root()).ok();
    let rows: Vec<serde_json::Value> = results
        .iter()
        .enumerate()
        .map(|(i, (hit, note))| {
            let file = hit.path.split('#').next().unwrap_or(&hit.path);
            let provenance = repo
                .as_ref()
                .and_then(|r| r.provenance(file, hit.start as usize, hit.end as usize));
            let by = match &provenance {
                Some(p) if p.tick.is_some() => format!("tick {}", p.tick.unwrap_or(0)),
                Some(p) if p.author == "hearth" => "hearth".to_string(),
                Some(_) => "operator".to_string(),
                None => "uncommitted".to_string(),
            };
            let commit = provenance
                .as_ref()
                .map_or("uncommitted".to_string(), |p| p.commit.clone());
            json!({
                "rank": i + 1,
                "path": hit.path,
                "start": hit.start,
                "end": hit.end,
                "commit": commit,
                "citation": citation(&hit.path, hit.start, hit.end, &commit),
                "by": by,
                "heading": hit.heading,
                "excerpt": excerpt(&hit.text),
                "score": hit.score,
                "note": note,
            })
        })
        .collect();
    if args.json {
        let value =
            json!({"query": query, "order": order, "lexical_because": reason, "results": rows});
        println!(
            "{}",
            serde_json::to_string_pretty(&value).expect("serialises")
        );
        return Ok(ExitCode::SUCCESS);
    }
    if rows.is_empty() {
        println!("nothing relevant in memory for {query:?}");
        return Ok(ExitCode::SUCCESS);
    }
    let marker = if order == "lexical" { "(lexical) " } else { "" };
    println!("{marker}{} result(s) for {query:?}", rows.len());
    for row in &rows {
        println!(
            "{}. {}  by {}",
            row["rank"],
            row["citation"].as_str().unwrap_or(""),
            row["by"].as_str().unwrap_or("")
        );
        if let Some(note) = row["note"].as_str().filter(|n| !n.is_empty()) {
            println!("   relevant: {note}");
        }
        for line in row["excerpt"].as_str().unwrap_or("").lines() {
            println!("   {line}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn citation(path: &str, start: u64, end: u64, commit: &str) -> String {
    if path.contains('#') {
        format!("{path}@{commit}")
    } else if start == end {
        format!("{path}:{start}@{commit}")
    } else {
        format!("{path}:{start}-{end}@{commit}")
    }
}

/// At most 300 characters of the block.
fn excerpt(text: &str) -> String {
    let mut out: String = text.chars().take(300).collect();
    if text.chars().count() > 300 {
        out.push('…');
    }
    out
}
