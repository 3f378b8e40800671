//! Calls of acting tools that wait for the operator (`provenance::gate`):
//! the request a tainted exchange's call becomes, and running one the
//! operator approved (`proposals::requests`). An approval runs the tool
//! that was asked for, exactly: its manifest unchanged since the call and
//! still trusted, in the workdir it was asked for if the operator still
//! allows it; once, as the operator, with the operator's environment
//! filtered by the manifest as every operator tool's is.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::operator::{OperatorTool, Runs};
use super::{ToolContext, ToolError, Workdir};
use crate::home::Home;
use crate::proposals::requests::{self, ToolRequest, ToolRequestDraft};
use crate::proposals::ProposalError;
use crate::repo::Identity;

/// Why an approved request did not run.
#[derive(Debug, thiserror::Error)]
pub enum ApproveError {
    /// The book or its commit.
    #[error(transparent)]
    Book(#[from] ProposalError),
    /// The tool is not the one that was asked for, or may not run now.
    #[error("request {n} was not run: {why}")]
    Refused {
        /// The request.
        n: u64,
        /// Why.
        why: String,
    },
}

impl ApproveError {
    /// What the operator can do about it.
    pub fn hint(&self) -> String {
        match self {
            ApproveError::Book(e) => e.hint(),
            ApproveError::Refused { n, .. } => format!(
                "it is still open: put the tool back as it was, or `hearth proposals decline {n}`"
            ),
        }
    }
}

/// Runs open request `n` once, as `who`: marked running (and committed)
/// before the tool starts, its result recorded after. Returns the request
/// as it ends, whose `result` is what the tool said. `hearth proposals
/// approve N` runs it so, in the operator's shell.
///
/// `seen` is the manifest digest the operator was shown: the request is
/// marked running only while it still asks for that one, checked under the
/// commit lock.
pub fn approve(
    home: &Home,
    config: &crate::config::Config,
    environment: &BTreeMap<String, String>,
    n: u64,
    seen: Option<&str>,
    who: &Identity,
    now: DateTime<Utc>,
) -> Result<ToolRequest, ApproveError> {
    let request = requests::open(home, n)?;
    if request.kind == requests::RequestKind::Founding {
        return Ok(requests::approve_founding(home, n, seen, who, now)?);
    }
    run_once(home, config, environment, &request, who, now, || {
        requests::begin(home, n, seen, who, now)
    })
}

/// Runs request `n`, approved from the page (`requests::approve_for_
/// supervisor`), once, as the operator who approved it: the supervisor
/// does this at its next look, so the page never runs a tool (it holds
/// the page's token; the supervisor's tools get its environment filtered
/// by their manifests, as every tool).
pub fn run_approved(
    home: &Home,
    config: &crate::config::Config,
    environment: &BTreeMap<String, String>,
    request: &ToolRequest,
    now: DateTime<Utc>,
) -> Result<ToolRequest, ApproveError> {
    let who = Identity::operator(&config.git);
    let n = request.n;
    run_once(home, config, environment, request, &who, now, || {
        requests::start_approved(home, n, &who, now)
    })
}

/// Checks that `request`'s tool is the one that was asked for, exactly,
/// and may run now; then `start` marks it running (committed) and the
/// tool runs once; what it said is recorded.
fn run_once(
    home: &Home,
    config: &crate::config::Config,
    environment: &BTreeMap<String, String>,
    request: &ToolRequest,
    who: &Identity,
    now: DateTime<Utc>,
    start: impl FnOnce() -> Result<ToolRequest, ProposalError>,
) -> Result<ToolRequest, ApproveError> {
    let n = request.n;
    let refused = |why: String| ApproveError::Refused { n, why };
    let dir = match &request.workdir {
        None => home.root().to_path_buf(),
        Some(dir) if config.collaborations.allows(std::path::Path::new(dir)) => dir.into(),
        Some(dir) => {
            return Err(refused(format!(
                "it would run in {dir}, which is no longer one of this home's \
                 [collaborations] workdirs"
            )))
        }
    };
    // Only the manifest that was asked for: another tool's MCP server is
    // not started for it.
    let (loaded, _) = super::operator::load(home, &super::BUILTINS);
    let asked: Vec<OperatorTool> = loaded
        .into_iter()
        .filter(|t| t.file == request.file)
        .collect();
    let trust = super::trust::Trust::load(home);
    let mut connected = super::mcp::connect(asked, &trust, environment, home.root());
    let Some(tool) = connected
        .tools
        .iter()
        .find(|t| t.name == request.tool && t.file == request.file)
        .cloned()
    else {
        // Say why it is not there: a server that did not start is not a
        // tool that went away.
        let problems: Vec<String> = connected.problems.iter().map(|p| p.to_string()).collect();
        return Err(refused(match problems.is_empty() {
            true => format!("{} no longer offers {}", request.file, request.tool),
            false => problems.join("; "),
        }));
    };
    if tool.digest != request.digest {
        return Err(refused(format!(
            "{} changed since the call was asked for; what would run is not what was asked",
            request.file
        )));
    }
    if !trust.trusts(&tool.file, &tool.digest) {
        return Err(refused(format!(
            "{} is not trusted (`hearth trust` after checking it)",
            tool.file
        )));
    }
    start()?;
    let output = match tool.runs {
        Runs::McpTool { .. } => connected.servers.call(&tool, &request.arguments),
        _ => tool.run(&request.arguments, environment, &dir),
    };
    let finished = match output {
        Ok(said) => requests::finish(home, n, Ok(&said), who, now)?,
        Err(e) => requests::finish(home, n, Err(&e.to_string()), who, now)?,
    };
    Ok(finished)
}

/// What a call of `tool` becomes when the gate says it waits: a request
/// (the same one again when the model repeats the call), and the text
/// the model gets instead of the tool's output. When the request cannot
/// be recorded the call is refused all the same: closed world.
pub fn request_instead(
    ctx: &mut ToolContext<'_>,
    tool: &OperatorTool,
    input: &Value,
) -> Result<String, ToolError> {
    let draft = ToolRequestDraft {
        kind: crate::proposals::requests::RequestKind::Tool,
        tool: tool.name.clone(),
        file: tool.file.clone(),
        digest: tool.digest.clone(),
        arguments: input.clone(),
        workdir: match &ctx.workdir {
            Workdir::Dir(dir) => Some(dir.display().to_string()),
            _ => None,
        },
        by: match ctx.tick {
            0 => "ask".to_string(),
            n => format!("tick {n}"),
        },
        outside: ctx.taint.outside.clone(),
    };
    let why = format!(
        "not run: this exchange read content from outside your operator ({}), and {} acts \
         outside the home, so it waits for them",
        ctx.taint.outside, tool.name
    );
    match requests::ask(ctx.home, draft, ctx.now) {
        Ok((request, _)) => {
            if !ctx.effects.requested.contains(&request.n) {
                ctx.effects.requested.push(request.n);
            }
            let n = request.n;
            Ok(format!(
                "{why}: the call is request {n} (`hearth proposals` lists it). It runs once, \
                 as the operator, only if they approve it; you will not see its output in this \
                 exchange. The same call again is the same request."
            ))
        }
        Err(e) => Err(ToolError::Refused {
            tool: tool.name.clone(),
            message: format!("{why}, and the request could not be recorded: {e}"),
        }),
    }
}
