//! `hearth proposals [--json] [--all]`, `show N`, `accept N`, `reject N
//! [--reason TEXT]`: changes to memory that wait for the operator; and
//! `requests [--json]`, `approve N`, `decline N [--reason TEXT]`: calls of
//! tools that act, which an exchange that read outside content asked for
//! and which wait for the operator to run them once or drop them.

use std::path::Path;

use hearth::config::Config;
use hearth::home::Home;
use hearth::proposals::requests::{self, RequestKind, ToolRequest, ToolRequestState};
use hearth::proposals::{self, Accepted, Proposal};
use hearth::repo::Identity;

use super::{CommandError, Env, Exit};

#[derive(clap::Args)]
pub struct Args {
    /// Print JSON.
    #[arg(long, global = true)]
    json: bool,
    /// List decided proposals too.
    #[arg(long)]
    all: bool,
    #[command(subcommand)]
    command: Option<Sub>,
}

#[derive(clap::Subcommand)]
enum Sub {
    /// The diff, per-file stats, and who wrote each line it removes.
    Show {
        /// Its number.
        n: u64,
    },
    /// Put it on main as one commit (re-applied on top if main moved).
    Accept {
        /// Its number.
        n: u64,
        /// Act only if it is still the version you looked at (the
        /// commit `show` names for a proposal, the digest for a request):
        /// a change since is refused, never decided unseen.
        #[arg(long, value_name = "VERSION")]
        seen: Option<String>,
    },
    /// Drop it, saying why.
    Reject {
        /// Its number.
        n: u64,
        /// Why (recorded in the commit and the book).
        #[arg(long)]
        reason: Option<String>,
        /// Act only if it is still the version you looked at (the
        /// commit `show` names for a proposal, the digest for a request):
        /// a change since is refused, never decided unseen.
        #[arg(long, value_name = "VERSION")]
        seen: Option<String>,
    },
    /// The requests to run a tool (all of them, with `--json` as JSON).
    Requests,
    /// Run request N's tool once, as you, with the arguments it shows.
    Approve {
        /// The request's number.
        n: u64,
        /// Act only if it is still the version you looked at (the
        /// commit `show` names for a proposal, the digest for a request):
        /// a change since is refused, never decided unseen.
        #[arg(long, value_name = "VERSION")]
        seen: Option<String>,
    },
    /// Drop request N without running it, saying why.
    Decline {
        /// The request's number.
        n: u64,
        /// Why (recorded in the commit and the book).
        #[arg(long)]
        reason: Option<String>,
        /// Act only if it is still the version you looked at (the
        /// commit `show` names for a proposal, the digest for a request):
        /// a change since is refused, never decided unseen.
        #[arg(long, value_name = "VERSION")]
        seen: Option<String>,
    },
}

fn operator(home: &Home) -> Identity {
    let config = Config::load(&home.config_path()).unwrap_or_else(|e| {
        tracing::warn!("{e}; committing as the default operator");
        Config::default()
    });
    Identity::operator(&config.git)
}

