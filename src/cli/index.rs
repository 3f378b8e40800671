//! `hearth index [--rebuild] [--json]`: bring the recall index up to date
//! (or build it again from scratch) and say what it holds.

use std::path::Path;
use std::time::Instant;

use hearth::recall::index::RecallIndex;
use serde_json::json;

use super::{CommandError, Env, Exit};

#[derive(clap::Args)]
pub struct Args {
    /// Throw the index away and build it again from the files.
    #[arg(long)]
    rebuild: bool,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(env: &Env, flag: Option<&Path>, args: Args) -> Result<Exit, CommandError> {
    let home = env.open_home(flag)?;
    let start = Instant::now();
    let (index, done) = if args.rebuild {
        RecallIndex::rebuild(&home)?
    } else {
        let mut index = RecallIndex::open(&home)?;
        let done = index.reconcile(&home)?;
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
        outln!(
            "{}",
            serde_json::to_string_pretty(&value).expect("serialises")
        );
        return Ok(Exit::Success);
    }
    for problem in &done.skipped {
        tracing::warn!("{problem}");
    }
    let verb = if args.rebuild { "rebuilt" } else { "updated" };
    outln!(
        "{verb} in {took_ms:.0} ms: {} file(s) indexed, {} removed, {} skipped",
        done.indexed,
        done.removed,
        done.skipped.len()
    );
    outln!("index:    {}", home.relative(&stats.dir));
    outln!(
        "holds:    {} file(s), {} block(s), {:.1} MB",
        stats.files,
        stats.blocks,
        stats.bytes as f64 / 1e6
    );
    match (&stats.commit, &stats.updated_at) {
        (Some(commit), Some(at)) => outln!(
            "reflects: commit {} (HEAD when last updated, {})",
            &commit[..commit.len().min(7)],
            at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
        ),
        _ => outln!("reflects: no commit yet"),
    }
    Ok(Exit::Success)
}
