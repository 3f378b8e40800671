//! The tools the model may call, and the one function that dispatches them.
//!
//! Built-ins (DESIGN 8): `recall`, `read` (memory/, state/, outbox/, collaborations/), `write`, `append`,
//! `edit` (memory/ only), `journal`, `send`, `sleep`. Every path goes through
//! [`sandbox::resolve`]. What a tool did that the supervisor must know (files
//! written, messages sent, a requested sleep) is collected in [`Effects`] and
//! handed back through the tick report, so the tick's commit holds exactly the
//! agent's own changes.

mod builtins;
pub mod handoff;
pub mod mcp;
pub mod offered;
pub mod operator;
pub mod requested;
pub mod sandbox;
pub mod staging;
pub mod trust;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use std::collections::BTreeMap;

use crate::home::Home;
use crate::model::ToolSpec;
use crate::provenance::Shown;
pub use offered::Offered;

pub use crate::process::{passable, NEVER_PASSED};
use operator::OperatorTool;
use trust::Trust;

/// A tool call that did not succeed. The variant decides the tick's failure
/// class (DESIGN 7): a tool that does not exist is a coverage gap, bad
/// arguments a contract violation, a refusal or failure a dispatch miss.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolError {
    /// No tool has this name.
    #[error("there is no tool named {0}")]
    Unknown(String),
    /// The arguments do not fit the tool's schema.
    #[error("{tool}: invalid arguments: {message}")]
    BadInput {
        /// The tool.
        tool: String,
        /// What was wrong.
        message: String,
    },
    /// The sandbox or a limit refused the call.
    #[error("{tool}: {message}")]
    Refused {
        /// The tool.
        tool: String,
        /// What was wrong.
        message: String,
    },
    /// The call ran and failed.
    #[error("{tool}: {message}")]
    Failed {
        /// The tool.
        tool: String,
        /// What was wrong.
        message: String,
    },
}

/// What the tools changed during one tick.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Effects {
    /// Files the agent wrote, relative to the home (memory/ and outbox/).
    pub touched: Vec<String>,
    /// Outbox messages sent.
    pub sent: Vec<String>,
    /// When the agent asked to be woken next (capped by `[tick] max_sleep_h`).
    pub sleep_until: Option<DateTime<Utc>>,
    /// Handoffs refused because they repeated an earlier round: a loop
    /// between agents, which makes the tick a quiet failure (DESIGN 7).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub loops: Vec<String>,
    /// Where the outside content this exchange read came from (`taint`):
    /// the ledger line carries it.
    #[serde(
        default,
        skip_serializing_if = "crate::outside::Outside::is_empty",
        alias = "tainted_by"
    )]
    pub outside: crate::outside::Outside,
    /// The proposal this exchange's identity writes became.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proposal: Option<u64>,
    /// The requests its calls of acting tools became (`requested`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub requested: Vec<u64>,
}

impl Effects {
    fn touch(&mut self, rel: String) {
        if !self.touched.contains(&rel) {
            self.touched.push(rel);
        }
    }
}

/// Names a file about to be written (an ask's journal); when that cannot
/// be written, the write is refused.
pub type WriteAhead<'a> = dyn Fn(&str) -> Result<(), crate::atomic::WriteError> + 'a;

/// What a tool call may see.
pub struct ToolContext<'a> {
    /// The home.
    pub home: &'a Home,
    /// The tick the calls belong to.
    pub tick: u64,
    /// The tick's "now".
    pub now: DateTime<Utc>,
    /// `[tick] max_sleep_h`.
    pub max_sleep_h: u64,
    /// How many blocks `recall` returns when the model does not say.
    pub recall_results: usize,
    /// `[tools] max_write_bytes`.
    pub max_write_bytes: u64,
    /// What the calls changed so far.
    pub effects: Effects,
    /// The operator's tools (`tools/*.toml`) that parse.
    pub operator: Vec<OperatorTool>,
    /// What the operator trusted to run.
    pub trust: Trust,
    /// The supervisor's environment, from which an operator tool gets the
    /// variables its manifest names (and nothing else).
    pub environment: BTreeMap<String, String>,
    /// Who this agent is among its peers, and the operator's limits on
    /// collaborations (`handoff`).
    pub peering: Peering,
    /// Where operator tools run this tick.
    pub workdir: Workdir,
    /// Told each memory file a tool is about to write, before it writes
    /// it: an ask names it in its journal, so a `kill -9` a moment after
    /// the write still leaves the file the ask's. A failure refuses the
    /// write. A tick needs none (its report and the supervisor's commit
    /// cover it).
    pub write_ahead: Option<&'a WriteAhead<'a>>,
    /// The MCP servers whose tools are among `operator`, running for this
    /// exchange (none unless a door connected them: [`mcp::connect`]).
    pub mcp: mcp::Servers,
    /// What this exchange read from outside, and its proposal ([`crate::provenance`]).
    pub taint: crate::provenance::Taint,
    /// The judge of what it reads, opened once for the exchange.
    pub origins: crate::provenance::OriginJudge,
}

