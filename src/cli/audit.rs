//! `hearth audit [--json] [--strict]`: is the identity still loading cleanly?

use std::path::Path;
use std::process::ExitCode;

use hearth::boot::drift;
use hearth::config::Config;

use super::{CommandError, Env};

#[derive(clap::Args)]
pub struct Args {
    /// Print JSON.
    #[arg(long)]
    json: bool,
    /// Exit 1 when there is any drift.
    #[arg(long)]
    strict: bool,
}

pub fn run(env: &Env, flag: Option<&Path>, args: Args) -> Result<ExitCode, CommandError> {
    let home = env.open_home(flag)?;
    // The audit is for when things are wrong: a broken hearth.toml must not
    // stop it.
    let config = Config::load(&home.config_path()).unwrap_or_else(|e| {
        eprintln!("warning: {e}; auditing with the default [boot] settings");
        Config::default()
    });
    let audit = drift::audit(&home, &config.boot);
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&audit).expect("audit serialises")
        );
    } else {
        print_human(&audit);
    }
    Ok(if args.strict && !audit.drift.is_empty() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn print_human(audit: &drift::Audit) {
    println!(
        "identity layer: {} memories in full ({} truncated), {} as titles",
        audit.rendered_full, audit.truncated, audit.rendered_as_titles
    );
    println!(
        "budget:         {} of {} characters ({}%), ~{} tokens in the system prompt",
        audit.identity_chars, audit.budget_chars, audit.budget_percent, audit.estimated_tokens
    );
    if !audit.required_reads.is_empty() {
        println!("required reads: {}", audit.required_reads.join(", "));
    }
    if audit.drift.is_empty() {
        println!("drift:          none");
    } else {
        println!("drift ({}):", audit.drift.len());
        for d in &audit.drift {
            let kind = serde_json::to_value(d.kind).expect("kind serialises");
            println!(
                "  {} [{}]: {}",
                d.path,
                kind.as_str().unwrap_or("?"),
                d.detail
            );
        }
    }
    for problem in &audit.problems {
        println!("problem:        {problem}");
    }
}
