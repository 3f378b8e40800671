//! `hearth recall QUERY [--json] [-k N] [--candidates N] [--no-rerank]`

use std::path::Path;

use hearth::config::Config;
use hearth::recall::answer::{self, RecallQuestion, Rerank};
use hearth::recall::rerank;

use super::{CommandError, Env, Exit};

#[derive(clap::Args)]
pub struct Args {
    /// What to look for.
    #[arg(required = true, num_args = 1..)]
    query: Vec<String>,
    /// Print JSON.
    #[arg(long)]
    json: bool,
    /// How many results (default: [recall] results).
    #[arg(short = 'k', value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    k: Option<u64>,
    /// How many lexical candidates to consider (default: [recall] candidates).
    #[arg(long, value_name = "N")]
    candidates: Option<usize>,
    /// Lexical order only, no rerank call.
    #[arg(long)]
    no_rerank: bool,
}

pub fn run(env: &Env, flag: Option<&Path>, args: Args) -> Result<Exit, CommandError> {
    let home = env.open_home(flag)?;
    let config = Config::load(&home.config_path()).unwrap_or_else(|e| {
        tracing::warn!("{e}; using the default [recall] settings");
        Config::default()
    });
    let query = args.query.join(" ");
    let k = args.k.map_or(config.recall.results, |k| k as usize).max(1);
    let key = env.api_key(&rerank::rerank_config(&config));
    let question = RecallQuestion {
        query: &query,
        k,
        candidates: args.candidates.unwrap_or(config.recall.candidates),
        rerank: if args.no_rerank {
            Rerank::Skip("--no-rerank")
        } else {
            Rerank::Model {
                config: &config,
                api_key: key.as_deref(),
            }
        },
        walk: false,
    };
    let answer = answer::answer(&home, &question)?;
    for problem in &answer.skipped {
        tracing::warn!("{problem}");
    }
    if args.json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&answer).expect("serialises")
        );
    } else {
        outln!("{}", answer.render().trim_end());
    }
    Ok(Exit::Success)
}
