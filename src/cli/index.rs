//! `hearth index [--rebuild] [--json]`: bring the recall index up to date
//! (or build it again from scratch) and say what it holds.

use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use hearth::recall::index::RecallIndex;
use serde_json::json;

use super::{CommandError, Env};

#[derive(clap::Args)]
pub struct Args {
    /// Throw the index away and build it again from the files.
    #[arg(long)]
    rebuild: bool,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(env: &Env, flag: Option<&Path>, args: Args) -> Result<ExitCode, CommandError> {
    let home = env.open_home(flag)?;
    let start = Instant::now();
    let fail = |e| {
        CommandError::new(
            e,
            Some(
                "the index is only a cache: remove .hearth/index/ and run `hearth index` again"
                    .into(),
            ),
        )
    };
    let (index, done) = if args.rebuild {
        RecallIndex::rebuild(&home).map_err(fail)?
    } else {
        let mut index = RecallIndex::open(&home).map_err(fail)?;
        let done = index.reconcile(&home).map_err(fail)?;
        (index, done)
    };
    let took_ms = start.elapsed().as_secs_f64() * 1e3;
    let stats = index.stats();
    if args.json {
        let value = json!({
            "rebuilt": args.rebuild,
            "took_ms": took_ms,
            "updated": done,
            "index": stats,
        });
        println!(
            "{}",
            serde_json::to_string_pretty(&value).expect("serialises")
        );
        return Ok(ExitCode::SUCCESS);
    }
    for problem in &done.skipped {
        eprintln!("warning: {problem}");
    }
    let verb = if args.rebuild { "rebuilt" } else { "updated" };
    println!(
        "{verb} in {took_ms:.0} ms: {} file(s) indexed, {} removed, {} skipped",
        done.indexed,
        done.removed,
        done.skipped.len()
    );
    println!("index:    {}", home.relative(&stats.dir));
    println!(
        "holds:    {} file(s), {} block(s), {:.1} MB",
        stats.files,
        stats.blocks,
        stats.bytes as f64 / 1e6
    );
    match (&stats.commit, &stats.updated_at) {
        (Some(commit), Some(at)) => println!(
            "reflects: commit {} (HEAD when last updated, {})",
            &commit[..commit.len().min(7)],
            at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
        ),
        _ => println!("reflects: no commit yet"),
    }
    Ok(ExitCode::SUCCESS)
}