impl<'a> ToolContext<'a> {
    /// The context of one exchange's calls, with `config`'s limits: no
    /// peers, the home as workdir, nothing named ahead of a write, no
    /// environment for operator tools. A door sets what differs.
    pub fn new(
        home: &'a Home,
        config: &crate::config::Config,
        tick: u64,
        now: DateTime<Utc>,
        operator: Vec<OperatorTool>,
        trust: Trust,
    ) -> ToolContext<'a> {
        ToolContext {
            home,
            tick,
            now,
            max_sleep_h: config.tick.max_sleep_h,
            recall_results: config.recall.results,
            max_write_bytes: config.tools.max_write_bytes,
            effects: Effects::default(),
            operator,
            trust,
            environment: BTreeMap::new(),
            peering: Peering::default(),
            workdir: Workdir::Home,
            write_ahead: None,
            mcp: mcp::Servers::default(),
            taint: crate::provenance::Taint {
                must_read: config.brake.must_read.clone(),
                vouched: crate::provenance::vouch::Vouched::load_or_none(home),
                ..crate::provenance::Taint::default()
            },
            origins: crate::provenance::OriginJudge::open(home),
        }
    }

    /// Names `rel` as written by this exchange, before it is written.
    fn ahead(&mut self, tool: &str, rel: &str) -> Result<(), ToolError> {
        if let Some(write_ahead) = self.write_ahead {
            write_ahead(rel).map_err(|why| ToolError::Failed {
                tool: tool.into(),
                message: format!("{rel} was not written: {why}"),
            })?;
        }
        Ok(())
    }
}

/// Held, shared, by each tool call while it runs (and while its door
/// records what it did); [`stop_calls`] takes it alone.
static RUNNING: std::sync::RwLock<()> = std::sync::RwLock::new(());

/// Held around one tool call and what its door records after it.
pub fn call_running() -> std::sync::RwLockReadGuard<'static, ()> {
    RUNNING.read().unwrap_or_else(|e| e.into_inner())
}

/// Waits for the tool call in progress (if one is) and keeps every later
/// one from starting, for as long as the guard lives: an ask's signal
/// handler holds it while it commits what the calls wrote, then exits, so
/// no write lands after that commit.
pub fn stop_calls() -> std::sync::RwLockWriteGuard<'static, ()> {
    RUNNING.write().unwrap_or_else(|e| e.into_inner())
}

/// Where a tick's operator tools run (DESIGN 14): where work happens
/// travels with the collaboration whose handoffs the tick reads, never
/// through a global setting.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Workdir {
    /// The home (no collaboration, or one without a workdir).
    #[default]
    Home,
    /// The collaboration's workdir, from the operator's allow-list.
    Dir(std::path::PathBuf),
    /// The collaboration names a workdir this home does not allow: its
    /// tools are refused, saying why.
    Refused(String),
}

impl Workdir {
    /// Where collaboration `slug`'s tools run in this home.
    pub fn for_collaboration(
        home: &Home,
        config: &crate::config::Config,
        slug: Option<&str>,
    ) -> Workdir {
        let Some(slug) = slug else {
            return Workdir::Home;
        };
        match crate::collab::store::load(home, slug) {
            Ok(Some(c)) => match c.workdir {
                None => Workdir::Home,
                Some(dir) if config.collaborations.allows(std::path::Path::new(&dir)) => {
                    Workdir::Dir(dir.into())
                }
                Some(dir) => Workdir::Refused(format!(
                    "collaboration {slug} works in {dir}, which is not one of this home's \
                     [collaborations] workdirs; tools do not run there until the operator adds it"
                )),
            },
            Ok(None) => Workdir::Home,
            Err(e) => Workdir::Refused(e.to_string()),
        }
    }
}

