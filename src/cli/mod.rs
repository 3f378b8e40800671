//! The command line: one file per command, one `match` to dispatch. This is
//! the only place that reads the environment ([`Env`], once), takes the
//! time from a clock, and prints to the user.

/// `println!` for command output. A closed stdout (`hearth status | head
/// -1`) becomes an error that ends the command quietly with success,
/// where `println!` would panic.
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        writeln!(std::io::stdout().lock(), $($arg)*)?
    }};
}

mod ask;
mod audit;
mod brake;
mod collab;
mod completions;
mod consolidate;
mod context;
mod day;
mod env;
mod error;
mod flares;
mod heal;
mod index;
mod init;
mod jobs;
mod logging;
mod mail;
mod mcp;
mod metrics;
mod notify;
mod outbox;
mod proposals;
mod recall;
mod run;
mod say;
mod status;
mod tick;
mod trust;
mod vouch;
mod web;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use env::Env;
use error::{CommandError, Exit};

#[derive(Parser)]
#[command(
    name = "hearth",
    version,
    about = "Keeps a long-lived LLM agent alive in a git repository of plain files."
)]
pub struct Cli {
    /// The home directory (default: $HEARTH_HOME, else the nearest directory
    /// from the current one upward that holds a hearth.toml, as git finds its
    /// repository).
    #[arg(long, global = true, value_name = "DIR")]
    home: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Create a home (git repository, templates, first commit), or complete one.
    Init(init::Args),
    /// Run the supervisor: a tick every interval, or at once on an inbox message.
    Run(run::Args),
    /// Run one tick now (the supervisor must not be running).
    Tick(tick::Args),
    /// Put a message in the agent's inbox.
    Say(say::Args),
    /// Mail (`[mail]`): send a reply the agent wrote to someone not proven to be you.
    Mail(mail::Args),
    /// Is the supervisor running, how did the last tick end, when is the next.
    Status(status::Args),
    /// The home's metrics in the Prometheus text format (ticks, tokens, spend, health).
    Metrics(metrics::Args),
    /// What the next tick would send the model, without sending it.
    Context(context::Args),
    /// Is the identity still loading cleanly? (drift, budget, required reads)
    Audit(audit::Args),
    /// Restore the conversation from the last good commit now (--dry-run: show what it would do).
    Heal(heal::Args),
    /// List unread flares (hearth's messages about itself), or mark them read.
    Flares(flares::Args),
    /// Ask the agent a question from the shell; the answer streams.
    Ask(ask::Args),
    /// The brake: required reads, its report, the operator's override.
    Brake(brake::Args),
    /// Collaborations with other agents on this host: list, show, and change their status.
    Collab(collab::Args),
    /// Approve the commands this home holds (tools/*.toml, jobs/*.toml, [flares] exec) as they are now.
    Trust(trust::Args),
    /// What the agent did today (or --since): messages answered, files written, proposals, flares, spend.
    Day(day::Args),
    /// Vouch for outside lines you have read (PATH, PATH:N or PATH:N-M): their words become yours.
    Vouch(vouch::Args),
    /// List what the agent sent you (newest first, unread by default), or mark it read.
    Outbox(outbox::Args),
    /// Ask for a consolidation of the identity memory at the next idle tick (a proposal).
    Consolidate(consolidate::Args),
    /// Work at set times (jobs/NAME.toml): list them, run one now, show one's runs.
    Jobs(jobs::Args),
    /// Reach the operator off the box: `test` sends a test notice to every [notify] target.
    Notify(notify::Args),
    /// Changes to memory that wait for you: list, show, accept, reject.
    Proposals(proposals::Args),
    /// Search the memory: the best blocks, cited as path:lines@commit.
    Recall(recall::Args),
    /// Bring the recall index up to date (--rebuild: from scratch) and say what it holds.
    Index(index::Args),
    /// Serve the memory to MCP clients (Claude Code, Codex…) on stdio: recall, read, status.
    Mcp(mcp::Args),
    /// The operator's page, read-only: today, incidents, proposals, ticks (needs HEARTH_WEB_TOKEN over TCP).
    Web(web::Args),
    /// Print shell completions (bash, zsh, fish, …) or the man page (`man`).
    Completions(completions::Args),
}

pub fn main() -> ExitCode {
    // Before the environment (the key, the doors' tokens) is read: no
    // process this one starts may read them from /proc/PID/environ.
    hearth::process::guard_secrets();
    let cli = Cli::parse();
    let env = match Env::read() {
        Ok(env) => env,
        Err(e) => return e.print(),
    };
    logging::init(env.journal_stream.as_deref());
    if let Some(bwrap) = env.find_program("bwrap") {
        hearth::jail::use_program(bwrap);
    }
    let home = cli.home.as_deref();
    let result = match cli.command {
        Command::Init(args) => init::run(&env, home, args),
        Command::Run(args) => run::run(&env, home, args),
        Command::Tick(args) => tick::run(&env, home, args),
        Command::Say(args) => say::run(&env, home, args),
        Command::Mail(args) => mail::run(&env, home, args),
        Command::Status(args) => status::run(&env, home, args),
        Command::Metrics(args) => metrics::run(&env, home, args),
        Command::Context(args) => context::run(&env, home, args),
        Command::Audit(args) => audit::run(&env, home, args),
        Command::Heal(args) => heal::run(&env, home, args),
        Command::Flares(args) => flares::run(&env, home, args),
        Command::Brake(args) => brake::run(&env, home, args),
        Command::Ask(args) => ask::run(&env, home, args),
        Command::Trust(args) => trust::run(&env, home, args),
        Command::Vouch(args) => vouch::run(&env, home, args),
        Command::Day(args) => day::run(&env, home, args),
        Command::Collab(args) => collab::run(&env, home, args),
        Command::Outbox(args) => outbox::run(&env, home, args),
        Command::Consolidate(args) => consolidate::run(&env, home, args),
        Command::Notify(args) => notify::run(&env, home, args),
        Command::Jobs(args) => jobs::run(&env, home, args),
        Command::Proposals(args) => proposals::run(&env, home, args),
        Command::Recall(args) => recall::run(&env, home, args),
        Command::Index(args) => index::run(&env, home, args),
        Command::Mcp(args) => mcp::run(&env, home, args),
        Command::Web(args) => web::run(&env, home, args),
        Command::Completions(args) => completions::run(args),
    };
    match result {
        Ok(exit) => exit.into(),
        Err(e) => e.print(),
    }
}
