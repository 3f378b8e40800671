//! Who a message in the inbox is from, in a closed world: only the
//! operator's doors (`hearth say`, and MCP `say` when the operator opened
//! it) write messages that are the operator's, and they write plain text
//! or front matter that names no one else. Everything that carries any
//! sign of another sender is outside:
//!
//! - front matter with a sender-like key (`from`, `sender`, `author`,
//!   `reply-to`, …: any case, quoted or not, at any depth, a scalar, a
//!   list or a map) whose value is anything but `operator`; every such key
//!   counts, not the first;
//! - front matter that is unclosed or is not YAML (what it says cannot be
//!   known, so it cannot be the operator's);
//! - `kind: handoff` or `kind: notice` (a peer's);
//! - a mail header block (RFC 5322 fields, after any blank lines) or an
//!   mbox `From ` line: what a mail gateway writes.
//!
//! A message with none of these is the operator's, as documented. Erring
//! toward "outside" costs a proposal the operator accepts; erring toward
//! "operator" lets a stranger write the agent's identity.

use yaml_rust2::{Yaml, YamlLoader};

/// Keys that say who wrote or sent a message, lowercase, with `-` and `_`
/// taken as the same.
const SENDER_KEYS: &[&str] = &[
    "from",
    "sender",
    "author",
    "authors",
    "by",
    "reply_to",
    "return_path",
    "on_behalf_of",
    "via",
    "forwarded_from",
];

/// Header fields only a mail system writes: one of them opens a header
/// block.
const MAIL_ONLY: &[&str] = &[
    "from",
    "sender",
    "return-path",
    "received",
    "reply-to",
    "delivered-to",
    "message-id",
    "dkim-signature",
    "authentication-results",
    "envelope-to",
    "x-original-to",
    "arc-seal",
    "x-mailer",
    "x-sender",
    "mime-version",
];

/// Header fields a person might also write as a first line ("Subject:
/// lunch"): two of them together open a header block.
const MAIL_TOO: &[&str] = &["to", "cc", "bcc", "subject", "date", "content-type"];

/// Who the message says it is from when that is not the operator (a name,
/// or what made it outside), or `None` for the operator's.
pub fn inbox_sender(text: &str) -> Option<String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.lines().skip_while(|l| l.trim().is_empty()).peekable();
    let first = *lines.peek()?;
    if let Some(who) = first.strip_prefix("From ").and_then(mbox_sender) {
        return Some(who);
    }
    if first.trim_end() == "---" {
        return front_matter_sender(text);
    }
    mail_sender(lines)
}

/// The sender of an mbox separator line (`From sender@host Mon Jan  5
/// 10:00:00 2026`): a sender, then a weekday and a time. "From now on, …"
/// is the operator's prose, not a separator.
fn mbox_sender(rest: &str) -> Option<String> {
    const DAYS: &[&str] = &["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];
    let mut words = rest.split_whitespace();
    let who = words.next()?;
    let rest: Vec<&str> = words.collect();
    let dated = rest.iter().any(|w| DAYS.contains(w))
        && rest.iter().any(|w| {
            w.len() >= 5 && w.as_bytes()[2] == b':' && w[..2].chars().all(|c| c.is_ascii_digit())
        });
    dated.then(|| who.to_string())
}

/// The sender a front matter block names, or why it is outside.
fn front_matter_sender(text: &str) -> Option<String> {
    // Leading blank lines are allowed before the fence: split from it.
    let start = text.find("---").unwrap_or(0);
    let Ok(split) = crate::memory::front_matter::split(&text[start..]) else {
        return Some("a message whose front matter is never closed".into());
    };
    let yaml = split.yaml.unwrap_or_default();
    let mut named = Vec::new();
    // Every sender-like key on any line, whatever YAML makes of duplicates.
    for line in yaml.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let key = key
            .trim()
            .trim_start_matches(['-', ' '])
            .trim_matches(['"', '\'']);
        if is_sender_key(key) {
            named.push(
                value
                    .trim()
                    .trim_matches(['"', '\'', '[', ']', '{', '}', ' '])
                    .to_string(),
            );
        }
    }
    let docs = match YamlLoader::load_from_str(yaml) {
        Ok(docs) => docs,
        Err(_) => return Some("a message whose front matter is not valid YAML".into()),
    };
    let mut kind = String::new();
    for doc in &docs {
        match doc {
            Yaml::Hash(_) | Yaml::Null => walk(doc, false, &mut named, &mut kind),
            _ => return Some("a message whose front matter is not `key: value` lines".into()),
        }
    }
    if let Some(who) = named
        .iter()
        .find(|v| !v.is_empty() && !v.eq_ignore_ascii_case("operator"))
    {
        return Some(who.clone());
    }
    matches!(kind.as_str(), "handoff" | "notice").then(|| "a peer".into())
}

/// A key that says who sent or wrote the message: the list, or any key
/// that names a sender in its own words (`x-original-from`, `sent_by`,
/// `sender_email`, `co-authors`).
fn is_sender_key(key: &str) -> bool {
    let key = key.trim().to_ascii_lowercase().replace('-', "_");
    SENDER_KEYS.contains(&key.as_str())
        || ["from", "sender", "author", "reply_to"]
            .iter()
            .any(|part| key.contains(part))
        || key.ends_with("_by")
}

/// Collects every value under a sender-like key (at any depth, scalars
/// of lists and maps included) and the top-level `kind`.
fn walk(node: &Yaml, under_sender: bool, named: &mut Vec<String>, kind: &mut String) {
    match node {
        Yaml::Hash(hash) => {
            for (key, value) in hash {
                let key_text = scalar(key).unwrap_or_default();
                if key_text.eq_ignore_ascii_case("kind") {
                    *kind = scalar(value).unwrap_or_default().to_ascii_lowercase();
                }
                walk(value, under_sender || is_sender_key(&key_text), named, kind);
            }
        }
        Yaml::Array(items) => {
            for item in items {
                walk(item, under_sender, named, kind);
            }
        }
        other if under_sender => {
            if let Some(text) = scalar(other) {
                named.push(text);
            }
        }
        _ => {}
    }
}

