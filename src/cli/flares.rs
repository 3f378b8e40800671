//! `hearth flares [--json] [--all]` and `hearth flares --ack [ID…|--all]`.

use std::path::Path;

use hearth::config::Config;
use hearth::home::lock::CommitLock;
use hearth::mailbox::flares;
use hearth::repo::{Identity, Repo};

use super::{CommandError, Env, Exit};

#[derive(clap::Args)]
pub struct Args {
    /// Print JSON.
    #[arg(long)]
    json: bool,
    /// List read flares too (with --ack: mark every flare read).
    #[arg(long)]
    all: bool,
    /// Mark flares read: the IDs given, or every flare with --all.
    #[arg(long, value_name = "ID", num_args = 0..)]
    ack: Option<Vec<String>>,
}

pub fn run(env: &Env, flag: Option<&Path>, args: Args) -> Result<Exit, CommandError> {
    let home = env.open_home(flag)?;
    if let Some(ids) = args.ack {
        if ids.is_empty() && !args.all {
            return Err(CommandError::usage(
                "--ack needs flare IDs, or --all",
                "`hearth flares` lists the IDs",
            ));
        }
        let newly = flares::ack(&home, &ids).map_err(|e| {
            CommandError::new(e, Some("`hearth flares --all` lists every ID".into()))
        })?;
        let config = Config::load(&home.config_path()).unwrap_or_default();
        let _lock = CommitLock::acquire(&home)?;
        let repo = Repo::open(home.root())?;
        repo.commit(
            &[hearth::home::layout::rel::FLARES_READ],
            &Identity::operator(&config.git),
            &format!("flares: {} marked read", newly.len()),
            env.clock.now(),
        )?;
        outln!("marked {} flare(s) read", newly.len());
        return Ok(Exit::Success);
    }
    let listed: Vec<flares::Flare> = flares::list(&home)
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
        outln!("no unread flares");
    }
    for f in &listed {
        let mark = if f.read { " " } else { "*" };
        outln!("{mark} {}  [{}] {}  ({})", f.id, f.flare, f.subject, f.path);
    }
    Ok(Exit::Success)
}
