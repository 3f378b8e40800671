//! `hearth heal [--dry-run | --resume]`: the healer on demand (operator).

use std::path::Path;
use std::process::ExitCode;

use hearth::config::Config;
use hearth::healer::{self, state::HealerState};
use hearth::home::lock::{CommitLock, RunLock};
use hearth::repo::{Identity, Repo};

use super::{CommandError, Env};

#[derive(clap::Args)]
pub struct Args {
    /// Print exactly what a heal would do now, and change nothing.
    #[arg(long, conflicts_with = "resume")]
    dry_run: bool,
    /// Leave panic: clear the streak and the heal window so `hearth run` starts again.
    #[arg(long)]
    resume: bool,
    /// Print JSON (with --dry-run).
    #[arg(long)]
    json: bool,
}

pub fn run(env: &Env, flag: Option<&Path>, args: Args) -> Result<ExitCode, CommandError> {
    let home = env.open_home(flag)?;
    let repo = Repo::open(home.root())?;
    let (mut state, problem) = HealerState::load(&home);
    if let Some(problem) = problem {
        eprintln!("warning: {problem}");
    }
    let now = chrono::Utc::now();
    if args.dry_run {
        let plan = healer::plan(&home, &repo, &state).map_err(|e| CommandError::new(e, None))?;
        if args.json {
            println!(
                "{}",
                serde_json::to_string_pretty(&plan).expect("plan serialises")
            );
        } else {
            println!("a heal now would commit: {}", plan.commit_message());
            println!("restore from: {}", plan.restore_from);
            for path in &plan.restore {
                println!("  restore {path}");
            }
            for path in &plan.remove {
                println!("  remove  {path} (it stays in git history)");
            }
            for (from, to) in &plan.requeue {
                println!("  requeue {from} -> {to}");
            }
            if plan.restore.is_empty() && plan.remove.is_empty() && plan.requeue.is_empty() {
                println!("  (no file would change)");
            }
            println!("nothing was changed (--dry-run)");
        }
        return Ok(ExitCode::SUCCESS);
    }

    let _run = RunLock::acquire(&home)?;
    let config = Config::load(&home.config_path()).unwrap_or_default();
    if args.resume {
        let was = state.panic.take();
        state.streak.clear();
        state.heals.clear();
        state.save(&home).map_err(|e| CommandError::new(e, None))?;
        let _lock = CommitLock::acquire(&home)?;
        repo.commit(
            &["state/healer.json"],
            &Identity::operator(&config.git),
            "heal: resume (by hand)",
            now,
        )?;
        match was {
            Some(panic) => println!("left panic (since {}): {}", panic.since, panic.reason),
            None => println!("not in panic; streak and heal window cleared"),
        }
        println!("start the supervisor again: `hearth run` (or `systemctl start hearth`)");
        return Ok(ExitCode::SUCCESS);
    }
    let plan = healer::plan(&home, &repo, &state).map_err(|e| CommandError::new(e, None))?;
    let commit = healer::apply(&home, &repo, &mut state, &plan, now)
        .map_err(|e| CommandError::new(e, None))?;
    println!("{}", plan.commit_message());
    if let Some(commit) = commit {
        println!("committed {}", &commit[..7]);
    }
    Ok(ExitCode::SUCCESS)
}
