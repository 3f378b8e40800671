//! A consolidation's tools: its writes go to a draft (`Taint::draft`,
//! with `staging` set), never to the files on `main`, and `removed` is
//! how the model says where what it took out now lives, or why it may go
//! — which the gates require for every file it removed lines from.

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
