//! Operator tools (DESIGN 8): a file `tools/NAME.toml` declares a tool the
//! model may call — a command (an argv list, never a shell string), a JSON
//! schema for its arguments, a timeout, whether it only reads, the
//! environment variables it may see, and how much output comes back.
//!
//! ```toml
//! name = "weather"
//! description = "Today's forecast for a city."
//! command = ["/usr/local/bin/forecast", "--json"]
//! timeout_s = 10
//! read_only = true
//! env = ["PATH", "FORECAST_TOKEN"]
//! max_output_bytes = 16384
//!
//! [parameters]
//! type = "object"
//! required = ["city"]
//!
//! [parameters.properties.city]
//! type = "string"
//! ```
//!
//! The command runs in the home, in its own process group (killed whole at
//! the timeout), with only the listed variables of the supervisor's
//! environment (so an API key never reaches a tool unless named), its
//! arguments as JSON on stdin and as `HEARTH_ARG_<NAME>` variables. It runs
//! only while its manifest is the one the operator trusted ([`super::trust`]).
//!
//! A manifest may name an MCP server instead of a command (`mcp = [argv]`,
//! no `command`): its tools are offered as `NAME__TOOL`, with the schemas
//! the server gives (the `mcp` module of `tools`).
//!
//! ```toml
//! name = "clock"
//! mcp = ["/usr/local/bin/mcp-server-time", "--local-timezone", "UTC"]
//! env = ["PATH"]
//! timeout_s = 10
//! ```

use std::collections::BTreeMap;
use std::io::Write;
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::Value;

use super::trust::digest;
use super::ToolError;
use crate::home::layout::rel;
use crate::home::Home;
use crate::model::ToolSpec;
use crate::provenance::gate::WhenOutside;

/// How much of stderr a failure quotes.
const STDERR_TAIL: usize = 2000;

/// A manifest as the operator writes it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Manifest {
    name: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    command: Vec<String>,
    #[serde(default)]
    mcp: Vec<String>,
    #[serde(default = "default_timeout")]
    timeout_s: u64,
    #[serde(default)]
    read_only: bool,
    #[serde(default)]
    untrusted: Option<bool>,
    #[serde(default)]
    when_outside: WhenOutside,
    #[serde(default)]
    env: Vec<String>,
    #[serde(default)]
    sandbox: Option<String>,
    #[serde(default)]
    network: bool,
    #[serde(default)]
    write: Vec<String>,
    #[serde(default)]
    read: Vec<String>,
    #[serde(default = "default_output")]
    max_output_bytes: usize,
    #[serde(default)]
    parameters: Option<toml::Table>,
}

fn default_timeout() -> u64 {
    10
}

fn default_output() -> usize {
    16 * 1024
}

/// How an operator tool runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Runs {
    /// Its command, once per call.
    Command,
    /// A manifest that names an MCP server (`command` is the server's
    /// argv), before the server has said what tools it has: never offered
    /// as such: `mcp::connect` puts the server's tools in its place.
    McpServer,
    /// One tool of an MCP server.
    McpTool {
        /// The manifest's name (the server's key among the running ones).
        server: String,
        /// The server's own name for the tool.
        tool: String,
    },
}

/// One operator tool, ready to offer and run.
#[derive(Debug, Clone, PartialEq)]
pub struct OperatorTool {
    /// Its name, as the model calls it.
    pub name: String,
    /// What it does, for the model.
    pub description: String,
    /// The JSON Schema of its arguments.
    pub parameters: Value,
    /// The argv (of the command, or of the MCP server).
    pub command: Vec<String>,
    /// A command, or an MCP server or one of its tools.
    pub runs: Runs,
    /// The time limit.
    pub timeout: Duration,
    /// Whether it only reads (the brake never stops it).
    pub read_only: bool,
    /// Whether its output is content from outside, which taints the
    /// exchange that reads it (`taint`): what the manifest says
    /// (`untrusted = false` is the operator vouching for it), else yes for
    /// a command, and for an MCP tool unless the server says it is not
    /// open-world (`openWorldHint: false`).
    pub untrusted: bool,
    /// `untrusted` as the manifest wrote it, if it did.
    pub manifest_untrusted: Option<bool>,
    /// What a call does in an exchange that read outside content, when
    /// the tool acts (not `read_only`): wait for the operator as a
    /// request (the default), or run (`when_outside = "run"`).
    pub when_outside: WhenOutside,
    /// The variables it may see.
    pub env: Vec<String>,
    /// What its process may reach (`jail`): the kernel's sandbox with what
    /// the manifest grants (`network`, `write`), or none (`sandbox =
    /// "none"`, the operator's choice, trusted with the manifest).
    pub confinement: crate::jail::Confinement,
    /// The most output the model gets back.
    pub max_output_bytes: usize,
    /// Its manifest, relative to the home.
    pub file: String,
    /// The manifest's digest, for trust.
    pub digest: String,
}

