//! `hearth mcp [--allow-say] [--allow-ask] [--http ADDR]`: the agent's
//! memory as an MCP server, for Claude Code, Codex and other MCP clients:
//! on stdin/stdout, or over HTTP at `http://ADDR/mcp`.

use std::path::Path;

use hearth::config::Config;
use hearth::mcp::{self, Doors};

use super::{CommandError, Env, Exit};

#[derive(clap::Args)]
pub struct Args {
    /// Offer `say`: put a message in the inbox, committed as the operator.
    #[arg(long)]
    allow_say: bool,
    /// Offer `ask`: run an exchange through the ask door (costs a model call).
    #[arg(long)]
    allow_ask: bool,
    /// Serve over HTTP (the Streamable HTTP transport) at ADDR, e.g.
    /// 127.0.0.1:8765. Any address but loopback needs HEARTH_MCP_TOKEN,
    /// a bearer token every request must carry.
    #[arg(long, value_name = "ADDR")]
    http: Option<std::net::SocketAddr>,
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
        .map_or("stdio".to_string(), |a| format!("http://{a}/mcp"));
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
    mcp::http::serve(doors, addr, token, |bound| {
        // The address bound (a port of 0 is the system's choice), for
        // whoever started it; stdout is not the protocol here.
        println!("hearth: MCP at http://{bound}{}", mcp::http::PATH);
    })
    .map_err(|e| {
        let hint = e.hint();
        CommandError::new(e, hint)
    })?;
    Ok(Exit::Success)
}
