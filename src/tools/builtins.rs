//! The built-in tools' arguments, schemas and bodies.

use chrono::Duration;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::{json, Value};

use super::sandbox::{self, Area};
use super::{ToolContext, ToolError};
use crate::atomic;
use crate::mailbox::outbox::{self, Kind, Letter};
use crate::memory::page;
use crate::model::ToolSpec;
use crate::provenance::gate::WriteGate;
use crate::provenance::{self, Shown};
use crate::recall::answer::{self, RecallQuestion, Rerank};

/// The most blocks one `recall` call returns.
const RECALL_MAX: usize = 20;
const READABLE: &[Area] = &[
    Area::Memory,
    Area::State,
    Area::Outbox,
    Area::Collaborations,
];
const WRITABLE: &[Area] = &[Area::Memory];

pub fn specs() -> Vec<ToolSpec> {
    let spec = |name: &str, description: &str, schema: Value| ToolSpec {
        name: name.into(),
        description: description.into(),
        input_schema: schema,
    };
    let path =
        json!({"type": "string", "description": "a path inside the home, like memory/notes/x.md"});
    vec![
        spec(
            "recall",
            "Search your memory (memory/**/*.md and archived conversation) by keywords. Returns the best matching blocks, each cited as [path:start-end] or [state/archive/file.json#turn-N].",
            json!({"type": "object", "properties": {"query": {"type": "string", "description": "words to look for"}, "k": {"type": "integer", "minimum": 1, "maximum": RECALL_MAX, "description": "how many blocks (default: a few)"}}, "required": ["query"], "additionalProperties": false}),
        ),
        spec(
            "read",
            "Read a file (or list a directory) under memory/, state/, outbox/ or collaborations/. A file longer than 100,000 characters comes a page at a time: its last line says which page and how to read on.",
            json!({"type": "object", "properties": {"path": path, "page": {"type": "integer", "minimum": 1, "description": "which page of a long file (1 when left out)"}}, "required": ["path"], "additionalProperties": false}),
        ),
        spec(
            "write",
            "Create or replace a file under memory/.",
            json!({"type": "object", "properties": {"path": path, "content": {"type": "string"}}, "required": ["path", "content"], "additionalProperties": false}),
        ),
        spec(
            "append",
            "Append text to a file under memory/ (created if missing).",
            json!({"type": "object", "properties": {"path": path, "content": {"type": "string"}}, "required": ["path", "content"], "additionalProperties": false}),
        ),
        spec(
            "edit",
            "Replace one exact, unique occurrence of old_string with new_string in a file under memory/.",
            json!({"type": "object", "properties": {"path": path, "old_string": {"type": "string"}, "new_string": {"type": "string"}}, "required": ["path", "old_string", "new_string"], "additionalProperties": false}),
        ),
        spec(
            "journal",
            "Add an entry to today's journal (memory/journal/YYYY-MM-DD.md).",
            json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"], "additionalProperties": false}),
        ),
        spec(
            "send",
            "Send a message to the operator (a file in outbox/).",
            json!({"type": "object", "properties": {"subject": {"type": "string"}, "body": {"type": "string"}, "in_reply_to": {"type": "string", "description": "the inbox file this answers"}}, "required": ["body"], "additionalProperties": false}),
        ),
        spec(
            "sleep",
            "Ask not to be woken for the given minutes (an inbox message still wakes you).",
            json!({"type": "object", "properties": {"minutes": {"type": "integer", "minimum": 1}}, "required": ["minutes"], "additionalProperties": false}),
        ),
    ]
}

