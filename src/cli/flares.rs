//! `hearth flares [--json] [--all] [--full]`, `hearth flares show ID` and
//! `hearth flares --ack [ID…|--all]`.

use std::path::Path;

use hearth::config::Config;
use hearth::mailbox::flares;
use hearth::notify::acknowledge::{acknowledge, NotAcknowledged};
use hearth::repo::Identity;

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
    let who = Identity::operator(&config.git);
    let done = acknowledge(home, which, ids, all, &who, command, env.clock.now()).map_err(|e| {
        let hint = match &e {
            NotAcknowledged::Marks(_) => format!("`hearth {command} --all` lists every ID"),
            _ => "try again; the marks are written whole or not at all".to_string(),
        };
        CommandError::new(e, hint)
    })?;
    let (acked, newly) = (done.incidents, done.marked);
    for key in &acked {
        outln!("acknowledged the incident {key}");
    }
    outln!("marked {} {noun}(s) read", newly.len());
    Ok(Exit::Success)
}
