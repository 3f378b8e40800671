//! `hearth status [--json]`

use std::path::Path;
use std::process::ExitCode;

use chrono::{SecondsFormat, Utc};
use hearth::supervisor::status;

use super::{CommandError, Env};

#[derive(clap::Args)]
pub struct Args {
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(env: &Env, flag: Option<&Path>, args: Args) -> Result<ExitCode, CommandError> {
    let home = env.open_home(flag)?;
    let status = status::status(&home);
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&status).expect("status serialises")
        );
        return Ok(ExitCode::SUCCESS);
    }
    println!("home:       {}", status.home);
    let supervisor = match (status.running, status.pid, status.phase) {
        (false, _, _) => "not running".to_string(),
        (true, Some(pid), Some(phase)) => format!("running (pid {pid}), {phase:?}").to_lowercase(),
        (true, _, _) => "running".to_string(),
    };
    println!("supervisor: {supervisor}");
    match &status.last_tick {
        Some(t) => println!(
            "last tick:  {} — exit {} ({}), ended {}",
            t.tick,
            t.exit,
            t.class.as_str(),
            t.end.to_rfc3339_opts(SecondsFormat::Secs, true)
        ),
        None => println!("last tick:  none yet"),
    }
    match status.next_due {
        Some(due) => {
            let secs = (due - Utc::now()).num_seconds().max(0);
            println!(
                "next tick:  {} (in {}m {}s)",
                due.to_rfc3339_opts(SecondsFormat::Secs, true),
                secs / 60,
                secs % 60
            );
        }
        None if status.running => println!("next tick:  running now"),
        None => println!("next tick:  when the supervisor runs (`hearth run`)"),
    }
    if status.failure_streak > 0 {
        println!(
            "failures:   {} failed ticks in a row",
            status.failure_streak
        );
    }
    if let Some(panic) = &status.panic {
        println!(
            "PANIC:      since {}: {}",
            panic.since.to_rfc3339_opts(SecondsFormat::Secs, true),
            panic.reason
        );
        println!("            fix the cause, then `hearth heal --resume` and start hearth again");
    }
    for problem in &status.problems {
        println!("problem:    {problem}");
    }
    Ok(ExitCode::SUCCESS)
}
