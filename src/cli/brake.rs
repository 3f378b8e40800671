//! `hearth brake status|report|override` (DESIGN 8): operator-only; no tool
//! of the agent reaches a command, and the override is written under
//! `.hearth/`, which the sandbox refuses.

use std::path::Path;

use hearth::boot;
use hearth::brake::gate::Override;
use hearth::brake::log::{self, Line};
use hearth::brake::{reads_in_context, report, required, waiting};
use hearth::config::Config;
use hearth::conversation::store::Conversation;
use hearth::repo::Repo;
use hearth::tools::sandbox::{self, Area};

use super::{CommandError, Env, Exit};

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Sub,
}

#[derive(clap::Subcommand)]
enum Sub {
    /// The files the brake requires, and whether the conversation has read them.
    Status {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Denials, would-denials and overrides by file and day, and whether it is safe to enforce.
    Report {
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// Only the last DAYS days.
        #[arg(long, value_name = "DAYS")]
        since: Option<u32>,
    },
    /// Open the gate for the next N ticks (an audit line records it).
    Override {
        /// How many ticks.
        #[arg(long, value_name = "N")]
        ticks: u32,
        /// Why, for the record.
        #[arg(long)]
        reason: String,
    },
}

pub fn run(env: &Env, flag: Option<&Path>, args: Args) -> Result<Exit, CommandError> {
    let home = env.open_home(flag)?;
    let config = Config::load(&home.config_path())?;
    let now = env.clock.now();
    match args.command {
        Sub::Status { json } => {
            let boot = boot::boot(&home, &config.boot);
            let required = required::required(&home, &boot.required_reads, &config.brake.must_read);
            let repo = Repo::open(home.root()).ok();
            let (conversation, _) =
                Conversation::read(&home, repo.as_ref()).map_err(|e| CommandError::new(e, None))?;
            let reads = reads_in_context(&conversation.messages, |raw| {
                sandbox::resolve(&home, raw, &[Area::Memory, Area::State, Area::Outbox])
                    .ok()
                    .map(|p| home.relative(&p))
            });
            let open = waiting(&required, &reads);
            let rows: Vec<serde_json::Value> = required
                .iter()
                .map(|r| {
                    let state = match open.iter().find(|w| w.path == r.path) {
                        Some(w) if w.missing => "missing",
                        Some(_) => "not read",
                        None => "read",
                    };
                    serde_json::json!({"path": r.path, "state": state})
                })
                .collect();
            let ov = Override::load(&home);
            if json {
                outln!(
                    "{}",
                    serde_json::to_string_pretty(&serde_json::json!({
                        "mode": config.brake.mode,
                        "required": rows,
                        "override_ticks_left": ov.ticks_left,
                    }))
                    .expect("status serialises")
                );
                return Ok(Exit::Success);
            }
            outln!("mode:      {:?}", config.brake.mode);
            if rows.is_empty() {
                outln!("required:  none");
            }
            for row in &rows {
                outln!(
                    "  {:<9} {}",
                    row["state"].as_str().unwrap_or(""),
                    row["path"].as_str().unwrap_or("")
                );
            }
            if ov.ticks_left > 0 {
                outln!("override:  {} tick(s) left ({})", ov.ticks_left, ov.reason);
            }
            Ok(Exit::Success)
        }
        Sub::Report { json, since } => {
            let (lines, skipped) = log::read(&home);
            if skipped > 0 {
                tracing::warn!("state/brake.jsonl: {skipped} line(s) skipped: they do not parse");
            }
            let since = since.map(|d| now - chrono::Duration::days(i64::from(d)));
            let r = report::report(&lines, since);
            if json {
                outln!(
                    "{}",
                    serde_json::to_string_pretty(&r).expect("report serialises")
                );
                return Ok(Exit::Success);
            }
            outln!(
                "decisions: {} allowed, {} denied, {} would-deny, {} overridden; {} override(s) granted",
                r.total.allowed,
                r.total.denied,
                r.total.would_deny,
                r.total.overridden,
                r.overrides_granted
            );
            if !r.by_file.is_empty() {
                outln!("by file waited for:");
                for (file, c) in &r.by_file {
                    outln!(
                        "  {file}: {} denied, {} would-deny, {} overridden",
                        c.denied,
                        c.would_deny,
                        c.overridden
                    );
                }
            }
            if !r.by_day.is_empty() {
                outln!("by day:");
                for (day, c) in &r.by_day {
                    outln!(
                        "  {day}: {} allowed, {} denied, {} would-deny, {} overridden",
                        c.allowed,
                        c.denied,
                        c.would_deny,
                        c.overridden
                    );
                }
            }
            outln!("verdict:   {}", r.verdict);
            Ok(Exit::Success)
        }
        Sub::Override { ticks, reason } => {
            if reason.trim().is_empty() {
                return Err(CommandError::usage(
                    "--reason must say why",
                    "the reason goes into state/brake.jsonl for whoever reads it later",
                ));
            }
            Override {
                ticks_left: ticks,
                reason: reason.clone(),
                granted: Some(now),
            }
            .save(&home)?;
            log::append(
                &home,
                &Line {
                    v: log::VERSION,
                    time: now,
                    tick: None,
                    tool: "hearth brake override".into(),
                    target: String::new(),
                    decision: "override-granted".into(),
                    waiting: Vec::new(),
                    reason: Some(format!("{ticks} tick(s): {reason}")),
                },
            )?;
            outln!("the brake is open for the next {ticks} tick(s); state/brake.jsonl records it");
            Ok(Exit::Success)
        }
    }
}