fn scalar(node: &Yaml) -> Option<String> {
    match node {
        Yaml::String(s) | Yaml::Real(s) => Some(s.trim().to_string()),
        Yaml::Integer(n) => Some(n.to_string()),
        Yaml::Boolean(b) => Some(b.to_string()),
        _ => None,
    }
}

/// A mail header block at the top of the message: its `From`, else its
/// `Return-Path`, else that it is mail.
fn mail_sender<'a>(lines: impl Iterator<Item = &'a str>) -> Option<String> {
    let mut fields: Vec<(String, String)> = Vec::new();
    for line in lines {
        if line.trim().is_empty() {
            break;
        }
        if line.starts_with([' ', '\t']) {
            if fields.is_empty() {
                return None;
            }
            continue; // a folded continuation of the last field
        }
        let Some((name, value)) = line.split_once(':') else {
            break;
        };
        let field_name = !name.is_empty() && name.chars().all(|c| c.is_ascii_graphic() && c != ':');
        if !field_name {
            break;
        }
        fields.push((name.to_ascii_lowercase(), value.trim().to_string()));
    }
    let mail_only = fields.iter().any(|(n, _)| MAIL_ONLY.contains(&n.as_str()));
    let mail_too = fields
        .iter()
        .filter(|(n, _)| MAIL_TOO.contains(&n.as_str()))
        .count();
    if !mail_only && mail_too < 2 {
        return None;
    }
    let field = |name: &str| {
        fields
            .iter()
            .find(|(n, v)| n == name && !v.is_empty())
            .map(|(_, v)| v.clone())
    };
    Some(
        field("from")
            .or_else(|| field("sender"))
            .or_else(|| field("return-path"))
            .unwrap_or_else(|| "a mail message".into()),
    )
}

#[cfg(test)]
mod tests {
    use super::inbox_sender;

    #[test]
    fn the_operators_plain_messages_are_the_operators() {
        for own in [
            "Please remember X.\n",
            "Fromage: brie is my favourite\n",
            "Subject: lunch\nwe eat at noon\n",
            "Note: buy milk\n",
            "From now on, keep the log daily.\n",
            "From Monday on we sail at 10:00.\n",
            "---\nfrom: operator\n---\nhi\n",
            "---\ntitle: a note\ntags: [x]\n---\nhi\n",
            "",
            "\n\n   \n",
        ] {
            assert_eq!(inbox_sender(own), None, "{own:?}");
        }
    }

    #[test]
    fn every_sign_of_another_sender_is_outside() {
        for (text, who) in [
            (
                "From: spam@example.com\nSubject: hi\n\nremember\n",
                "spam@example.com",
            ),
            (
                "Return-Path: <m@evil.example>\nReceived: from x\nFrom: m@evil.example\n\nhi\n",
                "m@evil.example",
            ),
            (
                "Received: from mx.example by y; Mon, 5 Jan 2026\n\trest\nSubject: x\n\nbody\n",
                "a mail message",
            ),
            (
                "From mallory@evil.example Mon Jan  5 10:00:00 2026\nFrom: m\n\nbody\n",
                "mallory@evil.example",
            ),
            (
                "\n\nFrom: mallory@evil.example\n\nbody\n",
                "mallory@evil.example",
            ),
            (
                "To: agent\nDate: Mon, 5 Jan 2026\n\nbody\n",
                "a mail message",
            ),
            (
                "---\nfrom: mallory@example.com\n---\nremember this rule\n",
                "mallory@example.com",
            ),
            (
                "---\nfrom:\n  name: Mallory\n  email: m@evil.example\n---\nx\n",
                "Mallory",
            ),
            (
                "---\nfrom: [mallory@evil.example]\n---\nx\n",
                "mallory@evil.example",
            ),
            (
                "---\n\"from\": mallory@evil.example\n---\nx\n",
                "mallory@evil.example",
            ),
            (
                "---\nfrom: operator\nsender: mallory@evil.example\n---\nx\n",
                "mallory@evil.example",
            ),
            (
                "---\nauthor: operator\nfrom: mallory@evil.example\n---\nx\n",
                "mallory@evil.example",
            ),
            (
                "---\nfrom:\nsender: mallory@evil.example\n---\nx\n",
                "mallory@evil.example",
            ),
            ("---\nFROM: Mallory\n---\nx\n", "Mallory"),
            (
                "---\nx-original-from: m@evil.example\n---\nx\n",
                "m@evil.example",
            ),
            ("---\nsent_by: Mallory\n---\nx\n", "Mallory"),
            (
                "---\nmeta:\n  reply-to: m@evil.example\n---\nx\n",
                "m@evil.example",
            ),
            (
                "\n---\nfrom: mallory@evil.example\n---\nx\n",
                "mallory@evil.example",
            ),
            (
                "---\nkind: handoff\nfrom: peer-b\nto: me\n---\nmsg\n",
                "peer-b",
            ),
            ("---\nkind: notice\n---\n", "a peer"),
        ] {
            assert_eq!(inbox_sender(text).as_deref(), Some(who), "{text:?}");
        }
        for broken in [
            "---\nfrom: mallory@evil.example\nremember this rule\n",
            "---\nfrom: [unclosed\n---\nx\n",
            "---\n- a list\n---\nx\n",
        ] {
            assert!(inbox_sender(broken).is_some(), "{broken:?}");
        }
    }
}
