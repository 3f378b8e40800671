//! `collaborations/SLUG.md`: front matter that hearth reads back, and a
//! body a person reads. Each front matter value is written as JSON, which
//! YAML reads as it is, so the file parses with the same YAML reader as
//! memory and round-trips exactly; the body is rendered from the same
//! record and never read back.

use serde_json::Value;
use yaml_rust2::{Yaml, YamlLoader};

use super::Collaboration;
use crate::memory::front_matter;

/// Renders `c` as its record file.
pub fn render(c: &Collaboration) -> String {
    let Value::Object(fields) = serde_json::to_value(c).expect("a record serialises") else {
        unreachable!("a struct serialises to an object")
    };
    let mut out = String::from("---\n");
    for (key, value) in &fields {
        match value {
            Value::Array(items) if !items.is_empty() && items.iter().all(Value::is_object) => {
                out.push_str(&format!("{key}:\n"));
                for item in items {
                    out.push_str(&format!("  - {item}\n"));
                }
            }
            other => out.push_str(&format!("{key}: {other}\n")),
        }
    }
    out.push_str("---\n");
    out.push_str(&body(c));
    out
}

/// The part a person reads.
fn body(c: &Collaboration) -> String {
    let mut out = format!(
        "# {}\n\nA collaboration record, written by hearth: change it with `hearth collab`, \
         not by hand.\n\n- status: {}\n- workdir: {}\n- participants: {}\n",
        c.name,
        c.status.as_str(),
        c.workdir.as_deref().unwrap_or("(the home)"),
        c.participants.join(", ")
    );
    if let Some(founded_by) = &c.founded_by {
        out.push_str(&format!("- founded by: {founded_by}\n"));
    }
    out.push_str("\n## Rounds\n\n");
    if c.rounds.is_empty() {
        out.push_str("None yet.\n");
    }
    for r in &c.rounds {
        out.push_str(&format!(
            "{}. {} {} → {}: {}\n",
            r.n,
            r.at.format("%Y-%m-%d %H:%M UTC"),
            r.from,
            r.to,
            r.summary
        ));
    }
    out.push_str("\n## History\n\n");
    for e in &c.events {
        let note = if e.note.is_empty() {
            String::new()
        } else {
            format!(" ({})", e.note)
        };
        out.push_str(&format!(
            "- {} {}: {}{note}\n",
            e.at.format("%Y-%m-%d %H:%M UTC"),
            e.by,
            e.what
        ));
    }
    out
}

/// What is wrong with a record or handoff's text, at the line the reader
/// knows (1-based, in the file), if it knows one. The caller names the file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{message}", line.map(|l| format!("line {l}: ")).unwrap_or_default())]
pub struct ParseError {
    /// The line, when the reader knows it.
    pub line: Option<usize>,
    /// What is wrong.
    pub message: String,
}

impl ParseError {
    /// A problem with the whole text, not one line of it.
    pub fn whole(message: impl Into<String>) -> ParseError {
        ParseError {
            line: None,
            message: message.into(),
        }
    }
}

/// Reads a record back; the error says what is wrong, with the line when
/// the YAML reader knows it.
pub fn parse(text: &str) -> Result<Collaboration, ParseError> {
    let split = front_matter::split(text).map_err(|p| ParseError {
        line: Some(p.line),
        message: p.message,
    })?;
    let yaml = split
        .yaml
        .ok_or_else(|| ParseError::whole("no front matter: a record starts with a `---` block"))?;
    parse_yaml(yaml)
}

/// Reads front matter YAML into `T` (through JSON's data model). The YAML
/// starts on the file's second line, after the opening `---`.
pub fn parse_yaml<T: serde::de::DeserializeOwned>(yaml: &str) -> Result<T, ParseError> {
    let docs = YamlLoader::load_from_str(yaml).map_err(|e| ParseError {
        // The marker counts lines from 1 in the YAML, which starts after
        // the opening `---` on the file's first line.
        line: Some(e.marker().line() + 1),
        message: format!("the front matter is not YAML: {}", e.info()),
    })?;
    let doc = docs.into_iter().next().unwrap_or(Yaml::Null);
    serde_json::from_value(json_of(doc))
        .map_err(|e| ParseError::whole(format!("the front matter: {e}")))
}

fn json_of(yaml: Yaml) -> Value {
    match yaml {
        Yaml::String(s) | Yaml::Real(s) => Value::String(s),
        Yaml::Integer(i) => Value::from(i),
        Yaml::Boolean(b) => Value::Bool(b),
        Yaml::Array(items) => Value::Array(items.into_iter().map(json_of).collect()),
        Yaml::Hash(map) => Value::Object(
            map.into_iter()
                .filter_map(|(k, v)| match k {
                    Yaml::String(k) => Some((k, json_of(v))),
                    _ => None,
                })
                .collect(),
        ),
        _ => Value::Null,
    }
}

#[cfg(test)]
mod tests {
    use chrono::DateTime;

    use super::*;
    use crate::collab::{Change, Round};

    #[test]
    fn a_record_round_trips_and_reads_as_a_person_would_want() {
        let at = |m: i64| DateTime::from_timestamp(1_800_000_000 + m * 60, 0).unwrap();
        let mut c = Collaboration::found(
            "design-x",
            "Design \"X\": the sequel",
            Some("/srv/w 1".into()),
            vec!["alice".into(), "bob".into()],
            Some("memory/design-x.md".into()),
            "alice",
            at(0),
        )
        .unwrap();
        c.rounds.push(Round {
            n: 1,
            from: "alice".into(),
            to: "bob".into(),
            at: at(5),
            summary: "Draft one: {braces}, [brackets] and a # hash".into(),
            digest: None,
            sent_in: Some("abc123".into()),
            taken_in: None,
        });
        c.change(Change::Pause, "operator", "waiting: for legal", at(9))
            .unwrap();
        let text = render(&c);
        assert_eq!(parse(&text).unwrap(), c, "{text}");
        assert!(text.contains("# Design \"X\": the sequel\n"), "{text}");
        assert!(
            text.contains("1. 2027-01-15 08:05 UTC alice → bob: Draft one"),
            "{text}"
        );
        assert!(
            text.contains("operator: pause (waiting: for legal)"),
            "{text}"
        );
        // The same YAML reader as memory's front matter reads it.
        let yaml = front_matter::split(&text).unwrap().yaml.unwrap();
        assert!(front_matter::parse(yaml).is_ok(), "{yaml}");
    }

    #[test]
    fn a_broken_record_names_what_is_wrong() {
        let err = parse("---\nname: x\nslug: a: b\n---\n").unwrap_err();
        assert!(err.message.contains("not YAML"), "{err}");
        assert_eq!(err.line, Some(3), "the file's line of `slug: a: b`: {err}");
        let err = parse("---\nslug: \"x\"\n---\n").unwrap_err();
        assert!(err.to_string().contains("missing field"), "{err}");
        let err = parse("# no front matter\n").unwrap_err();
        assert_eq!(
            err.to_string(),
            "no front matter: a record starts with a `---` block"
        );
    }
}