/// What `handoff` needs: this agent's name, its `[peers]`, and
/// `[collaborations]`.
#[derive(Debug, Clone, Default)]
pub struct Peering {
    /// This agent's name (its home directory's).
    pub me: String,
    /// `[peers]`.
    pub peers: crate::config::collab::Peers,
    /// `[collaborations]`.
    pub settings: crate::config::collab::CollaborationsConfig,
}

impl Peering {
    /// From the home and its configuration.
    pub fn of(home: &Home, config: &crate::config::Config) -> Peering {
        Peering {
            me: crate::collab::own_name(home),
            peers: config.peers.clone(),
            settings: config.collaborations.clone(),
        }
    }
}

/// The names of the built-in tools (`handoff` is offered only to an agent
/// with peers).
pub const BUILTINS: [&str; 9] = [
    "recall", "read", "write", "append", "edit", "journal", "send", "sleep", "handoff",
];

/// The built-in tools, then the operator's (by name), as the model sees
/// them. Stable order and text, so the tool list is byte-stable from tick
/// to tick (cacheable). `handoff` is among them when the agent has peers,
/// naming them and the operator's workdirs (they change only with
/// `hearth.toml`).
pub fn specs(operator: &[OperatorTool], peering: Option<&Peering>) -> Vec<ToolSpec> {
    let mut specs = builtins::specs();
    specs.retain(|s| s.name != "handoff");
    if let Some(peering) = peering.filter(|p| !p.peers.is_empty()) {
        specs.push(builtins::handoff_spec(peering));
    }
    specs.extend(
        operator
            .iter()
            .filter(|t| t.runs != operator::Runs::McpServer)
            .map(OperatorTool::spec),
    );
    specs
}

/// Whether a call of `name` writes (the brake's question): the writing
/// built-ins, and operator tools not declared `read_only`.
pub fn writes(operator: &[OperatorTool], name: &str) -> bool {
    ["write", "append", "edit", "journal"].contains(&name)
        || operator.iter().any(|t| t.name == name && !t.read_only)
}

/// Runs one tool call and returns the text the model gets back.
pub fn dispatch(ctx: &mut ToolContext<'_>, name: &str, input: &Value) -> Result<String, ToolError> {
    let Some(tool) = ctx.operator.iter().find(|t| t.name == name) else {
        let shown = builtins::dispatch(ctx, name, input)?;
        return Ok(ctx.taint.show(shown));
    };
    if !ctx.trust.trusts(&tool.file, &tool.digest) {
        return Err(ToolError::Refused {
            tool: name.into(),
            message: format!(
                "not run: {} changed since the operator trusted it (or was never trusted); \
                 the operator runs `hearth trust` after checking it",
                tool.file
            ),
        });
    }
    if !input.is_object() {
        return Err(ToolError::BadInput {
            tool: name.into(),
            message: "arguments must be a JSON object".into(),
        });
    }
    let dir = match &ctx.workdir {
        Workdir::Home => ctx.home.root(),
        Workdir::Dir(dir) => dir.as_path(),
        Workdir::Refused(why) => {
            return Err(ToolError::Refused {
                tool: name.into(),
                message: why.clone(),
            })
        }
    };
    let tool = tool.clone();
    // Outside words do not act: in a tainted exchange a tool that acts
    // outside the home waits for the operator.
    let call =
        crate::provenance::gate::tool_call(ctx.taint.tainted(), !tool.read_only, tool.when_outside);
    if call == crate::provenance::gate::CallGate::Request {
        return requested::request_instead(ctx, &tool, input);
    }
    let output = match tool.runs {
        operator::Runs::McpTool { .. } => ctx.mcp.call(&tool, input),
        _ => tool.run(input, &ctx.environment, dir),
    };
    if !tool.untrusted {
        return output;
    }
    // What it said, error or not, reaches the model as outside words; its
    // output fenced and labelled as quoted data.
    let source = format!("the output of {}", tool.name);
    match output {
        Ok(said) => Ok(ctx.taint.show(Shown::outside(&said, source))),
        Err(e) => {
            ctx.taint.read(source);
            Err(e)
        }
    }
}
