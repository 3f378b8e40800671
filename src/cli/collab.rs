//! `hearth collab list|show|new|rename|pause|complete|abandon|reopen`
//! (DESIGN 14): the operator's view of, and hand on, the collaborations
//! this agent takes part in. Every change is an event in the record and a
//! commit as the operator.

use std::path::{Path, PathBuf};

use hearth::collab::{self, store, Change, Collaboration, Status};
use hearth::config::collab as collab_config;
use hearth::config::Config;
use hearth::home::lock::CommitLock;
use hearth::home::Home;
use hearth::repo::{Identity, Repo};

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
        Sub::List { status, json } => list(&home, status.as_deref(), json),
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
            let slug = slug.unwrap_or_else(|| collab::slug_for(&name));
            if store::load(&home, &slug).map_err(no_hint)?.is_some() {
                return Err(CommandError::usage(
                    &format!("collaboration {slug} exists already"),
                    "pick another --slug, or `hearth collab reopen` it",
                ));
            }
            let workdir = checked_workdir(&config, workdir)?;
            let mut participants = vec![collab::own_name(&home)];
            for peer in with {
                if !config.peers.contains_key(&peer) {
                    return Err(CommandError::usage(
                        &format!("{peer:?} is not one of this home's [peers]"),
                        "add it to [peers] in hearth.toml (name = \"/path/to/its/home\")",
                    ));
                }
                if !participants.contains(&peer) {
                    participants.push(peer);
                }
            }
            if let Some(memory) = &founded_by {
                let under_memory = memory.starts_with("memory/") && !memory.contains("..");
                if !under_memory || !home.path(memory).is_file() {
                    return Err(CommandError::usage(
                        &format!("--founded-by {memory}: no such memory in this home"),
                        "name a file under memory/, as `hearth recall` cites it",
                    ));
                }
            }
            let now = env.clock.now();
            let c = Collaboration::found(
                &slug,
                &name,
                workdir,
                participants,
                founded_by,
                "operator",
                now,
            )
            .map_err(|e| {
                CommandError::usage(
                    &e.to_string(),
                    "give another --slug, or a name to make one of",
                )
            })?;
            commit_change(
                env,
                &home,
                &config,
                &c,
                &format!("collab: new {slug} ({name})"),
                None,
            )?;
            outln!("{}", store::rel_path(&slug));
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

fn no_hint(e: impl Into<anyhow::Error>) -> CommandError {
    CommandError::new(e, None)
}

/// The workdir asked for, if the operator's allow-list has it.
fn checked_workdir(config: &Config, dir: Option<PathBuf>) -> Result<Option<String>, CommandError> {
    let Some(dir) = dir else {
        return Ok(None);
    };
    if !dir.is_absolute() || !config.collaborations.allows(&dir) {
        return Err(CommandError::usage(
            &format!("{} is not one of [collaborations] workdirs", dir.display()),
            "add it to [collaborations] workdirs in hearth.toml (absolute paths), or leave \
             --workdir out to work in the home",
        ));
    }
    Ok(Some(dir.to_string_lossy().into_owned()))
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

/// Notices to `c`'s other participants among this home's peers that its
/// operator changed its status (`what`): their supervisors take them into
/// their records and inboxes, as they take a completion.
fn notify_peers(
    env: &Env,
    home: &Home,
    config: &Config,
    c: &Collaboration,
    what: &str,
) -> Result<Vec<String>, CommandError> {
    let me = collab::own_name(home);
    let reason = c
        .events
        .last()
        .filter(|e| !e.note.is_empty())
        .map(|e| format!(" ({})", e.note))
        .unwrap_or_default();
    let message = format!(
        "{me}'s operator changed collaboration \"{}\" ({}): {what}{reason}; it is now {}.",
        c.name,
        c.slug,
        c.status.as_str()
    );
    let mut posted = Vec::new();
    for peer in c
        .participants
        .iter()
        .filter(|p| **p != me && config.peers.contains_key(*p))
    {
        let notice = collab::handoff::notice(&me, peer, c, what, message.clone(), env.clock.now());
        posted.push(store::post(home, &notice, env.clock.now())?);
    }
    Ok(posted)
}

/// Loads `slug`, applies `apply`, writes and commits the record.
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
    let Some(mut c) = store::load(home, slug).map_err(no_hint)? else {
        return Err(not_found(slug));
    };
    apply(&mut c, env.clock.now()).map_err(|e| {
        CommandError::usage(
            &e.to_string(),
            "`hearth collab show SLUG` shows where it stands",
        )
    })?;
    // A status change or a new name travels to the peers as a notice.
    let status_change = c.events.last().map(|e| e.what.clone()).filter(|what| {
        ["pause", "complete", "abandon", "reopen", "rename"].contains(&what.as_str())
    });
    commit_change(
        env,
        home,
        &config,
        &c,
        &format!("collab: {summary} ({slug})"),
        status_change.as_deref(),
    )?;
    outln!("{slug}: {} ({})", c.status.as_str(), c.name);
    Ok(Exit::Success)
}

/// Writes the record (and, for a status change `notice`, the notices to
/// the peers) and commits them as the operator.
fn commit_change(
    env: &Env,
    home: &Home,
    config: &Config,
    c: &Collaboration,
    message: &str,
    notice: Option<&str>,
) -> Result<(), CommandError> {
    // Held from the write to the commit: a running supervisor must not
    // take the record for a hand edit.
    let _lock = CommitLock::acquire(home)?;
    let mut paths = vec![store::save(home, c)?];
    if let Some(what) = notice {
        paths.extend(notify_peers(env, home, config, c, what)?);
    }
    let specs: Vec<&str> = paths.iter().map(String::as_str).collect();
    Repo::open(home.root())?.commit(
        &specs,
        &Identity::operator(&config.git),
        message,
        env.clock.now(),
    )?;
    Ok(())
}

fn not_found(slug: &str) -> CommandError {
    CommandError::usage(
        &format!("no collaboration {slug:?} in this home"),
        "`hearth collab list` shows them",
    )
}

fn list(home: &Home, status: Option<&str>, json: bool) -> Result<Exit, CommandError> {
    let status = match status {
        None => None,
        Some(word) => Some(Status::parse(word).ok_or_else(|| {
            CommandError::usage(
                &format!("{word:?} is not a status"),
                "use active, paused, complete or abandoned",
            )
        })?),
    };
    let (all, broken) = store::list(home);
    for e in &broken {
        tracing::warn!("{e}");
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
    let Some(mut c) = store::load(home, slug).map_err(no_hint)? else {
        return Err(not_found(slug));
    };
    collab::commits::fill(home, &collab::own_name(home), peers, &mut c);
    if json {
        outln!("{}", serde_json::to_string_pretty(&c).expect("serialises"));
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
        outln!(
            "  {:>3}. {} {} → {}: {}  [{} → {}]",
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
