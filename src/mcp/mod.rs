//! `hearth mcp`: the agent's memory for other agents, over the Model Context
//! Protocol. Claude Code, Codex and the other MCP clients start
//! `hearth mcp --home DIR` and talk to it on stdin/stdout.
//!
//! The tools are read-only by default — `recall`, `read`, `status` — and
//! each is the same code its command or the agent's own tool runs: recall's
//! answer with `path:lines@commit` citations, the agent's `read` with its
//! sandbox and paging, `hearth status`. Two doors open only when the
//! operator starts the server with them: `say` (`--allow-say`, the commit
//! `hearth say` makes) and `ask` (`--allow-ask`, an exchange through the
//! ask door, paid like `hearth ask`). What a client says through them is
//! outside content, as a stranger's message is, unless the operator
//! starts the server with `--client-is-operator`.
//!
//! [`Doors::call`] is plain synchronous code over plain values, tested
//! without a transport; [`serve`] is the protocol edge (rmcp, stdio).

pub mod guard;
pub mod http;
mod serve;
mod tools;

use std::collections::BTreeMap;

use serde_json::Value;

use crate::home::Home;

pub use serve::serve;
pub use tools::ToolDef;

/// What the server may do, and what it needs to do it.
#[derive(Debug, Clone)]
pub struct Doors {
    /// The home served.
    pub home: Home,
    /// `--allow-say`: the `say` tool is offered.
    pub allow_say: bool,
    /// `--allow-ask`: the `ask` tool is offered.
    pub allow_ask: bool,
    /// `--client-is-operator`: what the client says through `say` and
    /// `ask` is the operator's own. Without it (the default) it is outside
    /// content: a coding agent relays web pages and issues it read, so its
    /// words are a stranger's until the operator says otherwise.
    pub client_is_operator: bool,
    /// The model's API key (only `ask` uses it), read from the
    /// environment by the command.
    pub api_key: Option<String>,
    /// The environment operator tools may see during an `ask`.
    pub environment: BTreeMap<String, String>,
    /// Where "now" comes from.
    pub clock: crate::clock::Clock,
}

/// A tool call that did not succeed: the client sees it as a tool error
/// (`isError: true`) whose text says what was wrong and, when hearth
/// knows, what to do. The server goes on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpRefusal {
    /// What was wrong.
    pub message: String,
    /// What to do about it.
    pub hint: Option<String>,
}

impl McpRefusal {
    fn new(message: impl std::fmt::Display, hint: Option<String>) -> McpRefusal {
        McpRefusal {
            message: message.to_string(),
            hint,
        }
    }

    /// As the client reads it.
    pub fn text(&self) -> String {
        match &self.hint {
            Some(hint) => format!("{} (hint: {hint})", self.message),
            None => self.message.clone(),
        }
    }
}

/// What a successful call returns: text for the model, and the same as a
/// JSON value for clients that read structured results.
#[derive(Debug, Clone, PartialEq)]
pub struct McpReply {
    /// What the model reads.
    pub text: String,
    /// The same, structured.
    pub structured: Option<Value>,
}

impl Doors {
    /// The tools offered, in a stable order.
    pub fn tools(&self) -> Vec<ToolDef> {
        tools::offered(self.allow_say, self.allow_ask)
    }

    /// Runs the tool `name` with `arguments`. Never panics on bad input: a
    /// tool that does not exist, or is not opened, or arguments that do
    /// not fit, are refusals with a hint.
    pub fn call(&self, name: &str, arguments: &Value) -> Result<McpReply, McpRefusal> {
        if !self.tools().iter().any(|t| t.name == name) {
            let hint = match name {
                "say" => Some("the operator starts the server with --allow-say to open it".into()),
                "ask" => Some("the operator starts the server with --allow-ask to open it".into()),
                _ => Some(format!(
                    "the tools are: {}",
                    self.tools()
                        .iter()
                        .map(|t| t.name)
                        .collect::<Vec<_>>()
                        .join(", ")
                )),
            };
            return Err(McpRefusal::new(
                format!("there is no tool {name:?} here"),
                hint,
            ));
        }
        tools::call(self, name, arguments)
    }
}