pub fn run(env: &Env, flag: Option<&Path>, args: Args) -> Result<Exit, CommandError> {
    let home = env.open_home(flag)?;
    let now = env.clock.now();
    if let Some(pause) = env.accept_pause() {
        proposals::hooks::pause_accepts(pause);
    }
    // An accept or reject a kill cut short is finished or undone before
    // anything is listed or decided.
    match proposals::recover_interrupted(&home) {
        Ok(Some(done)) => eprintln!("{done}"),
        Ok(None) => {}
        Err(e) => tracing::warn!("{e}"),
    }
    match args.command {
        None => list(&home, args.json, args.all),
        Some(Sub::Show { n }) => show(&home, n, args.json),
        Some(Sub::Accept { n, seen }) => {
            match proposals::accept(&home, n, seen.as_deref(), &operator(&home), now)? {
                Accepted::Merged(p, commit) => {
                    let commit = commit.map(|c| c[..7].to_string()).unwrap_or_default();
                    outln!(
                        "proposal {n} accepted: on main as {commit} ({})",
                        p.files.join(", ")
                    );
                    Ok(Exit::Success)
                }
                Accepted::NeedsReview(p) => {
                    outln!(
                        "proposal {n} needs review: main changed {} since it was made; \
                         nothing was applied",
                        p.conflicts.join(", ")
                    );
                    outln!(
                        "merge it by hand (`git diff {}..{}` is the change) and then \
                         `hearth proposals reject {n} --reason merged-by-hand`, or reject it",
                        &p.base[..7],
                        &p.commit[..7]
                    );
                    Ok(Exit::Error)
                }
            }
        }
        Some(Sub::Reject { n, reason, seen }) => {
            let who = operator(&home);
            let p = proposals::reject(&home, n, seen.as_deref(), reason.as_deref(), &who, now)?;
            outln!("proposal {n} rejected: {}", p.title);
            Ok(Exit::Success)
        }
        Some(Sub::Requests) => list_requests(&home, args.json, true),
        Some(Sub::Approve { n, seen }) => {
            let config = Config::load(&home.config_path())?;
            let who = Identity::operator(&config.git);
            let seen = seen.as_deref();
            let r =
                hearth::tools::requested::approve(&home, &config, env.vars(), n, seen, &who, now)?;
            outln!("request {n}: {} {}", r.tool, r.status.as_str());
            outln!("{}", r.result.as_deref().unwrap_or("").trim_end());
            Ok(match r.status {
                ToolRequestState::Ran => Exit::Success,
                _ => Exit::Error,
            })
        }
        Some(Sub::Decline { n, reason, seen }) => {
            let who = operator(&home);
            let r = requests::decline(&home, n, seen.as_deref(), reason.as_deref(), &who, now)?;
            outln!("request {n} declined: {} was not run", r.tool);
            Ok(Exit::Success)
        }
    }
}

/// The requests (those waiting, or all), each with its arguments: what
/// would run is what the operator reads.
fn list_requests(home: &Home, json: bool, all: bool) -> Result<Exit, CommandError> {
    let listed: Vec<ToolRequest> = requests::list(home)?
        .into_iter()
        .filter(|r| all || r.status == ToolRequestState::Open)
        .collect();
    if json {
        return print_json(&listed);
    }
    for r in &listed {
        let verb = match r.kind {
            RequestKind::Tool => "run ",
            RequestKind::Founding => "",
        };
        outln!(
            "req {:>3}  {:<9} {verb}{} {}  asked by {}, {}",
            r.n,
            r.status.as_str(),
            r.tool,
            requests::arguments_shown(&r.arguments, 300),
            r.by,
            r.created.format("%Y-%m-%d %H:%M")
        );
        for source in r.outside.iter() {
            outln!("          after reading: {source}");
        }
        if r.status == ToolRequestState::Open {
            outln!("          version: {} (--seen acts only on it)", r.digest);
        }
        if let Some(result) = &r.result {
            let first = result.lines().next().unwrap_or("");
            outln!("          said: {first}");
        }
        if r.status == ToolRequestState::Running && r.result.is_none() {
            outln!(
                "          approved and started, never finished (cut by a kill?): whether it \
                 acted is unknown, and it never runs again; check what it does by hand"
            );
        }
        match (r.status, r.kind) {
            (ToolRequestState::Open, RequestKind::Tool) => outln!(
                "          `hearth proposals approve {}` runs it once; `decline {}` drops it",
                r.n,
                r.n
            ),
            (ToolRequestState::Open, RequestKind::Founding) => outln!(
                "          `hearth proposals approve {}` takes the handoff; `decline {}` refuses it",
                r.n,
                r.n
            ),
            _ => {}
        }
    }
    Ok(Exit::Success)
}

