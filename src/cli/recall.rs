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

/// Puts `call` on the call ledger and commits it as hearth's.
fn record(home: &hearth::home::Home, call: &hearth::budget::PaidCall) -> Result<(), CommandError> {
    use hearth::home::layout::rel;
    let _lock = hearth::home::lock::CommitLock::acquire(home)?;
    hearth::budget::record_call(home, call)?;
    let message = format!(
        "recall: a rerank call to {} (${:.4})",
        call.model, call.cost_usd
    );
    hearth::repo::Repo::open(home.root())?.commit(
        &[rel::CALLS],
        &hearth::repo::Identity::hearth(),
        &message,
        call.time,
    )?;
    Ok(())
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
    let now = env.clock.now();
    // The rerank is a paid call like any other: past the day's cap the
    // lexical order stands, and says why.
    let over = hearth::exchange::Spent::today(&home, now)
        .over(config.budget.daily_usd)
        .map(|why| format!("{why}; recall falls back to the lexical order"));
    let question = RecallQuestion {
        query: &query,
        k,
        candidates: args.candidates.unwrap_or(config.recall.candidates),
        rerank: if args.no_rerank {
            Rerank::Skip("--no-rerank")
        } else if let Some(over) = &over {
            Rerank::Skip(over)
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
    let mut recorded = Ok(());
    if let Some(cost) = &answer.rerank_cost {
        let call = hearth::budget::PaidCall {
            time: env.clock.now(),
            door: "recall".into(),
            model: cost.model.clone(),
            input_tokens: cost.input_tokens,
            output_tokens: cost.output_tokens,
            cost_usd: cost.cost_usd,
        };
        // On the ledger, and committed as hearth's, before the answer is
        // shown: a call not recorded would be money nobody sees (the
        // answer is still shown, and the command fails, saying why).
        recorded = record(&home, &call);
    }
    if args.json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&answer).expect("serialises")
        );
    } else {
        outln!("{}", answer.render().trim_end());
    }
    recorded?;
    Ok(Exit::Success)
}
