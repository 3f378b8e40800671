//! `hearth collab list|show|new|rename|pause|complete|abandon|reopen`
//! (DESIGN 14): the operator's view of, and hand on, the collaborations
//! this agent takes part in. Every change is an event in the record and a
//! commit as the operator.

use std::path::{Path, PathBuf};

use hearth::collab::{self, operator, store, Change, Collaboration, Stage};
use hearth::config::collab as collab_config;
use hearth::config::Config;
use hearth::home::Home;

use super::{CommandError, Env, Exit};

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Sub,
}

#[derive(clap::Subcommand)]
enum Sub {
    /// The collaborations this agent takes part in: status, rounds, workdir.
    List {
        /// Only those with this status (active, paused, complete, abandoned).
        #[arg(long, value_name = "STATUS")]
        status: Option<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// One collaboration: its rounds in order and its history.
    Show {
        /// Its slug.
        slug: String,
        /// Print JSON (the whole record).
        #[arg(long)]
        json: bool,
    },
    /// Found a collaboration by hand.
    New {
        /// What to call it.
        name: String,
        /// Its slug (default: from the name).
        #[arg(long)]
        slug: Option<String>,
        /// Where its tools run: one of [collaborations] workdirs (default: the home).
        #[arg(long, value_name = "DIR")]
        workdir: Option<PathBuf>,
        /// A peer (from [peers]) taking part; repeat for several.
        #[arg(long = "with", value_name = "PEER")]
        with: Vec<String>,
        /// The memory that founds it (a path under memory/).
        #[arg(long, value_name = "MEMORY")]
        founded_by: Option<String>,
    },
    /// Give it a new name (its slug stays).
    Rename {
        /// Its slug.
        slug: String,
        /// The new name.
        name: String,
    },
    /// Hold it: no handoff in it until it is reopened.
    Pause(ChangeArgs),
    /// Mark it done.
    Complete(ChangeArgs),
    /// Give it up.
    Abandon(ChangeArgs),
    /// Make it active again.
    Reopen(ChangeArgs),
}

#[derive(clap::Args)]
struct ChangeArgs {
    /// Its slug.
    slug: String,
    /// Why, for the record.
    #[arg(long)]
    reason: Option<String>,
}

pub fn run(env: &Env, flag: Option<&Path>, args: Args) -> Result<Exit, CommandError> {
    let home = env.open_home(flag)?;
    match args.command {
        Sub::List { status, json } => {
            let shown = list(&home, status.as_deref(), json)?;
            if !json {
                peer_lines(&home, env.clock.now())?;
            }
            Ok(shown)
        }
        Sub::Show { slug, json } => {
            // The record is shown whatever the config says; the peers are
            // only where the other side's commits are looked up.
            let peers = Config::load(&home.config_path())
                .map(|c| c.peers)
                .unwrap_or_else(|e| {
                    tracing::warn!("{e}; the peers' side of the rounds is not looked up");
                    Default::default()
                });
            show(&home, &peers, &slug, json)
        }
        Sub::New {
            name,
            slug,
            workdir,
            with,
            founded_by,
        } => {
            let config = Config::load(&home.config_path())?;
            let founding = operator::Founding {
                name,
                slug,
                workdir,
                with,
                founded_by,
            };
            let c = operator::found(&home, &config, founding, env.clock.now()).map_err(refused)?;
            outln!("{}", store::rel_path(&c.slug));
            Ok(Exit::Success)
        }
        Sub::Rename { slug, name } => {
            change(env, &home, &slug, &format!("rename to {name}"), |c, now| {
                c.rename(&name, "operator", now)
            })
        }
        Sub::Pause(a) => status_change(env, &home, a, Change::Pause),
        Sub::Complete(a) => status_change(env, &home, a, Change::Complete),
        Sub::Abandon(a) => status_change(env, &home, a, Change::Abandon),
        Sub::Reopen(a) => status_change(env, &home, a, Change::Reopen),
    }
}

/// The operator's change as the command reports it: what cannot be is a
/// misuse (exit 2), what failed on the way an error; both with the hint.
fn refused(e: operator::OperatorError) -> CommandError {
    let hint = e.hint();
    if e.is_misuse() {
        CommandError::usage(&e.to_string(), &hint)
    } else {
        CommandError::new(e, hint)
    }
}

fn status_change(
    env: &Env,
    home: &Home,
    args: ChangeArgs,
    what: Change,
) -> Result<Exit, CommandError> {
    let reason = args.reason.unwrap_or_default();
    change(env, home, &args.slug, what.as_str(), |c, now| {
        c.change(what, "operator", &reason, now)
    })
}

/// Applies a change by hand and says where the collaboration stands.
fn change(
    env: &Env,
    home: &Home,
    slug: &str,
    summary: &str,
    apply: impl FnOnce(
        &mut Collaboration,
        chrono::DateTime<chrono::Utc>,
    ) -> Result<(), collab::CollabError>,
) -> Result<Exit, CommandError> {
    let config = Config::load(&home.config_path())?;
    let c =
        operator::change(home, &config, slug, summary, env.clock.now(), apply).map_err(refused)?;
    outln!("{slug}: {} ({})", c.status.as_str(), c.name);
    Ok(Exit::Success)
}

fn not_found(slug: &str) -> CommandError {
    refused(operator::OperatorError::NotFound(slug.to_string()))
}

fn list(home: &Home, status: Option<&str>, json: bool) -> Result<Exit, CommandError> {
    let status = match status {
        None => None,
        Some(word) => Some(Stage::parse(word).ok_or_else(|| {
            CommandError::usage(
                &format!("{word:?} is not a status"),
                "use active, paused, complete or abandoned",
            )
        })?),
    };
    let (all, broken) = store::list(home);
    for e in &broken {
        tracing::warn!("{e} (hint: {})", e.hint());
    }
    let shown = store::with_status(all, status);
    if json {
        let rows: Vec<serde_json::Value> = shown.iter().map(summary_json).collect();
        outln!(
            "{}",
            serde_json::to_string_pretty(&rows).expect("serialises")
        );
        return Ok(Exit::Success);
    }
    if shown.is_empty() {
        outln!(
            "no {}collaborations",
            status
                .map(|s| format!("{} ", s.as_str()))
                .unwrap_or_default()
        );
        return Ok(Exit::Success);
    }
    outln!(
        "{:<24} {:<10} {:>6}  {:<28} {}",
        "SLUG",
        "STATUS",
        "ROUNDS",
        "WORKDIR",
        "PARTICIPANTS"
    );
    for c in &shown {
        outln!(
            "{:<24} {:<10} {:>6}  {:<28} {}",
            c.slug,
            c.status.as_str(),
            c.rounds.len(),
            c.workdir.as_deref().unwrap_or("(the home)"),
            c.participants.join(", ")
        );
    }
    Ok(Exit::Success)
}

/// Each peer on another host: how far behind this home's view of it is,
/// or since when it cannot be fetched (as `hearth status` says it).
fn peer_lines(home: &Home, now: chrono::DateTime<chrono::Utc>) -> Result<(), CommandError> {
    // A hearth.toml that does not load is named by `hearth status`.
    if let Ok(config) = hearth::config::Config::load(&home.config_path()) {
        for peer in hearth::view::status::remote_peers(home, &config) {
            outln!("{}", peer.line(now));
        }
    }
    Ok(())
}

fn summary_json(c: &Collaboration) -> serde_json::Value {
    serde_json::json!({
        "slug": c.slug,
        "name": c.name,
        "status": c.status,
        "rounds": c.rounds.len(),
        "workdir": c.workdir,
        "participants": c.participants,
        "last_activity": c.last_activity(),
    })
}

fn show(
    home: &Home,
    peers: &collab_config::Peers,
    slug: &str,
    json: bool,
) -> Result<Exit, CommandError> {
    let Some(mut c) = store::load(home, slug)? else {
        return Err(not_found(slug));
    };
    collab::commits::fill(home, &collab::own_name(home), peers, &mut c);
    if json {
        let mut value = serde_json::to_value(&c).expect("serialises");
        // Each round: delivered once its receiver's commit is known.
        if let Some(rounds) = value["rounds"].as_array_mut() {
            for (round, r) in rounds.iter_mut().zip(&c.rounds) {
                round["delivered"] = r.taken_in.is_some().into();
            }
        }
        outln!(
            "{}",
            serde_json::to_string_pretty(&value).expect("serialises")
        );
        return Ok(Exit::Success);
    }
    outln!("{} — {}", c.slug, c.name);
    outln!("status:       {}", c.status.as_str());
    outln!(
        "workdir:      {}",
        c.workdir.as_deref().unwrap_or("(the home)")
    );
    outln!("participants: {}", c.participants.join(", "));
    if let Some(f) = &c.founded_by {
        outln!("founded by:   {f}");
    }
    outln!("rounds:       {}", c.rounds.len());
    for r in &c.rounds {
        let commits = [r.sent_in.as_deref(), r.taken_in.as_deref()]
            .map(|c| c.map_or("-".to_string(), |c| c.chars().take(10).collect()));
        let delivery = if r.taken_in.is_some() {
            "delivered"
        } else {
            "waiting"
        };
        outln!(
            "  {:>3}. {} {} → {}: {}  [{} → {}] {delivery}",
            r.n,
            r.at.format("%Y-%m-%d %H:%M"),
            r.from,
            r.to,
            r.summary,
            commits[0],
            commits[1]
        );
    }
    outln!("history:");
    for e in &c.events {
        let note = if e.note.is_empty() {
            String::new()
        } else {
            format!(" ({})", e.note)
        };
        outln!(
            "  {} {}: {}{note}",
            e.at.format("%Y-%m-%d %H:%M"),
            e.by,
            e.what
        );
    }
    Ok(Exit::Success)
}