fn list(home: &Home, json: bool, all: bool) -> Result<Exit, CommandError> {
    let listed: Vec<Proposal> = proposals::list(home)?
        .into_iter()
        .filter(|p| all || p.status.waiting())
        .collect();
    if json {
        return print_json(&listed);
    }
    // Requests to run a tool wait beside the proposals: both are outside
    // words that need the operator.
    let waiting_requests = requests::list(home)?
        .iter()
        .any(|r| all || r.status == ToolRequestState::Open);
    if listed.is_empty() && !waiting_requests {
        outln!(
            "no proposals or requests wait for you{}",
            if all { " (none were ever made)" } else { "" }
        );
        return Ok(Exit::Success);
    }
    list_requests(home, false, all)?;
    for p in &listed {
        outln!(
            "{:>3}  {:<12} {}  by {}, {}  ({})",
            p.n,
            p.status.as_str(),
            p.title,
            p.by,
            p.created.format("%Y-%m-%d %H:%M"),
            p.files.join(", ")
        );
    }
    Ok(Exit::Success)
}

/// The lines a file's change removes, and who wrote each.
fn print_removed(f: &hearth::repo::FileDiff) -> Result<(), CommandError> {
    if f.removed_lines.is_empty() {
        return Ok(());
    }
    outln!("removed lines, and who wrote them:");
    for r in &f.removed_lines {
        let Some(o) = &r.origin else {
            outln!(
                "  {}:{}  (who wrote it is unknown)  {}",
                f.path,
                r.line,
                r.text
            );
            continue;
        };
        let who = match (o.tick, o.proposal) {
            (Some(t), _) => format!("tick {t}"),
            (None, Some(p)) => format!("proposal {p}, accepted by {}", o.author),
            (None, None) if o.author == "hearth" => "hearth".to_string(),
            (None, None) => format!("operator ({})", o.author),
        };
        outln!("  {}:{}  {who} in {}  {}", f.path, r.line, o.commit, r.text);
    }
    Ok(())
}

fn show(home: &Home, n: u64, json: bool) -> Result<Exit, CommandError> {
    let (p, diff) = proposals::show(home, n)?;
    if json {
        let files: Vec<_> = diff
            .iter()
            .map(|f| {
                serde_json::json!({
                    "path": f.path,
                    "added": f.added,
                    "removed": f.removed,
                    "patch": f.patch,
                    "removed_lines": f.removed_lines.iter().map(|r| {
                        let o = r.origin.as_ref();
                        serde_json::json!({
                            "line": r.line, "text": r.text,
                            "commit": o.map_or("", |o| o.commit.as_str()),
                            "author": o.map_or("", |o| o.author.as_str()),
                            "tick": o.and_then(|o| o.tick),
                            "proposal": o.and_then(|o| o.proposal),
                        })
                    }).collect::<Vec<_>>(),
                })
            })
            .collect();
        outln!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({"proposal": p, "files": files}))
                .expect("serialises")
        );
        return Ok(Exit::Success);
    }
    outln!("proposal {}: {} ({})", p.n, p.title, p.status.as_str());
    outln!(
        "made by {} at {}, from main at {}",
        p.by,
        p.created.format("%Y-%m-%d %H:%M UTC"),
        &p.base[..7]
    );
    outln!("why: {}", p.why.trim());
    outln!(
        "version: {} (`hearth proposals accept {} --seen VERSION` acts only on it)",
        p.commit,
        p.n
    );
    // Each source is a chain, newest hop first: where the outside words
    // were when the exchange took them, back to who wrote them.
    for source in p.outside.iter() {
        outln!("rests on outside content: {source}");
    }
    if let Some(reason) = &p.reason {
        outln!("rejected because: {reason}");
    }
    if !p.conflicts.is_empty() {
        outln!("conflicts with main in: {}", p.conflicts.join(", "));
    }
    outln!();
    for f in &diff {
        outln!("{}  +{} -{}", f.path, f.added, f.removed);
    }
    for f in &diff {
        outln!();
        outln!("--- {}", f.path);
        outln!("{}", f.patch.trim_end());
        print_removed(f)?;
    }
    Ok(Exit::Success)
}

/// A listing as pretty JSON.
fn print_json(listed: &impl serde::Serialize) -> Result<Exit, CommandError> {
    outln!(
        "{}",
        serde_json::to_string_pretty(listed).expect("serialises")
    );
    Ok(Exit::Success)
}
