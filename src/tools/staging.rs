//! Writes that do not reach `main`. A consolidation's go to a draft
//! (`Taint::draft`, with `staging` set), and `removed` is how the model
//! says where what it took out now lives, or why it may go — which the
//! gates require for every file it removed lines from. A tainted
//! exchange's writes to identity-class memory go to its proposal
//! (`propose`).

use serde::Deserialize;
use serde_json::json;

use super::{ToolContext, ToolError};
use crate::model::ToolSpec;

/// `removed`, as the model sees it.
pub fn removed_spec() -> ToolSpec {
    ToolSpec {
        name: "removed".into(),
        description: "Say, for a file you removed lines from, where their content now lives \
            (another memory, by path) or why it may go. Required for every such file: a \
            consolidation with an unexplained removal is not offered."
            .into(),
        input_schema: json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "the file you removed lines from, e.g. memory/identity.md"},
                "where": {"type": "string", "description": "where the content now lives (a path), or why it may go"}
            },
            "required": ["path", "where"],
            "additionalProperties": false
        }),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RemovedArgs {
    path: String,
    #[serde(rename = "where")]
    place: String,
}

pub(super) fn removed(ctx: &mut ToolContext<'_>, a: RemovedArgs) -> Result<String, ToolError> {
    if a.place.trim().is_empty() {
        return Err(ToolError::BadInput {
            tool: "removed".into(),
            message: "`where` is empty: name the memory that holds it now, or why it may go".into(),
        });
    }
    let path = a.path.trim_start_matches("./").to_string();
    ctx.taint
        .notes
        .entry(path.clone())
        .or_default()
        .push(a.place);
    Ok(format!("noted for {path}"))
}

/// Puts `bytes` in the draft as `rel` (empty: the file goes) and says so.
pub(super) fn stage(ctx: &mut ToolContext<'_>, rel: &str, bytes: &[u8]) -> String {
    let gone = bytes.iter().all(u8::is_ascii_whitespace);
    ctx.taint
        .draft
        .insert(rel.to_string(), (!gone).then(|| bytes.to_vec()));
    if gone {
        format!("staged: {rel} goes (nothing on main changes until the operator accepts)")
    } else {
        format!(
            "staged {rel} ({} bytes) in the consolidation (nothing on main changes until the operator accepts)",
            bytes.len()
        )
    }
}

/// Puts a tainted exchange's write of identity-class `rel` in the
/// exchange's proposal (made on the first such write, amended after) and
/// returns what the model is told.
pub(super) fn propose(
    ctx: &mut ToolContext<'_>,
    tool: &str,
    rel: &str,
    bytes: &[u8],
) -> Result<String, ToolError> {
    ctx.taint
        .draft
        .insert(rel.to_string(), Some(bytes.to_vec()));
    let by = match ctx.tick {
        0 => "ask".to_string(),
        n => format!("tick {n}"),
    };
    let files: Vec<String> = ctx.taint.draft.keys().cloned().collect();
    let draft = crate::proposals::Draft {
        title: format!("change {} after reading outside content", files.join(", ")),
        why: format!(
            "The agent ({by}) asked to change identity-class memory in an exchange that had \
             read content from outside: {}. Such changes wait for you.",
            ctx.taint.outside
        ),
        by,
        kind: String::new(),
        outside: ctx.taint.outside.clone(),
        files: ctx.taint.draft.clone(),
    };
    let proposal = crate::proposals::propose(ctx.home, ctx.taint.proposal, &draft, ctx.now)
        .map_err(|e| ToolError::Failed {
            tool: tool.into(),
            message: format!("{rel} was not written, nor proposed: {e}"),
        })?;
    ctx.taint.proposal = Some(proposal.n);
    ctx.effects.proposal = Some(proposal.n);
    Ok(crate::provenance::proposed_note(
        rel,
        proposal.n,
        &ctx.taint.outside,
    ))
}