/// `handoff`, for an agent with peers: who it is, who they are, and where
/// a collaboration may work, so that the model need not guess.
pub fn handoff_spec(peering: &super::Peering) -> ToolSpec {
    let peers: Vec<&str> = peering.peers.keys().map(String::as_str).collect();
    let workdirs: Vec<String> = peering
        .settings
        .workdirs
        .iter()
        .map(|w| w.display().to_string())
        .collect();
    let where_ = if workdirs.is_empty() {
        "The operator allows no working directories: collaborations work in your home.".to_string()
    } else {
        format!(
            "Working directories the operator allows: {}.",
            workdirs.join(", ")
        )
    };
    let description = format!(
        "Hand work to a peer agent as the next round of a collaboration: give `collaboration` \
         (an existing one's slug, see collaborations/) or `name` to found one (with an optional \
         `workdir` and the memory that founds it). You are {}; your peers are {}. {where_} A \
         collaboration has at most {} rounds; handing the same message again is refused.",
        peering.me,
        peers.join(", "),
        peering.settings.max_rounds
    );
    let mut workdir = json!({"type": "string", "description": "a new collaboration's working directory (absolute)"});
    if !workdirs.is_empty() {
        workdir["enum"] = json!(workdirs);
    }
    ToolSpec {
        name: "handoff".into(),
        description,
        input_schema: json!({"type": "object", "properties": {"to": {"type": "string", "enum": peers, "description": "the peer's name"}, "message": {"type": "string"}, "collaboration": {"type": "string", "description": "an existing collaboration's slug"}, "name": {"type": "string", "description": "a new collaboration's name"}, "workdir": workdir, "founded_by": {"type": "string", "description": "the memory that founds a new collaboration, e.g. memory/design-x.md"}}, "required": ["to", "message"], "additionalProperties": false}),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RecallArgs {
    query: String,
    #[serde(default)]
    k: Option<usize>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReadArgs {
    path: String,
    #[serde(default)]
    page: Option<usize>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WriteArgs {
    path: String,
    content: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EditArgs {
    path: String,
    old_string: String,
    new_string: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct JournalArgs {
    text: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SendArgs {
    #[serde(default)]
    subject: Option<String>,
    body: String,
    #[serde(default)]
    in_reply_to: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SleepArgs {
    minutes: u64,
}

/// Runs one built-in: what it shows, with its origin. Only `read` and
/// `recall` show content; the others say what the exchange did, in
/// hearth's words.
pub fn dispatch(ctx: &mut ToolContext<'_>, name: &str, input: &Value) -> Result<Shown, ToolError> {
    let own = match name {
        "recall" => return recall(ctx, args(name, input)?),
        "read" => return read(ctx, args(name, input)?),
        "write" => write(ctx, args(name, input)?),
        "append" => append(ctx, args(name, input)?),
        "edit" => edit(ctx, args(name, input)?),
        "journal" => journal(ctx, args(name, input)?),
        "send" => send(ctx, args(name, input)?),
        "sleep" => sleep(ctx, args(name, input)?),
        // Offered only to an agent with peers; to any other it is unknown.
        "handoff" if !ctx.peering.peers.is_empty() => super::handoff::run(ctx, args(name, input)?),
        // Offered only to a consolidation.
        "removed" if ctx.taint.staging => super::staging::removed(ctx, args(name, input)?),
        other => Err(ToolError::Unknown(sandbox::shown(other))),
    };
    own.map(Shown::own)
}

fn args<T: DeserializeOwned>(tool: &str, input: &Value) -> Result<T, ToolError> {
    T::deserialize(input).map_err(|e| ToolError::BadInput {
        tool: tool.into(),
        message: e.to_string(),
    })
}

fn refused(tool: &str) -> impl Fn(sandbox::Refusal) -> ToolError + '_ {
    move |r| ToolError::Refused {
        tool: tool.into(),
        message: r.to_string(),
    }
}

fn failed(tool: &str, message: impl std::fmt::Display) -> ToolError {
    ToolError::Failed {
        tool: tool.into(),
        message: message.to_string(),
    }
}

fn read(ctx: &mut ToolContext<'_>, a: ReadArgs) -> Result<Shown, ToolError> {
    let path = sandbox::resolve(ctx.home, &a.path, READABLE).map_err(refused("read"))?;
    let rel = ctx.home.relative(&path);
    if path.is_dir() {
        let mut names: Vec<String> = std::fs::read_dir(&path)
            .map_err(|e| failed("read", format!("{rel}: {e}")))?
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                let dir = e.file_type().ok()?.is_dir();
                (!name.starts_with('.')).then(|| if dir { format!("{name}/") } else { name })
            })
            .collect();
        names.sort();
        // A name is words too: judged like lines.
        let source = provenance::origins::of_listing(&ctx.origins, &rel, &names);
        return Ok(Shown::judged(
            format!("{rel}/ holds:\n{}", names.join("\n")),
            source,
        ));
    }
    let (bytes, source) = match ctx.taint.draft.get(&rel) {
        // What this exchange staged is what it reads back: its own words.
        Some(staged) => (staged.clone().unwrap_or_default(), None),
        None => {
            let bytes = std::fs::read(&path).map_err(|e| failed("read", format!("{rel}: {e}")))?;
            // Whatever the file, its outside words come in with it.
            let source = ctx.origins.of_file(&rel, None, &ctx.taint.vouched);
            (bytes, source)
        }
    };
    let text = String::from_utf8_lossy(&bytes);
    let n = a.page.unwrap_or(1);
    let shown = page::page(&rel, &text, n).map(|p| Shown::judged(p, source));
    shown.ok_or_else(|| {
        failed(
            "read",
            format!(
                "{rel} has {} page(s); there is no page {n}",
                page::count(&text)
            ),
        )
    })
}

fn write(ctx: &mut ToolContext<'_>, a: WriteArgs) -> Result<String, ToolError> {
    let path = sandbox::resolve(ctx.home, &a.path, WRITABLE).map_err(refused("write"))?;
    if path.is_dir() {
        return Err(failed("write", format!("{} is a directory", a.path)));
    }
    within_cap(ctx, "write", a.content.len())?;
    let rel = ctx.home.relative(&path);
    if let Some(note) = store(ctx, "write", &path, &rel, a.content.as_bytes())? {
        return Ok(note);
    }
    Ok(format!("wrote {rel} ({} bytes)", a.content.len()))
}

fn append(ctx: &mut ToolContext<'_>, a: WriteArgs) -> Result<String, ToolError> {
    let path = sandbox::resolve(ctx.home, &a.path, WRITABLE).map_err(refused("append"))?;
    let rel = ctx.home.relative(&path);
    let mut text = current(ctx, &path, &rel, "append")?;
    text.push_str(&a.content);
    within_cap(ctx, "append", text.len())?;
    if let Some(note) = store(ctx, "append", &path, &rel, text.as_bytes())? {
        return Ok(note);
    }
    Ok(format!("appended {} bytes to {rel}", a.content.len()))
}

fn edit(ctx: &mut ToolContext<'_>, a: EditArgs) -> Result<String, ToolError> {
    let path = sandbox::resolve(ctx.home, &a.path, WRITABLE).map_err(refused("edit"))?;
    let rel = ctx.home.relative(&path);
    if !path.is_file() && !ctx.taint.draft.contains_key(&rel) {
        return Err(failed("edit", format!("{rel} does not exist")));
    }
    let text = current(ctx, &path, &rel, "edit")?;
    if a.old_string.is_empty() {
        return Err(failed("edit", "old_string is empty"));
    }
    match text.matches(&a.old_string).count() {
        0 => {
            return Err(failed(
                "edit",
                format!("old_string does not occur in {rel}"),
            ))
        }
        1 => {}
        n => {
            return Err(failed(
                "edit",
                format!(
                    "old_string occurs {n} times in {rel}; include more context to make it unique"
                ),
            ))
        }
    }
    // Knowing the words it replaces is reading them: an edit of lines a
    // tainted exchange wrote carries them, whatever it makes of them.
    if let Some(at) = text.find(&a.old_string) {
        let first = text[..at].matches('\n').count() + 1;
        let last = first + a.old_string.trim_end_matches('\n').matches('\n').count();
        let lines = Some((first, last));
        if let Some(source) = ctx.origins.of_file(&rel, lines, &ctx.taint.vouched) {
            ctx.taint.read(source);
        }
    }
    let updated = text.replacen(&a.old_string, &a.new_string, 1);
    within_cap(ctx, "edit", updated.len())?;
    if let Some(note) = store(ctx, "edit", &path, &rel, updated.as_bytes())? {
        return Ok(note);
    }
    Ok(format!("edited {rel}"))
}

fn journal(ctx: &mut ToolContext<'_>, a: JournalArgs) -> Result<String, ToolError> {
    let named = format!("memory/journal/{}.md", ctx.now.format("%Y-%m-%d"));
    let path = sandbox::resolve(ctx.home, &named, WRITABLE).map_err(refused("journal"))?;
    let mut text = current(ctx, &path, &ctx.home.relative(&path), "journal")?;
    if text.is_empty() {
        text.push_str(&format!("# {}\n", ctx.now.format("%Y-%m-%d")));
    }
    // Asks run as tick 0: their entries say so, not "tick 0".
    let by = match ctx.tick {
        0 => "ask".to_string(),
        n => format!("tick {n}"),
    };
    text.push_str(&format!(
        "\n## {} UTC, {by}\n\n{}\n",
        ctx.now.format("%H:%M"),
        a.text.trim_end()
    ));
    within_cap(ctx, "journal", text.len())?;
    // The one gate every write passes, judged where the bytes land: a
    // journal pinned `core`, or a journal folder linked into the core, is
    // identity like any other.
    let rel = ctx.home.relative(&path);
    if let Some(note) = store(ctx, "journal", &path, &rel, text.as_bytes())? {
        return Ok(note);
    }
    Ok(format!("added to {rel}"))
}

fn send(ctx: &mut ToolContext<'_>, a: SendArgs) -> Result<String, ToolError> {
    if a.body.trim().is_empty() {
        return Err(failed("send", "the body is empty"));
    }
    let letter = Letter {
        kind: Kind::Message,
        subject: a
            .subject
            .unwrap_or_else(|| "A message from your agent".into()),
        body: a.body,
        tick: Some(ctx.tick),
        in_reply_to: a.in_reply_to,
        about: None,
    };
    let rel = outbox::post(ctx.home, &letter, ctx.now).map_err(|e| failed("send", e))?;
    ctx.effects.touch(rel.clone());
    ctx.effects.sent.push(rel.clone());
    Ok(format!("sent {rel}"))
}

fn sleep(ctx: &mut ToolContext<'_>, a: SleepArgs) -> Result<String, ToolError> {
    let cap = ctx.max_sleep_h.saturating_mul(60);
    let minutes = a.minutes.clamp(1, cap.max(1));
    let until = ctx.now + Duration::minutes(minutes as i64);
    ctx.effects.sleep_until = Some(until);
    let capped = if minutes < a.minutes {
        format!(" (capped at [tick] max_sleep_h = {})", ctx.max_sleep_h)
    } else {
        String::new()
    };
    Ok(format!(
        "next tick not before {}{capped}",
        crate::clock::to_second(until)
    ))
}

/// Lexical order: the model reading the results is its own reranker, so
/// the tool spends no second model call.
/// The same answer `hearth recall --no-rerank` gives: a tick already pays
/// for one model, so the agent's recall is lexical.
fn recall(ctx: &mut ToolContext<'_>, a: RecallArgs) -> Result<Shown, ToolError> {
    let k = a.k.unwrap_or(ctx.recall_results).clamp(1, RECALL_MAX);
    let question = RecallQuestion {
        query: &a.query,
        k,
        candidates: k,
        rerank: Rerank::Skip("the agent's recall tool does not rerank"),
        // The agent may have just written what it looks for.
        walk: true,
    };
    let answer = answer::answer(ctx.home, &question).map_err(|e| failed("recall", e))?;
    // A hit brings its lines' origins with it: recalled outside words
    // taint as read ones do.
    let sources = answer
        .results
        .iter()
        .filter_map(|found| {
            let lines = Some((found.start as usize, found.end as usize));
            ctx.origins.of_file(&found.path, lines, &ctx.taint.vouched)
        })
        .map(|source| format!("recalled {source}"))
        .collect();
    Ok(Shown::from_sources(answer.render().trim_end(), sources))
}

/// The file as this exchange sees it: as its proposal leaves it, when it
/// proposed a change to it, else as it is on disk.
fn current(
    ctx: &ToolContext<'_>,
    path: &std::path::Path,
    rel: &str,
    tool: &str,
) -> Result<String, ToolError> {
    match ctx.taint.draft.get(rel) {
        Some(Some(bytes)) => Ok(String::from_utf8_lossy(bytes).into_owned()),
        Some(None) => Ok(String::new()),
        None => existing(path, rel, tool),
    }
}

/// Writes `bytes` to `rel` — or, in an exchange that read content from
/// outside, when `rel` is identity-class memory, puts the change in the
/// exchange's proposal instead and returns what the model is told.
fn store(
    ctx: &mut ToolContext<'_>,
    tool: &str,
    path: &std::path::Path,
    rel: &str,
    bytes: &[u8],
) -> Result<Option<String>, ToolError> {
    let before = match ctx.taint.staging {
        true => None, // a staged write reads nothing of the file
        false => std::fs::read_to_string(path).ok(),
    };
    let after = String::from_utf8_lossy(bytes);
    match ctx
        .taint
        .decide_write(&ctx.origins, rel, before.as_deref(), &after)
    {
        WriteGate::Stage => return Ok(Some(super::staging::stage(ctx, rel, bytes))),
        WriteGate::Propose => return super::staging::propose(ctx, tool, rel, bytes).map(Some),
        WriteGate::Direct => {}
    }
    ctx.ahead(tool, rel)?;
    atomic::write(path, bytes).map_err(|e| failed(tool, e))?;
    ctx.effects.touch(rel.to_string());
    Ok(None)
}

/// Refuses a write that would leave a file larger than `[tools]
/// max_write_bytes`, before anything is written.
fn within_cap(ctx: &ToolContext<'_>, tool: &str, bytes: usize) -> Result<(), ToolError> {
    if bytes as u64 > ctx.max_write_bytes {
        return Err(ToolError::Refused {
            tool: tool.into(),
            message: format!(
                "the file would be {bytes} bytes, over the limit of {} ([tools] \
                 max_write_bytes); write less, or split it into several files",
                ctx.max_write_bytes
            ),
        });
    }
    Ok(())
}

fn existing(path: &std::path::Path, rel: &str, tool: &str) -> Result<String, ToolError> {
    match std::fs::read(path) {
        Ok(bytes) => String::from_utf8(bytes).map_err(|_| {
            failed(
                tool,
                format!("{rel} is not valid UTF-8; refusing to rewrite it"),
            )
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(String::new()),
        Err(e) => Err(failed(tool, format!("{rel}: {e}"))),
    }
}

#[cfg(test)]
#[path = "builtins_tests.rs"]
mod tests;