impl OperatorTool {
    /// Where its process runs, as `hearth audit` lists it.
    pub fn sandbox_said(&self) -> &'static str {
        match &self.confinement {
            crate::jail::Confinement::Unsandboxed => "UNSANDBOXED (sandbox = \"none\")",
            crate::jail::Confinement::Sandboxed { network: true, .. } => "sandboxed, with network",
            crate::jail::Confinement::Sandboxed { .. } => "sandboxed",
        }
    }

    /// Its trust as `hearth audit` lists it: whether its output is
    /// outside, and what decided.
    pub fn trust_said(&self) -> &'static str {
        match (self.untrusted, self.manifest_untrusted, &self.runs) {
            (false, Some(false), _) => "output trusted (the manifest says untrusted = false)",
            (true, Some(true), _) => "output is outside (the manifest says untrusted = true)",
            (_, None, Runs::McpServer) => {
                "each tool's output is outside unless the MCP server says openWorldHint: false \
                 (untrusted = false in the manifest vouches for all of them)"
            }
            (false, _, Runs::McpTool { .. }) => {
                "output trusted (the MCP server says openWorldHint: false)"
            }
            (_, _, Runs::McpTool { .. }) => {
                "output is outside (open-world: the MCP server does not say openWorldHint: false; \
                 untrusted = false in the manifest vouches for it)"
            }
            _ => {
                "output is outside (no untrusted key; untrusted = false in the manifest vouches \
                 for it)"
            }
        }
    }
}

/// A manifest that could not be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManifestProblem {
    /// The file, relative to the home.
    pub file: String,
    /// The 1-based line, when known.
    pub line: Option<usize>,
    /// What is wrong.
    pub message: String,
}

impl std::fmt::Display for ManifestProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{line}: {}", self.file, self.message),
            None => write!(f, "{}: {}", self.file, self.message),
        }
    }
}

/// The largest manifest read: a command, a schema and a description fit
/// in far less.
const MAX_MANIFEST_BYTES: u64 = 1024 * 1024;

/// Every `tools/*.toml`: the tools that parse, sorted by name, and the
/// problems of those that do not (the tool is then absent: a call to it
/// is a coverage gap).
pub fn load(home: &Home, builtins: &[&str]) -> (Vec<OperatorTool>, Vec<ManifestProblem>) {
    let mut tools: Vec<OperatorTool> = Vec::new();
    let mut problems = Vec::new();
    let mut files: Vec<_> = std::fs::read_dir(home.path(rel::TOOLS))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    for path in files {
        let file = home.relative(&path);
        let problem = |line, message: String| ManifestProblem {
            file: file.clone(),
            line,
            message,
        };
        // A regular file of bounded size, or named and skipped: a FIFO
        // here blocked every tick until its time limit.
        let bytes = match crate::bounded::read(&path, MAX_MANIFEST_BYTES) {
            Ok(b) => b,
            Err(e) => {
                problems.push(problem(None, e.to_string()));
                continue;
            }
        };
        let text = String::from_utf8_lossy(&bytes);
        let manifest: Manifest = match toml::from_str(&text) {
            Ok(m) => m,
            Err(e) => {
                let start = e.span().map(|s| s.start.min(text.len()));
                let line = start.map(|s| text[..s].matches('\n').count() + 1);
                let key = start.and_then(|s| key_of_line(&text, s));
                let mut message = e.message().trim().to_string();
                if let Some(hint) = key.and_then(|k| list_hint(k, &message)) {
                    message = format!("{message}: {hint}");
                }
                problems.push(problem(line, message));
                continue;
            }
        };
        let confinement = match confinement_of(home, &manifest) {
            Ok(confinement) => confinement,
            Err(why) => {
                let line = crate::config::line_of_key(&text, "", why.key());
                problems.push(problem(line, why.to_string()));
                continue;
            }
        };
        match check(manifest, builtins, &tools) {
            Ok(m) => tools.push(tool_of(m, confinement, file, digest(&bytes))),
            Err(unusable) => problems.push(problem(
                crate::config::line_of_key(&text, "", unusable.key()),
                unusable.to_string(),
            )),
        }
    }
    tools.sort_by(|a, b| a.name.cmp(&b.name));
    (tools, problems)
}

