//! `hearth mcp [--allow-say] [--allow-ask] [--client-is-operator] [--http ADDR]`: the agent's
//! memory as an MCP server, for Claude Code, Codex and other MCP clients:
//! on stdin/stdout, or over HTTP at `http://ADDR/mcp`.

use std::path::Path;

use hearth::config::Config;
use hearth::mcp::{self, Doors};

use super::{CommandError, Env, Exit};

#[derive(clap::Args)]
pub struct Args {
    /// Offer `say`: put a message in the inbox (a commit by the operator;
    /// its words are the client's, outside, unless --client-is-operator).
    #[arg(long)]
    allow_say: bool,
    /// Offer `ask`: run an exchange through the ask door (costs a model call).
    #[arg(long)]
    allow_ask: bool,
    /// What the client says through `say` and `ask` is yours. Without it,
    /// it is outside content (a coding agent relays pages it read): the
    /// exchange that reads it cannot change identity or run acting tools
    /// without you.
    #[arg(long)]
    client_is_operator: bool,
    /// Serve over HTTP (the Streamable HTTP transport) at ADDR, e.g.
    /// 127.0.0.1:8765, which needs HEARTH_MCP_TOKEN (a bearer token every
    /// request must carry: any account on the host can reach a loopback
    /// port); or on a Unix socket only this account can use,
    /// unix:/run/user/UID/hearth-mcp.sock (mode 0600).
    #[arg(long, value_name = "ADDR|unix:PATH")]
    http: Option<hearth::door::Listen>,
    /// Over HTTP: sessions open at once (a new one past it is answered 503).
    #[arg(long, value_name = "N", default_value_t = mcp::http::DoorLimits::default().max_sessions)]
    max_sessions: usize,
    /// Over HTTP: a session unused this many seconds is closed.
    #[arg(long, value_name = "SECONDS", default_value_t = mcp::http::DoorLimits::default().session_idle.as_secs())]
    session_idle_s: u64,
    /// Over HTTP: connections served at once (kept below half the open
    /// files limit; the others wait to be accepted).
    #[arg(long, value_name = "N", default_value_t = mcp::http::DoorLimits::default().max_connections)]
    max_connections: usize,
    /// Over HTTP: a request's headers must come within this many seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = mcp::http::DoorLimits::default().header_timeout.as_secs())]
    header_timeout_s: u64,
}

/// The process's limit on open files (its soft `RLIMIT_NOFILE`).
fn open_files_limit() -> u64 {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit(2) writes into the struct it is given.
    #[allow(unsafe_code)]
    let ok = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } == 0;
    if ok {
        limit.rlim_cur
    } else {
        1024
    }
}

pub fn run(env: &Env, flag: Option<&Path>, args: Args) -> Result<Exit, CommandError> {
    let home = env.open_home(flag)?;
    // The key is read now, from the environment the client gave the server;
    // a broken hearth.toml is reported by the tool that needs it.
    let api_key = Config::load(&home.config_path())
        .ok()
        .and_then(|config| env.api_key(&config.model));
    let over = args
        .http
        .as_ref()
        .map_or("stdio".to_string(), |a| a.url(mcp::http::PATH));
    tracing::info!(
        "serving {} over MCP on {over} (say: {}, ask: {})",
        home.root().display(),
        if args.allow_say { "open" } else { "closed" },
        if args.allow_ask { "open" } else { "closed" }
    );
    let doors = Doors {
        home,
        allow_say: args.allow_say,
        allow_ask: args.allow_ask,
        client_is_operator: args.client_is_operator,
        api_key,
        environment: env.vars().clone(),
        clock: env.clock,
    };
    let Some(addr) = args.http else {
        mcp::serve(doors)?;
        return Ok(Exit::Success);
    };
    let token = env
        .vars()
        .get(mcp::http::TOKEN_VARIABLE)
        .filter(|t| !t.is_empty())
        .cloned();
    let limits = mcp::http::DoorLimits {
        max_sessions: args.max_sessions.max(1),
        session_idle: std::time::Duration::from_secs(args.session_idle_s.max(1)),
        max_connections: args.max_connections.max(1),
        header_timeout: std::time::Duration::from_secs(args.header_timeout_s.max(1)),
    }
    .within(open_files_limit());
    mcp::http::serve(doors, &addr, token, limits, |bound| {
        // Where it listens (a port of 0 is the system's choice), for
        // whoever started it; stdout is not the protocol here.
        println!("hearth: MCP at {bound}");
    })
    .map_err(|e| {
        let hint = e.hint();
        CommandError::new(e, hint)
    })?;
    Ok(Exit::Success)
}
