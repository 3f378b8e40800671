//! What a scripted model that obeys the words in front of it reads from a
//! request: the tool results of the newest turn (and which calls they
//! answer), and the number after a marker in the operator's words. The
//! laundering suite and the planted trial script their models with these.

use serde_json::Value;

/// The text of the tool results in `turn`, joined, and the ids of the
/// calls they answer, in order.
pub fn tool_results(turn: &Value) -> (String, Vec<String>) {
    let blocks: Vec<&Value> = turn["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|b| b["type"] == "tool_result")
        .collect();
    let text = blocks
        .iter()
        .map(|b| match &b["content"] {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n");
    let ids = blocks
        .iter()
        .filter_map(|b| b["tool_use_id"].as_str().map(str::to_string))
        .collect();
    (text, ids)
}

/// The number right after `marker` in `text`.
pub fn number_after(text: &str, marker: &str) -> Option<usize> {
    let i = text.find(marker)? + marker.len();
    text[i..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect::<String>()
        .parse()
        .ok()
}
