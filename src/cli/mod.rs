//! The command line: one file per command, one `match` to dispatch. This is
//! the only place that reads the environment ([`Env`], once) and prints to
//! the user.

mod audit;
mod context;
mod error;
mod flares;
mod heal;
mod index;
mod init;
mod recall;
mod run;
mod say;
mod status;
mod tick;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use error::CommandError;
use hearth::home::{self, Home};

#[derive(Parser)]
#[command(
    name = "hearth",
    version,
    about = "Keeps a long-lived LLM agent alive in a git repository of plain files."
)]
struct Cli {
    /// The home directory (default: $HEARTH_HOME, else the current directory
    /// when it holds a hearth.toml).
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
    /// Is the supervisor running, how did the last tick end, when is the next.
    Status(status::Args),
    /// What the next tick would send the model, without sending it.
    Context(context::Args),
    /// Is the identity still loading cleanly? (drift, budget, required reads)
    Audit(audit::Args),
    /// Restore the conversation from the last good commit now (--dry-run: show what it would do).
    Heal(heal::Args),
    /// List unread flares (hearth's messages about itself), or mark them read.
    Flares(flares::Args),
    /// Search the memory: the best blocks, cited as path:lines@commit.
    Recall(recall::Args),
    /// Bring the recall index up to date (--rebuild: from scratch) and say what it holds.
    Index(index::Args),
}

/// The environment, read once at start-up.
pub struct Env {
    pub hearth_home: Option<PathBuf>,
    pub cwd: PathBuf,
    pub exe: PathBuf,
    pub notify_socket: Option<String>,
    pub watchdog_usec: Option<String>,
    pub watchdog_pid: Option<String>,
    /// `HEARTH_TEST_TICK_DELAY=MS[@TICK]`: a test hook that pauses a tick
    /// after its write-ahead (only tick TICK, when given).
    pub test_tick_delay: Option<String>,
    /// `HEARTH_TEST_FAIL=CLASS[@TICK,…]`: a test hook that makes ticks fail
    /// with a chosen class (contract-violation, coverage-gap, …).
    pub test_fail: Option<String>,
}

impl Env {
    fn read() -> Env {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        Env {
            hearth_home: std::env::var_os("HEARTH_HOME")
                .filter(|v| !v.is_empty())
                .map(PathBuf::from),
            cwd: std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")),
            exe: std::env::current_exe().unwrap_or_else(|_| PathBuf::from("hearth")),
            notify_socket: var("NOTIFY_SOCKET"),
            watchdog_usec: var("WATCHDOG_USEC"),
            watchdog_pid: var("WATCHDOG_PID"),
            test_tick_delay: var("HEARTH_TEST_TICK_DELAY"),
            test_fail: var("HEARTH_TEST_FAIL"),
        }
    }

    /// The home directory the user means (it may not exist yet).
    fn home_dir(&self, flag: Option<&Path>) -> Result<PathBuf, CommandError> {
        Ok(home::resolve(flag, self.hearth_home.as_deref(), &self.cwd)?)
    }

    /// An existing home.
    fn open_home(&self, flag: Option<&Path>) -> Result<Home, CommandError> {
        Ok(Home::open(&self.home_dir(flag)?)?)
    }
}

pub fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logging();
    let env = Env::read();
    let home = cli.home.as_deref();
    let result = match cli.command {
        Command::Init(args) => init::run(&env, home, args),
        Command::Run(args) => run::run(&env, home, args),
        Command::Tick(args) => tick::run(&env, home, args),
        Command::Say(args) => say::run(&env, home, args),
        Command::Status(args) => status::run(&env, home, args),
        Command::Context(args) => context::run(&env, home, args),
        Command::Audit(args) => audit::run(&env, home, args),
        Command::Heal(args) => heal::run(&env, home, args),
        Command::Flares(args) => flares::run(&env, home, args),
        Command::Recall(args) => recall::run(&env, home, args),
        Command::Index(args) => index::run(&env, home, args),
    };
    match result {
        Ok(code) => code,
        Err(e) => e.print(),
    }
}

/// Diagnostics go to stderr (journald under systemd), level from RUST_LOG.
fn init_logging() {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_target(false)
        .init();
}
