//! `hearth heal [--dry-run | --resume]`: the healer on demand (operator).

use std::path::Path;

use hearth::config::Config;
use hearth::healer::{self, state::HealerState};
use hearth::home::lock::{CommitLock, RunLock};
use hearth::repo::{Identity, Repo};

use super::{CommandError, Env, Exit};

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
    /// Heal even though no tick has failed (it spends one of the window's heals).
    #[arg(long, conflicts_with_all = ["resume", "dry_run"])]
    force: bool,
}

pub fn run(env: &Env, flag: Option<&Path>, args: Args) -> Result<Exit, CommandError> {
    let home = env.open_home(flag)?;
    let repo = Repo::open(home.root())?;
    let (mut state, problem) = HealerState::load_or_fresh(&home);
    if let Some(problem) = problem {
        tracing::warn!("{problem}");
    }
    let now = env.clock.now();
    if args.dry_run {
        let plan = healer::plan(&home, &repo, &state)?;
        if args.json {
            outln!(
                "{}",
                serde_json::to_string_pretty(&plan).expect("plan serialises")
            );
        } else {
            outln!("a heal now would commit: {}", plan.commit_message());
            outln!("restore from: {}", plan.restore_from);
            for path in &plan.restore {
                outln!("  restore {path}");
            }
            for path in &plan.remove {
                outln!("  remove  {path} (it stays in git history)");
            }
            for (from, to) in &plan.requeue {
                outln!("  requeue {from} -> {to}");
            }
            if plan.restore.is_empty() && plan.remove.is_empty() && plan.requeue.is_empty() {
                outln!("  (no file would change)");
            }
            outln!("nothing was changed (--dry-run)");
        }
        return Ok(Exit::Success);
    }

    let _run = RunLock::acquire(&home)?;
    let config = Config::load(&home.config_path()).unwrap_or_default();
    if args.resume {
        let _lock = CommitLock::acquire(&home)?;
        let was = healer::resume(
            &home,
            &repo,
            &mut state,
            &Identity::operator(&config.git),
            now,
        )?;
        match was {
            Some(panic) => outln!("left panic (since {}): {}", panic.since, panic.reason),
            None => outln!("not in panic; streak and heal window cleared"),
        }
        outln!("start the supervisor again: `hearth run` (or `systemctl start hearth`)");
        return Ok(Exit::Success);
    }
    if state.streak.is_empty() && !args.force {
        return Err(CommandError::new(
            anyhow::anyhow!("nothing to heal: no tick has failed since the last success or heal"),
            "`hearth heal --dry-run` shows what a heal would restore; `hearth heal --force` \
             heals anyway (it counts toward [healer] max_heals)",
        ));
    }
    let plan = healer::plan(&home, &repo, &state)?;
    let commit = healer::apply(&home, &repo, &mut state, &plan, now)?;
    outln!("{}", plan.commit_message());
    if let Some(commit) = commit {
        outln!("committed {}", &commit[..7]);
    }
    Ok(Exit::Success)
}
