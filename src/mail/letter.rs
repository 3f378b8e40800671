//! A mail as the agent reads it: one inbox message with its sender,
//! subject, date, Message-ID and verdict in front matter, its text parts
//! (HTML reduced to text, no markup kept), its attachments named and
//! bounded. Pure: bytes and a verdict in, the message's text out.

use mail_parser::{MessageParser, MimeHeaders};

use super::verdict::MailVerdict;

/// How much of a mail's text the message keeps; the rest is named.
pub const MAX_TEXT_BYTES: usize = 64 * 1024;

/// What hearth read of a mail's headers.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Headers {
    /// The `From` address, lowercased (empty: none could be read).
    pub from: String,
    /// Its display name.
    pub name: String,
    /// The subject.
    pub subject: String,
    /// The date, as RFC 3339.
    pub date: String,
    /// The Message-ID, without its angle brackets.
    pub message_id: String,
    /// The References it carried, for a reply's thread.
    pub references: Vec<String>,
}

/// A mail read: its headers, its text, its attachments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Read {
    /// The headers.
    pub headers: Headers,
    /// Its text (the text parts, or the HTML as text), bounded.
    pub text: String,
    /// Each attachment: its name and size.
    pub attachments: Vec<(String, usize)>,
    /// What was done to make it readable.
    pub notes: Vec<String>,
}

/// Reads `raw` (a whole RFC 5322 message); `None` when it is not one.
pub fn read(raw: &[u8]) -> Option<Read> {
    let message = MessageParser::default().parse(raw)?;
    let from = message.from().and_then(|a| a.first());
    let headers = Headers {
        from: from
            .and_then(|a| a.address())
            .unwrap_or("")
            .trim()
            .to_lowercase(),
        name: from.and_then(|a| a.name()).unwrap_or("").to_string(),
        subject: message.subject().unwrap_or("").to_string(),
        date: message.date().map(|d| d.to_rfc3339()).unwrap_or_default(),
        message_id: message.message_id().unwrap_or("").to_string(),
        references: message
            .references()
            .as_text_list()
            .map(|l| l.iter().map(|r| r.to_string()).collect())
            .unwrap_or_default(),
    };
    let mut notes = Vec::new();
    let parts: Vec<String> = (0..message.text_body_count())
        .filter_map(|i| message.body_text(i))
        .map(|t| t.into_owned())
        .collect();
    let mut text = parts.join("\n\n");
    if text.trim().is_empty() && !raw.is_empty() {
        notes.push("the mail has no text part".to_string());
    }
    if text.len() > MAX_TEXT_BYTES {
        let mut cut = MAX_TEXT_BYTES;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        notes.push(format!(
            "its text was {} bytes; the first {cut} are kept",
            text.len()
        ));
        text.truncate(cut);
    }
    let attachments = message
        .attachments()
        .map(|part| {
            let name = part
                .attachment_name()
                .unwrap_or("(unnamed)")
                .chars()
                .filter(|c| !c.is_control())
                .take(120)
                .collect();
            (name, part.len())
        })
        .collect();
    Some(Read {
        headers,
        text,
        attachments,
        notes,
    })
}

/// A YAML string (JSON's syntax is YAML's), one line, control characters
/// escaped: a header can carry nothing into the front matter.
fn yaml(s: &str) -> String {
    serde_json::to_string(s).expect("a string serialises")
}

/// The inbox message for `read`, judged `verdict`: front matter hearth
/// writes (the sender, subject, date, Message-ID, verdict — a header of
/// the mail can only ever be a quoted value in it), then the text. A mail
/// not proven the operator's names its sender in `from:`, which the tick
/// reads as outside words.
pub fn message(read: &Read, verdict: &MailVerdict, uid: (u32, u32)) -> String {
    let h = &read.headers;
    let mut out = String::from("---\n");
    out.push_str("channel: mail\n");
    match verdict {
        MailVerdict::Operator { .. } => out.push_str(&format!("operator: {}\n", yaml(&h.from))),
        MailVerdict::Outside { .. } => out.push_str(&format!("from: {}\n", yaml(&h.from))),
    }
    out.push_str(&format!("verdict: {}\n", yaml(&verdict.to_string())));
    out.push_str(&format!("subject: {}\n", yaml(&h.subject)));
    out.push_str(&format!("date: {}\n", yaml(&h.date)));
    out.push_str(&format!("message_id: {}\n", yaml(&h.message_id)));
    out.push_str(&format!("imap_uid: \"{}/{}\"\n", uid.0, uid.1));
    out.push_str("---\n");
    if !h.subject.trim().is_empty() {
        out.push_str(&format!("Subject: {}\n\n", h.subject.trim()));
    }
    out.push_str(read.text.trim());
    out.push('\n');
    for (name, size) in &read.attachments {
        out.push_str(&format!("\n[attachment not kept: {name}, {size} bytes]"));
    }
    for note in &read.notes {
        out.push_str(&format!("\n[hearth: {note}]"));
    }
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn html_becomes_text_and_headers_stay_quoted_values() {
        let raw = b"From: \"Mallory\" <Mallory@Example.ORG>\r\nTo: agent@example.org\r\n\
Subject: hi\\\"\r\n  injected: yes\r\nMessage-ID: <m1@example.org>\r\nDate: Sun, 29 Nov 2026 08:00:00 +0000\r\n\
Content-Type: text/html; charset=utf-8\r\n\r\n<p>Hello <b>there</b><script>x()</script></p>\r\n";
        let read = read(raw).unwrap();
        assert_eq!(read.headers.from, "mallory@example.org");
        assert_eq!(read.headers.message_id, "m1@example.org");
        assert!(read.text.contains("Hello there"), "{}", read.text);
        assert!(!read.text.contains("<b>"), "{}", read.text);
        let verdict = MailVerdict::Outside {
            why: "no DKIM signature".into(),
        };
        let text = message(&read, &verdict, (7, 42));
        let front = text.split("---\n").nth(1).unwrap();
        assert!(front.contains("from: \"mallory@example.org\"\n"), "{text}");
        assert!(!front.contains("\ninjected"), "{text}");
        assert!(front.contains("imap_uid: \"7/42\""));
    }
}
