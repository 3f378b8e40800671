//! `hearth mcp [--allow-say] [--allow-ask]`: the agent's memory as an MCP
//! server on stdin/stdout, for Claude Code, Codex and other MCP clients.

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
}

pub fn run(env: &Env, flag: Option<&Path>, args: Args) -> Result<Exit, CommandError> {
    let home = env.open_home(flag)?;
    // The key is read now, from the environment the client gave the server;
    // a broken hearth.toml is reported by the tool that needs it.
    let api_key = Config::load(&home.config_path())
        .ok()
        .and_then(|config| env.api_key(&config.model));
    tracing::info!(
        "serving {} over MCP on stdio (say: {}, ask: {})",
        home.root().display(),
        if args.allow_say { "open" } else { "closed" },
        if args.allow_ask { "open" } else { "closed" }
    );
    mcp::serve(Doors {
        home,
        allow_say: args.allow_say,
        allow_ask: args.allow_ask,
        api_key,
        environment: env.vars().clone(),
        clock: env.clock,
    })?;
    Ok(Exit::Success)
}