/// What the manifest's sandbox keys give the process of its tool.
fn confinement_of(
    home: &Home,
    m: &Manifest,
) -> Result<crate::jail::Confinement, crate::jail::KeysRefused> {
    let keys = crate::jail::Keys {
        sandbox: m.sandbox.as_deref(),
        network: m.network,
        write: &m.write,
        read: &m.read,
    };
    crate::jail::Confinement::from_keys(home.root(), &format!("tool-{}", m.name), &keys)
}

/// The tool a checked manifest `m` (of `file`, whose bytes digest to
/// `digest`) describes.
fn tool_of(
    m: Manifest,
    confinement: crate::jail::Confinement,
    file: String,
    digest: String,
) -> OperatorTool {
    OperatorTool {
        confinement,
        runs: if m.mcp.is_empty() {
            Runs::Command
        } else {
            Runs::McpServer
        },
        name: m.name,
        description: m.description,
        parameters: m
            .parameters
            .map(|t| serde_json::to_value(t).unwrap_or(Value::Null))
            .unwrap_or_else(|| serde_json::json!({"type": "object", "properties": {}})),
        command: if m.mcp.is_empty() { m.command } else { m.mcp },
        timeout: Duration::from_secs(m.timeout_s),
        read_only: m.read_only,
        // Closed world: output nobody vouched for is outside.
        untrusted: m.untrusted.unwrap_or(true),
        manifest_untrusted: m.untrusted,
        when_outside: m.when_outside,
        env: m.env,
        max_output_bytes: m.max_output_bytes,
        digest,
        file,
    }
}

/// Why a manifest that parses cannot be used, with the key to blame.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum Unusable {
    #[error("name {0:?} must be 1–64 letters, digits, `_` or `-`")]
    Name(String),
    #[error("a tool named {0:?} exists already")]
    Taken(String),
    #[error("name a command or an MCP server (mcp = [...]), not both")]
    Both,
    #[error("mcp must name the server's program: mcp = [\"/path/to/server\", \"arg\"]")]
    NoServer,
    #[error("an MCP server gives its tools' schemas: leave [parameters] out")]
    ServerParameters,
    #[error(
        "command must name a program: command = [\"/path/to/program\", \"arg\"] \
         (or mcp = [...] for an MCP server)"
    )]
    NoCommand,
    #[error("description must say what the tool does, for the model")]
    NoDescription,
    #[error("timeout_s must be at least 1")]
    NoTime,
    #[error("[parameters] must be a JSON schema with type = \"object\"")]
    NotAnObject,
}

impl Unusable {
    /// The manifest's key the problem is at.
    fn key(&self) -> &'static str {
        match self {
            Unusable::Name(_) | Unusable::Taken(_) => "name",
            Unusable::Both | Unusable::NoServer => "mcp",
            Unusable::ServerParameters | Unusable::NotAnObject => "parameters",
            Unusable::NoCommand => "command",
            Unusable::NoDescription => "description",
            Unusable::NoTime => "timeout_s",
        }
    }
}

fn check(m: Manifest, builtins: &[&str], seen: &[OperatorTool]) -> Result<Manifest, Unusable> {
    let valid_name = !m.name.is_empty()
        && m.name.len() <= 64
        && m.name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if !valid_name {
        return Err(Unusable::Name(m.name));
    }
    if builtins.contains(&m.name.as_str()) || seen.iter().any(|t| t.name == m.name) {
        return Err(Unusable::Taken(m.name));
    }
    if !m.mcp.is_empty() {
        if !m.command.is_empty() {
            return Err(Unusable::Both);
        }
        if m.mcp[0].trim().is_empty() {
            return Err(Unusable::NoServer);
        }
        if m.parameters.is_some() {
            return Err(Unusable::ServerParameters);
        }
    } else if m.command.is_empty() || m.command[0].trim().is_empty() {
        return Err(Unusable::NoCommand);
    } else if m.description.trim().is_empty() {
        return Err(Unusable::NoDescription);
    }
    if m.timeout_s == 0 {
        return Err(Unusable::NoTime);
    }
    if m.parameters
        .as_ref()
        .is_some_and(|p| p.get("type").and_then(|t| t.as_str()) != Some("object"))
    {
        return Err(Unusable::NotAnObject);
    }
    Ok(m)
}

