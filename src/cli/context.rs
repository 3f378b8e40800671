//! `hearth context [--json] [--job NAME]`: exactly what the next tick (or
//! a run of job NAME) would send the model (system blocks in order, the
//! conversation with the new user turn, the tool list), without calling it
//! or changing anything — a job's check is not run, so its output is not
//! in the turn.

use std::path::Path;

use hearth::config::Config;
use hearth::exchange::ledger::Ledger;
use hearth::tick;
use serde_json::json;

use super::{CommandError, Env, Exit};

#[derive(clap::Args)]
pub struct Args {
    /// Print JSON.
    #[arg(long)]
    json: bool,
    /// What a run of this job (jobs/NAME.toml) would send, planned now.
    #[arg(long, value_name = "NAME")]
    job: Option<String>,
}

pub fn run(env: &Env, flag: Option<&Path>, args: Args) -> Result<Exit, CommandError> {
    let home = env.open_home(flag)?;
    let config = Config::load(&home.config_path())?;
    let number = Ledger::read(&home.ticks_path())
        .map(|l| l.last_number())
        .unwrap_or(0)
        + 1;
    let now = env.clock.now();
    let job = match &args.job {
        None => None,
        Some(name) => {
            let path = home.path(&format!("jobs/{name}.toml"));
            if !path.is_file() {
                return Err(CommandError::new(
                    anyhow::anyhow!("there is no jobs/{name}.toml"),
                    "`hearth jobs` lists the jobs",
                ));
            }
            let job = hearth::jobs::spec::load(&home, &path)
                .map_err(|p| CommandError::new(anyhow::anyhow!("{}: {}", p.file, p.why), p.fix))?;
            Some(hearth::jobs::turn::JobTurn::of(&job, now, None))
        }
    };
    let prepared = tick::prepare(&home, &config, number, now, env.vars(), job.as_ref())?;
    let user_turn = prepared.conversation.messages.last().cloned();
    if args.json {
        let value = json!({
            "tick": prepared.number,
            "tier": prepared.tier,
            "system": prepared.system,
            "messages": prepared.conversation.messages,
            "user_turn": user_turn,
            "tools": prepared.tools,
            "tokens_by_part": prepared.tokens_by_part,
            "required_reads": prepared.required_reads,
            "problems": prepared.problems,
            "archive_before_tick": prepared.compaction.as_ref().map(|(c, _)| json!({
                "archive": c.archive, "messages": c.count,
            })),
            "messages_json_broken": prepared.broken.as_ref().map(|b| &b.problem),
        });
        outln!(
            "{}",
            serde_json::to_string_pretty(&value).expect("context serialises")
        );
        return Ok(Exit::Success);
    }
    for (i, block) in prepared.system.iter().enumerate() {
        outln!(
            "===== system block {}: {} ({} characters) =====",
            i + 1,
            block.source,
            block.text.chars().count()
        );
        outln!("{}", block.text.trim_end());
    }
    let earlier = prepared.conversation.messages.len().saturating_sub(1);
    outln!(
        "===== conversation: {earlier} earlier messages (~{} tokens) =====",
        prepared.tokens_by_part.get("history").copied().unwrap_or(0)
    );
    outln!(
        "===== user turn: tick {} (tier {:?}) =====",
        prepared.number,
        prepared.tier
    );
    if let Some(turn) = user_turn {
        outln!("{}", turn.text().trim_end());
    }
    let names: Vec<&str> = prepared.tools.iter().map(|t| t.name.as_str()).collect();
    outln!("===== tools: {} =====", names.join(", "));
    for problem in &prepared.problems {
        outln!("problem: {problem}");
    }
    Ok(Exit::Success)
}
