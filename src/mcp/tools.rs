//! The MCP server's tools: what a client's model reads to pick one (the
//! descriptions and schemas), and what each call runs.

use serde::Deserialize;
use serde_json::{json, Value};

use super::{Doors, McpRefusal, McpReply};
use crate::ask;
use crate::config::Config;
use crate::recall::answer::{self, RecallQuestion, Rerank};

/// One tool as the client lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolDef {
    /// Its name.
    pub name: &'static str,
    /// A short title for people.
    pub title: &'static str,
    /// What it does and when to use it, for the client's model.
    pub description: &'static str,
    /// The JSON Schema of its arguments.
    pub schema: Value,
    /// It changes nothing (MCP's `readOnlyHint`).
    pub read_only: bool,
}

/// The most blocks one `recall` returns.
const RECALL_MAX: usize = 20;

/// The tools, in a stable order: the three that only read, then the doors
/// the operator opened.
pub fn offered(allow_say: bool, allow_ask: bool) -> Vec<ToolDef> {
    let mut tools = vec![
        ToolDef {
            name: "recall",
            title: "Search the agent's memory",
            description: "Search a long-lived agent's memory (markdown files kept in a git \
                repository) for a question or some words. Returns the best-matching blocks, \
                best first, each cited as path:lines@commit with who wrote it (the operator, \
                or the agent in tick N) and an excerpt. The order is lexical (BM25 over words \
                and their stems): read the excerpts and judge them yourself. Use this first to \
                find what the agent knows, decided or was told about something; then `read` a \
                cited file for the whole of it.",
            schema: json!({
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "What to look for: a question or a few distinctive words (names, dates, terms)."},
                    "k": {"type": "integer", "minimum": 1, "maximum": RECALL_MAX, "description": "How many blocks to return (default: the home's [recall] results, usually 5)."}
                },
                "required": ["query"],
                "additionalProperties": false
            }),
            read_only: true,
        },
        ToolDef {
            name: "read",
            title: "Read a memory file",
            description: "Read one file of the agent's home in full, or list a directory: \
                memory/ (its markdown memory; memory/identity.md is who it is), state/, \
                outbox/ (what it told its operator) or collaborations/. Paths are relative to \
                the home; the path of a `recall` citation works as is (leave out :lines@commit). \
                A file longer than 100,000 characters comes a page at a time: its last line says \
                which page and how to read on.",
            schema: json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "A path relative to the home, e.g. memory/identity.md or memory/ to list it."},
                    "page": {"type": "integer", "minimum": 1, "description": "Which page of a long file (1 when left out)."}
                },
                "required": ["path"],
                "additionalProperties": false
            }),
            read_only: true,
        },
        ToolDef {
            name: "status",
            title: "The agent's health",
            description: "Whether the agent's supervisor is running, how its last tick ended \
                (ok, or the failure class) and when the next is due, a failure streak or a \
                panic, an outage of its model API, what it spent today (UTC) against its daily \
                budget, and hearth's unread flares (its messages about itself to the operator). \
                Takes no arguments.",
            schema: json!({"type": "object", "properties": {}, "additionalProperties": false}),
            read_only: true,
        },
    ];
    if allow_say {
        tools.push(ToolDef {
            name: "say",
            title: "Leave the agent a message",
            description: "Put a message in the agent's inbox and commit it. \
                The agent reads it on its next tick (a running supervisor starts one at once). \
                Returns the message's file. Does not wait for a reply: use `ask` for an answer \
                now, or read outbox/ later for what the agent sent back.",
            schema: json!({
                "type": "object",
                "properties": {
                    "text": {"type": "string", "description": "The message, in plain words (markdown is fine)."}
                },
                "required": ["text"],
                "additionalProperties": false
            }),
            read_only: false,
        });
    }
    if allow_ask {
        tools.push(ToolDef {
            name: "ask",
            title: "Ask the agent",
            description: "Ask the agent a question and wait for its answer: one exchange with \
                its own model, with its identity and recent memory loaded; it may read and \
                write its memory and call its tools. Costs a model call against its daily \
                budget, and takes seconds to minutes: to look something up, `recall` and `read` \
                are free and instant.",
            schema: json!({
                "type": "object",
                "properties": {
                    "question": {"type": "string", "description": "The question, as you would put it to a colleague."},
                    "read_only": {"type": "boolean", "description": "Offer the agent only the tools that do not write (default false)."}
                },
                "required": ["question"],
                "additionalProperties": false
            }),
            read_only: false,
        });
    }
    tools
}