impl OperatorTool {
    /// As the model sees it.
    pub fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: self.name.clone(),
            description: self.description.clone(),
            input_schema: self.parameters.clone(),
        }
    }

    /// Runs the command with `input` in `dir` (the home, or the
    /// collaboration's workdir, also given as `HEARTH_WORKDIR`) and returns
    /// its output, bounded. A non-zero exit or a timeout is a failure
    /// carrying the exit code (or the limit) and the tail of stderr.
    pub fn run(
        &self,
        input: &Value,
        environment: &BTreeMap<String, String>,
        dir: &std::path::Path,
    ) -> Result<String, ToolError> {
        let failed = |message: String| ToolError::Failed {
            tool: self.name.clone(),
            message,
        };
        let mut command =
            self.confinement
                .command(&self.command, dir)
                .map_err(|e| ToolError::Refused {
                    tool: self.name.clone(),
                    message: format!("not run: {e}; {}", e.hint()),
                })?;
        command
            .env_clear()
            .env("HEARTH_WORKDIR", dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        for name in &self.env {
            if let Some(value) = environment.get(name).filter(|_| super::passable(name)) {
                command.env(name, value);
            }
        }
        if let Some(args) = input.as_object() {
            for (key, value) in args {
                let name: String = key
                    .chars()
                    .map(|c| {
                        if c.is_ascii_alphanumeric() {
                            c.to_ascii_uppercase()
                        } else {
                            '_'
                        }
                    })
                    .collect();
                let value = match value {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                command.env(format!("HEARTH_ARG_{name}"), value);
            }
        }
        let mut child = command
            .spawn()
            .map_err(|e| failed(format!("could not start {}: {e}", self.command[0])))?;
        let pgid = child.id() as i32;
        if let Some(mut stdin) = child.stdin.take() {
            // A command that does not read stdin closes it: not an error.
            let _ = stdin.write_all(input.to_string().as_bytes());
        }
        let cap = self.max_output_bytes;
        let stdout = child.stdout.take().map(|s| crate::process::drain(s, cap));
        let stderr = child
            .stderr
            .take()
            .map(|s| crate::process::drain(s, STDERR_TAIL * 4));
        let deadline = Instant::now() + self.timeout;
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break Some(status),
                Ok(None) if Instant::now() >= deadline => break None,
                Ok(None) => std::thread::sleep(Duration::from_millis(5)),
                Err(e) => return Err(failed(e.to_string())),
            }
        };
        // Whatever it left running in its group goes with it.
        crate::process::signal_group(pgid, libc::SIGKILL);
        let _ = child.wait();
        let (out, cut) = stdout
            .map(|h| h.join().unwrap_or_default())
            .unwrap_or_default();
        let (err, _) = stderr
            .map(|h| h.join().unwrap_or_default())
            .unwrap_or_default();
        match status {
            None => Err(failed(format!(
                "killed after its timeout_s = {} (stderr: {})",
                self.timeout.as_secs(),
                tail(&err)
            ))),
            Some(s) if !s.success() => Err(failed(format!(
                "exited with {} (stderr: {})",
                s.code()
                    .map_or_else(|| "a signal".to_string(), |c| format!("code {c}")),
                tail(&err)
            ))),
            Some(_) => {
                let mut text = String::from_utf8_lossy(&out).into_owned();
                if cut {
                    text.push_str(&format!("\n[… output cut at max_output_bytes = {cap}]"));
                }
                Ok(text)
            }
        }
    }
}

/// The last [`STDERR_TAIL`] bytes of what a tool said on stderr, trimmed
/// (on a character boundary): what a failure quotes.
pub(super) fn tail(bytes: &[u8]) -> String {
    crate::process::tail(bytes, STDERR_TAIL)
}

/// The key on the line holding byte `at` of a manifest (`command` in
/// `command = "echo hi"`).
fn key_of_line(text: &str, at: usize) -> Option<&str> {
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let line = text[line_start..].lines().next()?;
    let key = line.split_once('=')?.0.trim().trim_matches(['"', '\'']);
    (!key.is_empty()).then_some(key)
}

/// What a list-valued key wants, for toml's bare "expected a sequence".
fn list_hint(key: &str, message: &str) -> Option<&'static str> {
    if !message.contains("expected a sequence") {
        return None;
    }
    match key {
        "command" => {
            Some("`command` is an argv list, run without a shell: command = [\"echo\", \"hi\"]")
        }
        "mcp" => Some("`mcp` is an argv list: mcp = [\"uvx\", \"mcp-server-time\"]"),
        "env" => Some("`env` is a list of variable names to pass: env = [\"LANG\"]"),
        _ => None,
    }
}
