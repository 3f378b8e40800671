//! `hearth brake status|report|override` (DESIGN 8): operator-only; no tool
//! of the agent reaches a command, and the override is written under
//! `.hearth/`, which the sandbox refuses.

use std::path::Path;

use hearth::brake::{log, report, status};
use hearth::config::Config;

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
            let st = status::status(&home, &config)?;
            if json {
                outln!(
                    "{}",
                    serde_json::to_string_pretty(&st).expect("status serialises")
                );
                return Ok(Exit::Success);
            }
            outln!("mode:      {:?}", st.mode);
            if st.required.is_empty() {
                outln!("required:  none");
            }
            for row in &st.required {
                outln!("  {:<9} {}", row.state, row.path);
            }
            if st.override_ticks_left > 0 {
                outln!(
                    "override:  {} tick(s) left ({})",
                    st.override_ticks_left,
                    st.override_reason
                );
            }
            Ok(Exit::Success)
        }
        Sub::Report { json, since } => {
            let since = since.map(|d| now - chrono::Duration::days(i64::from(d)));
            let missing: Vec<String> = status::status(&home, &config)?
                .required
                .into_iter()
                .filter(|row| row.state == "missing")
                .map(|row| row.path)
                .collect();
            print_report(&home, json, since, &missing)
        }
        Sub::Override { ticks, reason } => {
            status::grant_override(&home, ticks, &reason, now).map_err(|e| {
                let hint = e.hint();
                match e {
                    status::OverrideError::NoReason => CommandError::usage(&e.to_string(), &hint),
                    e => CommandError::new(e, hint),
                }
            })?;
            outln!("the brake is open for the next {ticks} tick(s); state/brake.jsonl records it");
            Ok(Exit::Success)
        }
    }
}

/// `hearth brake report`: the brake's decisions by file and by day, and
/// its verdict, from `state/brake.jsonl` (since a day, when given).
fn print_report(
    home: &hearth::home::Home,
    json: bool,
    since: Option<chrono::DateTime<chrono::Utc>>,
    missing: &[String],
) -> Result<Exit, CommandError> {
    let (lines, skipped) = log::read(home);
    if skipped > 0 {
        tracing::warn!(
            "{}: {skipped} line(s) skipped: they do not parse",
            hearth::home::layout::rel::BRAKE_LOG
        );
    }
    let r = report::report(&lines, since, missing);
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
