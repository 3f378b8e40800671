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
        return ack(env, &home, ids, args.all, which, (command, noun));
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
    if which == flares::Which::Flares {
        print_incidents(&home)?;
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

/// The open incidents, one line each: a cause, how often it flared, since
/// when, and whether it was acknowledged.
fn print_incidents(home: &hearth::home::Home) -> Result<(), CommandError> {
    let record = hearth::notify::incidents::Incidents::load(home).unwrap_or_default();
    if record.open.is_empty() {
        return Ok(());
    }
    outln!("open incidents (`--ack KEY` acknowledges one):");
    for i in record.open.values() {
        outln!(
            "  {}  — {} flare{}, first {}, last {}{}",
            i.key,
            i.count,
            if i.count == 1 { "" } else { "s" },
            hearth::clock::to_second(i.opened),
            hearth::clock::to_second(i.last),
            if i.acked { " (acknowledged)" } else { "" }
        );
    }
    outln!();
    Ok(())
}

/// Acknowledges the incidents `ids` name (a key's start, or a flare of
/// theirs): the ids left for the flares' read marks, with the flares of
/// each incident acknowledged, and the keys acknowledged.
fn ack_incidents(
    home: &hearth::home::Home,
    ids: Vec<String>,
) -> Result<(Vec<String>, Vec<String>), CommandError> {
    use hearth::notify::incidents::Incidents;
    let mut record = Incidents::load(home).unwrap_or_default();
    let mut flare_ids = Vec::new();
    let mut acked = Vec::new();
    for id in ids {
        let keys = record.ack(&id);
        if keys.iter().any(|k| k.starts_with(&id)) {
            // A key: its flares are what is marked read.
            for key in &keys {
                flare_ids.extend(record.open[key].flares.iter().cloned());
            }
        } else {
            flare_ids.push(id);
        }
        acked.extend(keys);
    }
    if !acked.is_empty() {
        record.save(home)?;
    }
    Ok((flare_ids, acked))
}

/// `--ack`: marks flares (or letters) read, and acknowledges the incidents
/// named; committed as the operator's.
fn ack(
    env: &Env,
    home: &hearth::home::Home,
    ids: Vec<String>,
    all: bool,
    which: flares::Which,
    (command, noun): (&str, &str),
) -> Result<Exit, CommandError> {
    if ids.is_empty() && !all {
        return Err(CommandError::usage(
            &format!("--ack needs {noun} IDs, or --all"),
            &format!("`hearth {command}` lists the IDs"),
        ));
    }
    let config = Config::load(&home.config_path()).unwrap_or_default();
    let _lock = CommitLock::acquire(home)?;
    // An incident's key (or a flare of it) acknowledges its cause: its
    // flares are marked read, and it reminds no more.
    let (ids, acked) = match which {
        flares::Which::Flares => ack_incidents(home, ids)?,
        flares::Which::Letters => (ids, Vec::new()),
    };
    let newly = if ids.is_empty() && !all {
        Vec::new()
    } else {
        flares::ack_of(home, which, &ids)
            .map_err(|e| CommandError::new(e, format!("`hearth {command} --all` lists every ID")))?
    };
    let repo = Repo::open(home.root())?;
    repo.commit(
        &[
            hearth::home::layout::rel::FLARES_READ,
            hearth::notify::incidents::FILE,
        ],
        &Identity::operator(&config.git),
        &format!("{command}: {} marked read", newly.len()),
        env.clock.now(),
    )?;
    for key in &acked {
        outln!("acknowledged the incident {key}");
    }
    outln!("marked {} {noun}(s) read", newly.len());
    Ok(Exit::Success)
}
