//! `outbox/`: what the agent (or hearth itself, as a flare) tells the
//! operator. One markdown file per message, with YAML front matter so a
//! person can read it with `cat` and a program can sort it by kind.
//!
//! ```text
//! ---
//! kind: message            # or: flare
//! flare: config            # flares only: config, healer, panic, …
//! created: 2026-11-21T10:15:00Z
//! tick: 42
//! subject: "Re: hello"
//! in_reply_to: "inbox/20261121T101500.000Z-4242.md"
//! ---
//! body
//! ```

use chrono::{DateTime, SecondsFormat, Utc};

use super::cause::Cause;
use super::{unique_path, MailboxError};
use crate::atomic;
use crate::home::Home;

/// What kind of outbox file this is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    /// Written by the agent with `send`.
    Message,
    /// Written by hearth about hearth, about one cause.
    Flare(Cause),
}

/// One outgoing message.
#[derive(Debug, Clone, PartialEq)]
pub struct Letter {
    /// A letter or a flare.
    pub kind: Kind,
    /// Its subject line.
    pub subject: String,
    /// Its text, markdown.
    pub body: String,
    /// The tick that wrote it.
    pub tick: Option<u64>,
    /// The inbox message it answers (`inbox/…md`).
    pub in_reply_to: Option<String>,
}

impl Letter {
    /// A flare about `cause`: hearth's message about itself, from hearth.
    pub fn flare(cause: Cause, subject: impl Into<String>, body: impl Into<String>) -> Letter {
        Letter {
            kind: Kind::Flare(cause),
            subject: subject.into(),
            body: body.into(),
            tick: None,
            in_reply_to: None,
        }
    }

    /// The file's text: front matter, then the body.
    pub fn render(&self, now: DateTime<Utc>) -> String {
        let mut out = String::from("---\n");
        match &self.kind {
            Kind::Message => out.push_str("kind: message\n"),
            Kind::Flare(flare) => {
                out.push_str("kind: flare\n");
                out.push_str(&format!("flare: {}\n", yaml_string(&flare.to_string())));
            }
        }
        out.push_str(&format!(
            "created: {}\n",
            now.to_rfc3339_opts(SecondsFormat::Secs, true)
        ));
        if let Some(tick) = self.tick {
            out.push_str(&format!("tick: {tick}\n"));
        }
        out.push_str(&format!("subject: {}\n", yaml_string(&self.subject)));
        if let Some(reply) = &self.in_reply_to {
            out.push_str(&format!("in_reply_to: {}\n", yaml_string(reply)));
        }
        out.push_str("---\n");
        out.push_str(&sanitise(self.body.trim_end()));
        out.push('\n');
        out
    }
}

/// Writes `letter` to a new file in `outbox/` and returns its path inside
/// the home.
pub fn post(home: &Home, letter: &Letter, now: DateTime<Utc>) -> Result<String, MailboxError> {
    let label = match &letter.kind {
        Kind::Message => slug(&letter.subject),
        Kind::Flare(cause) => format!("flare-{}", slug(&cause.to_string())),
    };
    let stem = format!("{}-{}", now.format("%Y%m%dT%H%M%S%.3fZ"), label);
    let dir = home.outbox_dir();
    let path = unique_path(&dir, &stem, "md");
    atomic::write(&path, letter.render(now).as_bytes())?;
    Ok(home.relative(&path))
}

/// Most of a body that goes in one message.
const MAX_BODY_CHARS: usize = 64 * 1024;

/// Body text without control characters (terminal escapes in a flare are
/// an attack on whoever `cat`s it), bounded in length.
fn sanitise(body: &str) -> String {
    let mut out: String = body
        .chars()
        .filter(|c| !c.is_control() || matches!(c, '\n' | '\t'))
        .take(MAX_BODY_CHARS)
        .collect();
    if body.chars().count() > MAX_BODY_CHARS {
        out.push_str("\n[… cut: the message was longer]");
    }
    out
}

/// A double-quoted YAML scalar. JSON string syntax is valid YAML, and it
/// escapes newlines and control characters a subject might carry.
fn yaml_string(s: &str) -> String {
    serde_json::to_string(s).expect("a string serialises")
}

/// A short file-name-safe label from free text.
fn slug(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
        if out.len() >= 40 {
            break;
        }
    }
    let out = out.trim_end_matches('-').to_string();
    if out.is_empty() {
        "message".into()
    } else {
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn render_quotes_and_escapes_front_matter() {
        let letter = Letter {
            kind: Kind::Message,
            subject: "Re: \"hi\"\nthere".into(),
            body: "body\n\n".into(),
            tick: Some(7),
            in_reply_to: Some("inbox/a.md".into()),
        };
        let now = DateTime::from_timestamp(1_700_000_000, 0).unwrap();
        let text = letter.render(now);
        assert_eq!(
            text,
            "---\nkind: message\ncreated: 2023-11-14T22:13:20Z\ntick: 7\n\
             subject: \"Re: \\\"hi\\\"\\nthere\"\nin_reply_to: \"inbox/a.md\"\n---\nbody\n"
        );
    }

    #[test]
    fn post_never_overwrites() {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::at(dir.path()).unwrap();
        let now = DateTime::from_timestamp(1_700_000_000, 0).unwrap();
        let flare = Letter::flare(Cause::Config, "hearth.toml broke", "details");
        let a = post(&home, &flare, now).unwrap();
        let b = post(&home, &flare, now).unwrap();
        assert_ne!(a, b);
        assert!(
            a.starts_with("outbox/") && a.contains("flare-config"),
            "{a}"
        );
    }

    #[test]
    fn slugs_are_short_and_safe() {
        assert_eq!(
            slug("Re: hello, what is in your identity?"),
            "re-hello-what-is-in-your-identity"
        );
        assert_eq!(slug("../../etc"), "etc");
        assert_eq!(slug("???"), "message");
    }
}
