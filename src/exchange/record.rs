//! What an exchange said, as its record in `state/sessions.jsonl` keeps it
//! (one agent, two doors): the reply, and every tool call in readable form
//! — a `send`'s body in full, what a write left. Hot memory, recall and the
//! next exchange read it whichever door the exchange came through.

/// The reply and the calls, one line each (empty parts left out).
pub fn said(reply: &str, actions: &[String]) -> String {
    std::iter::once(reply.trim().to_string())
        .chain(actions.iter().map(|a| shown(a)))
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The messages the agent sent the operator with `send`, as [`said`]
/// shows them: what the ask's door also prints after the reply.
pub fn sent(actions: &[String]) -> Vec<String> {
    actions
        .iter()
        .filter(|a| a.starts_with("send "))
        .map(|a| shown(a))
        .collect()
}

/// One call, `name {json}` as the report keeps it, in readable form.
fn shown(action: &str) -> String {
    let (name, args) = action.split_once(' ').unwrap_or((action, ""));
    let args: serde_json::Value = serde_json::from_str(args).unwrap_or_default();
    let text = |key: &str| args[key].as_str().unwrap_or("").to_string();
    match name {
        "send" => format!("[sent: {}] {}", text("subject"), text("body")),
        "write" | "append" | "edit" => format!(
            "[{name} {}] {}",
            text("path"),
            args["content"]
                .as_str()
                .or(args["new_string"].as_str())
                .unwrap_or("")
        ),
        "journal" => format!("[journal] {}", text("text")),
        _ => format!("[called {name}] {args}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_send_is_said_in_full_and_listed_as_sent() {
        let actions = vec![
            r#"send {"subject":"the word","body":"The new secret word is heron."}"#.to_string(),
            r#"write {"path":"memory/a.md","content":"x"}"#.to_string(),
        ];
        let said = said("done", &actions);
        assert_eq!(
            said,
            "done\n[sent: the word] The new secret word is heron.\n[write memory/a.md] x"
        );
        assert_eq!(
            sent(&actions),
            ["[sent: the word] The new secret word is heron."]
        );
        assert_eq!(super::said("", &[]), "");
    }
}
