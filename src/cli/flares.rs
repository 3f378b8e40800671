//! `hearth flares [--json] [--all] [--full]`, `hearth flares show ID` and
//! `hearth flares --ack [ID…|--all]`.

use std::path::Path;

use hearth::config::Config;
use hearth::home::lock::CommitLock;
use hearth::mailbox::flares;
use hearth::repo::{Identity, Repo};

use super::{CommandError, Env, Exit};

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    action: Option<Action>,
    /// Print JSON.
    #[arg(long)]
    json: bool,
    /// Print each one's body too.
    #[arg(long)]
    full: bool,
    /// List read flares too (with --ack: mark every flare read).
    #[arg(long)]
    all: bool,
    /// Mark flares read: the IDs given, or every flare with --all.
    #[arg(long, value_name = "ID", num_args = 0..)]
    ack: Option<Vec<String>>,
}

/// What to do with one.
#[derive(clap::Subcommand)]
pub enum Action {
    /// Print one, whole: its subject and body (an ID, or a unique start of
    /// one).
    Show {
        /// Its id, as the list shows it.
        id: String,
    },
}

pub fn run(env: &Env, flag: Option<&Path>, args: Args) -> Result<Exit, CommandError> {
    run_for(env, flag, args, flares::Which::Flares)
}

/// `hearth flares` and `hearth outbox`: the same listing and read marks,
/// for hearth's flares or for the agent's letters.
pub fn run_for(
    env: &Env,
    flag: Option<&Path>,
    args: Args,
    which: flares::Which,
) -> Result<Exit, CommandError> {
    let (command, noun) = match which {
        flares::Which::Flares => ("flares", "flare"),
        flares::Which::Letters => ("outbox", "letter"),
    };
    let home = env.open_home(flag)?;
    if let Some(Action::Show { id }) = &args.action {
        let (f, body) = flares::show(&home, which, id).map_err(|e| {
            CommandError::new(e, format!("`hearth {command} --all` lists every ID"))
        })?;
        outln!("{}  {}  ({})", f.id, f.subject, f.path);
        outln!();
        outln!("{body}");
        return Ok(Exit::Success);
    }
    if let Some(ids) = args.ack {
        if ids.is_empty() && !args.all {
            return Err(CommandError::usage(
                &format!("--ack needs {noun} IDs, or --all"),
                &format!("`hearth {command}` lists the IDs"),
            ));
        }
        let newly = flares::ack_of(&home, which, &ids).map_err(|e| {
            CommandError::new(e, format!("`hearth {command} --all` lists every ID"))
        })?;
        let config = Config::load(&home.config_path()).unwrap_or_default();
        let _lock = CommitLock::acquire(&home)?;
        let repo = Repo::open(home.root())?;
        repo.commit(
            &[hearth::home::layout::rel::FLARES_READ],
            &Identity::operator(&config.git),
            &format!("{command}: {} marked read", newly.len()),
            env.clock.now(),
        )?;
        outln!("marked {} {noun}(s) read", newly.len());
        return Ok(Exit::Success);
    }
    let listed: Vec<flares::Flare> = flares::list_of(&home, which)
        .into_iter()
        .filter(|f| args.all || !f.read)
        .collect();
    if args.json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&listed).expect("flares serialise")
        );
        return Ok(Exit::Success);
    }
    if listed.is_empty() {
        outln!("no unread {noun}s");
    }
    for f in &listed {
        let mark = if f.read { " " } else { "*" };
        match which {
            flares::Which::Flares => {
                outln!("{mark} {}  [{}] {}  ({})", f.id, f.flare, f.subject, f.path);
                if args.full {
                    let (_, body) = flares::show(&home, which, &f.id)
                        .unwrap_or_else(|_| (f.clone(), String::new()));
                    for line in body.lines() {
                        outln!("    {line}");
                    }
                }
            }
            flares::Which::Letters => {
                outln!("{mark} {}  {}  ({})", f.id, f.subject, f.path);
                for line in f.body.lines() {
                    outln!("    {line}");
                }
            }
        }
    }
    Ok(Exit::Success)
}