/// Runs one call of a tool that [`offered`] lists.
pub fn call(doors: &Doors, name: &str, arguments: &Value) -> Result<McpReply, McpRefusal> {
    match name {
        "recall" => recall(doors, args(name, arguments)?),
        "read" => read(doors, arguments),
        "status" => status(doors),
        "say" => say(doors, args(name, arguments)?),
        "ask" => ask(doors, args(name, arguments)?),
        _ => Err(McpRefusal::new(
            format!("there is no tool {name:?} here"),
            None,
        )),
    }
}

fn args<T: for<'de> Deserialize<'de>>(tool: &str, arguments: &Value) -> Result<T, McpRefusal> {
    serde_json::from_value(arguments.clone()).map_err(|e| {
        McpRefusal::new(
            format!("{tool}: invalid arguments: {e}"),
            Some(format!(
                "see the input schema `tools/list` gives for {tool}"
            )),
        )
    })
}

/// The home's settings, or the defaults with the reason (a broken
/// `hearth.toml` must not close the memory to readers).
fn config(doors: &Doors) -> (Config, Option<String>) {
    match Config::load(&doors.home.config_path()) {
        Ok(config) => (config, None),
        Err(e) => (
            Config::default(),
            Some(format!("{e}; the default settings are used")),
        ),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct McpRecallArgs {
    query: String,
    #[serde(default)]
    k: Option<usize>,
}

fn recall(doors: &Doors, a: McpRecallArgs) -> Result<McpReply, McpRefusal> {
    if a.query.trim().is_empty() {
        return Err(McpRefusal::new(
            "recall: the query is empty",
            Some("give a question or a few distinctive words".into()),
        ));
    }
    let chars = a.query.chars().count();
    if chars > super::guard::MAX_QUERY {
        return Err(McpRefusal::new(
            format!(
                "recall: the query is {chars} characters, over the limit of {}",
                super::guard::MAX_QUERY
            ),
            Some("ask with a question or a few distinctive words, not a document".into()),
        ));
    }
    let (config, _) = config(doors);
    let k = a.k.unwrap_or(config.recall.results).clamp(1, RECALL_MAX);
    let question = RecallQuestion {
        query: &a.query,
        k,
        candidates: config.recall.candidates.max(k),
        rerank: Rerank::Skip("the MCP client's model reads the results itself"),
        // The agent may have just written what the client looks for.
        walk: true,
    };
    let answer = answer::answer(&doors.home, &question).map_err(|e| {
        let hint = e.hint();
        McpRefusal::new(format!("recall: {e}"), Some(hint))
    })?;
    Ok(McpReply {
        text: answer.render().trim_end().to_string(),
        structured: serde_json::to_value(&answer).ok(),
    })
}

fn read(doors: &Doors, arguments: &Value) -> Result<McpReply, McpRefusal> {
    let (config, _) = config(doors);
    let now = doors.clock.now();
    let mut ctx = crate::tools::ToolContext::new(
        &doors.home,
        &config,
        0,
        now,
        Vec::new(),
        Default::default(),
    );
    // The agent's own `read`: the same sandbox (no .git/, .hearth/,
    // hearth.toml or tools/, nothing outside the home) and paging.
    crate::tools::dispatch(&mut ctx, "read", arguments)
        .map(|text| McpReply {
            text,
            structured: None,
        })
        .map_err(|e| {
            let hint = match &e {
                crate::tools::ToolError::BadInput { .. } => Some(
                    "give {\"path\": \"memory/identity.md\"} (and \"page\" for a long file)".into(),
                ),
                crate::tools::ToolError::Refused { .. } => Some(
                    "readable: memory/, state/, outbox/ and collaborations/ — `recall` finds paths"
                        .into(),
                ),
                _ => None,
            };
            McpRefusal::new(e, hint)
        })
}

fn status(doors: &Doors) -> Result<McpReply, McpRefusal> {
    let now = doors.clock.now();
    let status = crate::view::status::status(&doors.home, now);
    let text = crate::view::status_text::render(&status, now);
    Ok(McpReply {
        text: text.trim_end().to_string(),
        structured: serde_json::to_value(&status).ok(),
    })
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SayArgs {
    text: String,
}

/// Who an MCP client's words are from, as a message's sender and an
/// ask's source name it, when they are not the operator's.
const CLIENT: &str = "an MCP client (hearth mcp; --client-is-operator makes its words yours)";

fn say(doors: &Doors, a: SayArgs) -> Result<McpReply, McpRefusal> {
    // Outside by default: the message names its sender, so the tick that
    // reads it is tainted as by a stranger's mail.
    let text = match doors.client_is_operator {
        true => a.text,
        false => format!("---\nfrom: {CLIENT}\n---\n{}", a.text),
    };
    let said = crate::mailbox::say::say(&doors.home, &text, doors.clock.now())
        .map_err(|e| McpRefusal::new(format!("say: {e}"), Some(e.hint())))?;
    let mut text = format!("delivered: {}", said.rel);
    if let Some(why) = &said.not_committed {
        text.push_str(&format!(
            " (not committed yet: {why}; the supervisor commits it)"
        ));
    }
    Ok(McpReply {
        structured: Some(json!({"message": said.rel, "committed": said.not_committed.is_none()})),
        text,
    })
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AskArgs {
    question: String,
    #[serde(default)]
    read_only: bool,
}

fn ask(doors: &Doors, a: AskArgs) -> Result<McpReply, McpRefusal> {
    if a.question.trim().is_empty() {
        return Err(McpRefusal::new(
            "ask: the question is empty",
            Some("ask it something, as you would a colleague".into()),
        ));
    }
    let config = Config::load(&doors.home.config_path())
        .map_err(|e| McpRefusal::new(format!("ask: {e}"), Some(e.hint())))?;
    if let Some(var) = crate::model::key_variable(&config.model) {
        if doors.api_key.is_none() {
            return Err(McpRefusal::new(
                format!("ask: {var} is not set in the MCP server's environment"),
                Some(format!(
                    "give the server {var} in its environment when you register it with the client"
                )),
            ));
        }
    }
    let question = ask::Question {
        text: a.question,
        attachment: None,
        read_only: a.read_only,
        stdin_is_mine: false,
        relayed_by: (!doors.client_is_operator).then(|| CLIENT.to_string()),
        api_key: doors.api_key.clone(),
        environment: doors.environment.clone(),
    };
    let asked = ask::ask(
        &doors.home,
        &config,
        &question,
        doors.clock.now(),
        &mut |_| {},
    )
    .map_err(|e| McpRefusal::new(format!("ask: {e}"), Some(e.hint())))?;
    if !asked.complete {
        return Err(McpRefusal::new(
            format!(
                "ask: the answer is incomplete: {}; what came: {}",
                asked.problems.join("; "),
                asked.answer.trim()
            ),
            Some("it is stored in state/sessions.jsonl marked incomplete; ask again".into()),
        ));
    }
    Ok(McpReply {
        text: asked.answer.trim_end().to_string(),
        structured: serde_json::to_value(&asked).ok(),
    })
}
