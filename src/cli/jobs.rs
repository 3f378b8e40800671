//! `hearth jobs [--json]`, `hearth jobs run NAME` and `hearth jobs show
//! NAME [--json]` (DESIGN 19): each job's schedule in words, its next
//! run, its last outcome and misses; a run now; one job's runs.

use std::path::Path;

use chrono::Duration;
use hearth::config::Config;
use hearth::home::Home;
use hearth::jobs::ledger::{JobOutcome, Run};
use hearth::jobs::overview::{overview, JobView};
use hearth::supervisor;

use super::{CommandError, Env, Exit};

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    action: Option<JobAction>,
    /// Print JSON.
    #[arg(long, global = true)]
    json: bool,
}

#[derive(clap::Subcommand)]
enum JobAction {
    /// Run a job now, whatever its schedule (its check first, if it has
    /// one); a running supervisor runs it at once, between ticks.
    Run {
        /// The job's name (its file's, without .toml).
        name: String,
    },
    /// A job's runs, oldest first: planned, outcome, evidence, cost.
    Show {
        /// The job's name.
        name: String,
    },
}

pub fn run(env: &Env, flag: Option<&Path>, args: Args) -> Result<Exit, CommandError> {
    let home = env.open_home(flag)?;
    let now = env.clock.now();
    let config = Config::load(&home.config_path()).ok();
    let grace = hearth::jobs::overview::late_grace(config.as_ref());
    let (views, problems, notes) = overview(&home, now, grace);
    match args.action {
        None => list(&views, &problems, &notes, args.json),
        Some(JobAction::Show { name }) => show(&views, &name, args.json),
        Some(JobAction::Run { name }) => run_now(env, &home, &views, &problems, &name),
    }
}

fn list(
    views: &[JobView],
    problems: &[hearth::jobs::JobProblem],
    notes: &[String],
    json: bool,
) -> Result<Exit, CommandError> {
    if json {
        let jobs: Vec<serde_json::Value> = views.iter().map(view_json).collect();
        let unusable: Vec<String> = problems.iter().map(ToString::to_string).collect();
        outln!(
            "{}",
            serde_json::json!({ "jobs": jobs, "unusable": unusable, "problems": notes })
        );
        return Ok(Exit::Success);
    }
    if views.is_empty() && problems.is_empty() {
        outln!("no jobs: write jobs/NAME.toml (see docs/guide.md, \"Jobs\")");
    }
    for v in views {
        outln!("{} — {}", v.job.name, v.job.when());
        match v.next {
            Some(next) => outln!("  next:    {}", hearth::clock::to_second(next)),
            None => outln!("  next:    never (the schedule matches no date)"),
        }
        match &v.last {
            Some(run) => outln!("  last:    {}", run.describe()),
            None => outln!("  last:    no run yet"),
        }
        outln!(
            "  misses:  {} · unmet in a row: {}",
            v.misses,
            v.unmet_streak
        );
        if let Some(trouble) = v.trouble() {
            outln!("  LATE:    {trouble}");
        }
    }
    for problem in problems {
        outln!("UNUSABLE: {problem}");
    }
    for note in notes {
        outln!("problem: {note}");
    }
    Ok(Exit::Success)
}

fn show(views: &[JobView], name: &str, json: bool) -> Result<Exit, CommandError> {
    let view = find(views, name)?;
    if json {
        outln!(
            "{}",
            serde_json::to_string(&view.history).unwrap_or_default()
        );
        return Ok(Exit::Success);
    }
    outln!(
        "{} — {} ({})",
        view.job.name,
        view.job.when(),
        view.job.file
    );
    if view.history.is_empty() {
        outln!("no runs yet");
    }
    for run in view.runs_shown() {
        outln!("{}", run.describe());
    }
    Ok(Exit::Success)
}

fn find<'a>(views: &'a [JobView], name: &str) -> Result<&'a JobView, CommandError> {
    views.iter().find(|v| v.job.name == name).ok_or_else(|| {
        let known: Vec<&str> = views.iter().map(|v| v.job.name.as_str()).collect();
        CommandError::new(
            anyhow::anyhow!("there is no usable job {name:?}"),
            if known.is_empty() {
                format!("write jobs/{name}.toml, or see `hearth jobs` for what is wrong with it")
            } else {
                format!("the jobs are: {} (see `hearth jobs`)", known.join(", "))
            },
        )
    })
}

fn view_json(v: &JobView) -> serde_json::Value {
    serde_json::json!({
        "name": v.job.name,
        "file": v.job.file,
        "schedule": v.job.schedule.text(),
        "when": v.job.when(),
        "next": v.next,
        "late_since": v.late_since,
        "last": v.last,
        "misses": v.misses,
        "unmet_streak": v.unmet_streak,
    })
}

/// Runs `name` now: asked of a running supervisor, or as a supervisor
/// run of one turn.
fn run_now(
    env: &Env,
    home: &Home,
    views: &[JobView],
    problems: &[hearth::jobs::JobProblem],
    name: &str,
) -> Result<Exit, CommandError> {
    if let Some(problem) = problems
        .iter()
        .find(|p| p.file == format!("jobs/{name}.toml"))
    {
        return Err(CommandError::new(
            anyhow::anyhow!("{}: {}", problem.file, problem.why),
            problem.fix.clone(),
        ));
    }
    let view = find(views, name)?;
    if hearth::home::lock::supervisor_running(home) {
        hearth::jobs::asked::ask_to_run(home, &view.job)?;
        outln!(
            "asked the running supervisor to run job {name} now (after a tick that is running); \
             `hearth jobs show {name}` says how it ends"
        );
        return Ok(Exit::Success);
    }
    let options = super::run::one_turn(env, home, Some(name.to_string()))?;
    let before = views
        .iter()
        .find(|v| v.job.name == name)
        .map_or(0, |v| v.history.len());
    if supervisor::run(home, options)? == supervisor::RunOutcome::Panic {
        return Ok(Exit::Panic);
    }
    let now = env.clock.now();
    let (views, _, _) = overview(home, now, Duration::zero());
    let runs: Vec<&Run> = find(&views, name)?
        .history
        .iter()
        .skip(before)
        .filter(|r| r.outcome != JobOutcome::Running)
        .collect();
    for run in &runs {
        outln!("{}", run.describe());
    }
    Ok(match runs.last().map(|r| r.outcome) {
        Some(JobOutcome::Done | JobOutcome::Skipped) => Exit::Success,
        _ => Exit::Error,
    })
}
