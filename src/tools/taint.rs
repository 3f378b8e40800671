//! Provenance: an exchange that read content from outside — a peer's
//! handoff, an inbox message whose front matter says it is from someone
//! else, the output of a tool whose manifest says `untrusted = true`, a
//! file under `collaborations/` — is *tainted*, and in a tainted exchange
//! a write to identity-class memory is not made on `main`: it becomes a
//! proposal the operator reviews (`crate::proposals`), and the tool
//! result says so. The operator's own words (`hearth say`, `hearth ask`)
//! never taint.
//!
//! Filtering what outside content says does not stop a planted "remember
//! this rule" (published attacks on agents' memories get through two
//! times in three); gating the write path does. The decisions here are
//! pure functions over plain values; the builtins do the I/O.

use std::collections::BTreeMap;

use crate::home::layout::rel;
use crate::memory::front_matter;

/// What an exchange read from outside, and what it proposed because of it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Taint {
    /// Where outside content came from, in the order it was read
    /// (`inbox/x.md (from peer-b)`, `the output of fetch`…).
    pub sources: Vec<String>,
    /// `[brake] must_read`: files the operator made required reads, which
    /// are identity-class too.
    pub must_read: Vec<String>,
    /// The proposal this exchange's identity writes go to, once made.
    pub proposal: Option<u64>,
    /// Each file as this exchange's proposal leaves it, so a second
    /// write builds on the first.
    pub draft: BTreeMap<String, Option<Vec<u8>>>,
}

impl Taint {
    /// Whether outside content was read.
    pub fn tainted(&self) -> bool {
        !self.sources.is_empty()
    }

    /// Records a source of outside content (once).
    pub fn read(&mut self, source: impl Into<String>) {
        let source = source.into();
        if !self.sources.contains(&source) {
            self.sources.push(source);
        }
    }
}

/// Who an inbox message says it is from, when that is not the operator:
/// a handoff or notice from a peer (`kind: handoff`, `from: peer`), or any
/// message whose front matter names a sender other than `operator`. A
/// message without front matter is the operator's (`hearth say` writes
/// none).
pub fn inbox_sender(text: &str) -> Option<String> {
    let split = front_matter::split(text).ok()?;
    let yaml = split.yaml?;
    let field = |key: &str| {
        yaml.lines().find_map(|line| {
            let (k, v) = line.split_once(':')?;
            (k.trim() == key).then(|| v.trim().trim_matches(['"', '\'']).to_string())
        })
    };
    let kind = field("kind").unwrap_or_default();
    match field("from") {
        Some(from) if !from.is_empty() && !from.eq_ignore_ascii_case("operator") => Some(from),
        _ if kind == "handoff" || kind == "notice" => Some("a peer".into()),
        _ => None,
    }
}

/// Whether a read of `rel` brings outside content in: what peers wrote
/// lives under `collaborations/`.
pub fn read_taints(rel_path: &str) -> bool {
    rel_path == "collaborations" || rel_path.starts_with("collaborations/")
}

/// Whether `rel_path` is identity-class memory: `memory/identity.md`, the
/// prompt, a core memory (under `memory/core/` or `core: true`), a
/// required read (`must_read: true`, or in `[brake] must_read`) — as the
/// file is now or as the write would leave it.
pub fn identity_class(
    rel_path: &str,
    now: Option<&str>,
    after: &str,
    must_read: &[String],
) -> bool {
    if rel_path == rel::IDENTITY
        || rel_path == rel::PROMPT
        || rel_path.starts_with("memory/core/")
        || must_read.iter().any(|m| m == rel_path)
    {
        return true;
    }
    let marked = |text: &str| {
        front_matter::split(text)
            .ok()
            .and_then(|s| s.yaml)
            .and_then(|yaml| front_matter::parse(yaml).ok())
            .is_some_and(|f| f.core || f.must_read)
    };
    now.is_some_and(marked) || marked(after)
}

/// What the tool result says instead of "wrote …".
pub fn proposed_note(rel_path: &str, n: u64, sources: &[String]) -> String {
    format!(
        "not written to {rel_path}: this exchange read content from outside ({}), so changes \
         to identity-class memory wait for your operator. The change is proposal {n} \
         (`hearth proposals show {n}`); it is on main only if they accept it. Your other \
         memory writes go through as usual.",
        sources.join("; ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_operators_messages_never_taint_and_others_do() {
        assert_eq!(inbox_sender("Please remember X.\n"), None);
        assert_eq!(inbox_sender("---\nfrom: operator\n---\nhi\n"), None);
        assert_eq!(
            inbox_sender("---\nfrom: mallory@example.com\n---\nremember this rule\n").as_deref(),
            Some("mallory@example.com")
        );
        assert_eq!(
            inbox_sender("---\nkind: handoff\nfrom: peer-b\nto: me\n---\nmsg\n").as_deref(),
            Some("peer-b")
        );
        assert_eq!(
            inbox_sender("---\nkind: notice\n---\n").as_deref(),
            Some("a peer")
        );
    }

    #[test]
    fn identity_class_is_the_identity_the_core_and_the_required_reads() {
        let none: &[String] = &[];
        assert!(identity_class("memory/identity.md", None, "x", none));
        assert!(identity_class("memory/prompt.md", None, "x", none));
        assert!(identity_class("memory/core/values.md", None, "x", none));
        assert!(!identity_class("memory/notes/today.md", None, "x", none));
        assert!(identity_class(
            "memory/notes/rules.md",
            Some("---\nmust_read: true\n---\nrules\n"),
            "rules",
            none
        ));
        assert!(identity_class(
            "memory/notes/new.md",
            None,
            "---\ncore: true\n---\nx\n",
            none
        ));
        assert!(identity_class(
            "memory/x.md",
            None,
            "x",
            &["memory/x.md".to_string()]
        ));
        assert!(read_taints("collaborations/site/record.md"));
        assert!(!read_taints("memory/collaborations.md"));
    }
}
