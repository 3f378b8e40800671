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

/// The one thing a flare asks the operator to decide, when there is one:
/// a notice of it links to that thing's page (`/proposals/3`), not to a
/// list. Written in the flare's front matter (`proposal: 3`), never read
/// back out of its subject.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum About {
    /// A proposal waits.
    Proposal(u64),
    /// A request to run a tool waits.
    Request(u64),
}

impl About {
    /// Its front-matter key and number.
    fn field(self) -> (&'static str, u64) {
        match self {
            About::Proposal(n) => ("proposal", n),
            About::Request(n) => ("request", n),
        }
    }

    /// What a flare's front matter says it is about (`proposal: 3`).
    pub fn of_front_matter(doc: &yaml_rust2::Yaml) -> Option<About> {
        let number = |key: &str| doc[key].as_i64().and_then(|n| u64::try_from(n).ok());
        number("proposal")
            .map(About::Proposal)
            .or_else(|| number("request").map(About::Request))
    }
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
    /// What a flare asks the operator to decide.
    pub about: Option<About>,
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
            about: None,
        }
    }

    /// The flare, about `about`.
    pub fn about(mut self, about: About) -> Letter {
        self.about = Some(about);
        self
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
        if let Some((key, n)) = self.about.map(About::field) {
            out.push_str(&format!("{key}: {n}\n"));
        }
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
            about: None,
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
    fn what_a_flare_is_about_is_written_in_its_front_matter_and_read_back() {
        let letter = Letter::flare(Cause::Proposal, "proposal 3: x", "b").about(About::Proposal(3));
        let now = DateTime::from_timestamp(1_700_000_000, 0).unwrap();
        let text = letter.render(now);
        assert!(text.contains("\nproposal: 3\n"), "{text}");
        let yaml = crate::memory::front_matter::split(&text)
            .unwrap()
            .yaml
            .unwrap();
        let docs = yaml_rust2::YamlLoader::load_from_str(yaml).unwrap();
        assert_eq!(About::of_front_matter(&docs[0]), Some(About::Proposal(3)));
        let plain = Letter::flare(Cause::Model, "the model fails", "b").render(now);
        let yaml = crate::memory::front_matter::split(&plain)
            .unwrap()
            .yaml
            .unwrap();
        let docs = yaml_rust2::YamlLoader::load_from_str(yaml).unwrap();
        assert_eq!(About::of_front_matter(&docs[0]), None);
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
