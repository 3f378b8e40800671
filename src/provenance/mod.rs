//! Provenance that follows the words (DESIGN 15). An exchange is
//! *tainted* when anything it carries or reads has an outside origin: a
//! third party's message or a peer's handoff in its turn, a conversation
//! turn or session line marked outside, a file line written by a tainted
//! exchange ([`origin`]), a recall hit on such lines, piped stdin, the
//! output of a tool nobody vouched for. Trust is the minimum over sources:
//! a tainted exchange's own writes are outside in turn (its commit carries
//! `Hearth-Outside` trailers, its turns are marked), and its writes to
//! identity-class memory are not made on `main`: they become a proposal
//! the operator reviews (`crate::proposals`), and the tool result says so.
//! Only an operator act clears taint: an accept, the operator's own edit
//! or `say`, or vouching for lines ([`vouch`]).
//!
//! Filtering what outside content says does not stop a planted "remember
//! this rule" (published attacks on agents' memories get through two
//! times in three); gating the write path on where the words came from
//! does, however many hops they take. The decisions here are pure
//! functions over plain values; the builtins and the doors do the I/O.

pub mod audit;
pub mod fence;
pub mod gate;
pub mod identity;
pub mod origin;
pub mod origins;
pub mod sender;
pub mod shown;
pub mod vouch;
pub mod vouching;

pub use audit::{audit_lines, reads_like_injected_rule, Finding};
pub use origins::OriginJudge;
pub use sender::inbox_sender;
pub use shown::Shown;

use std::collections::BTreeMap;

use crate::home::layout::rel;
use crate::home::Home;
use crate::memory::front_matter;
use crate::recall::index::Hit;
use vouch::Vouched;

/// What an exchange read from outside, and what it proposed because of it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Taint {
    /// Where outside content came from, in the order it was read, each a
    /// chain ([`origin::chain`]): `inbox/x.md (from peer-b)`, `the output
    /// of fetch`, `memory/notes/x.md:3 ← tick 212 ← …`.
    pub outside: Outside,
    /// `[brake] must_read`: files the operator made required reads, which
    /// are identity-class too.
    pub must_read: Vec<String>,
    /// The proposal this exchange's identity writes go to, once made.
    pub proposal: Option<u64>,
    /// Each file as this exchange's proposal leaves it, so a second
    /// write builds on the first.
    pub draft: BTreeMap<String, Option<Vec<u8>>>,
    /// Every memory write goes to `draft` (a consolidation exchange): the
    /// files on `main` are not touched, whatever is written.
    pub staging: bool,
    /// In a staging exchange, what the model said of each removal, by file
    /// (the `removed` tool).
    pub notes: BTreeMap<String, Vec<String>>,
    /// The lines the operator vouched for (`state/vouched.json`).
    pub vouched: Vouched,
}

impl Taint {
    /// Whether outside content was read.
    pub fn tainted(&self) -> bool {
        !self.outside.is_empty()
    }

    /// The one write decision, for every write path: where a write of
    /// `rel` from `before` (none: a new file) to `after` lands. A staging
    /// exchange stages every write. A write that turns a file into
    /// identity (or keeps one) carries the outside lines it keeps, read or
    /// not (a note promoted with `core: true`), and this exchange is
    /// outside from then on; then [`gate::write`] decides.
    pub fn decide_write(
        &mut self,
        origins: &OriginJudge,
        rel: &str,
        before: Option<&str>,
        after: &str,
    ) -> gate::WriteGate {
        if self.staging {
            return gate::WriteGate::Stage;
        }
        let identity = identity_class(rel, before, after, &self.must_read);
        if identity && before.is_some() {
            if let Some(source) = origins::kept_by(origins, rel, after, &self.vouched) {
                self.read(source);
            }
        }
        gate::write(self.tainted(), identity)
    }

    /// Records a source of outside content (once; at most
    /// [`MAX_SOURCES`] are kept, the first ones).
    pub fn read(&mut self, source: impl Into<String>) {
        self.outside.add(source);
    }

    /// Records the marks of everything a model request carries — each
    /// system block's and each message's — whatever the door declared:
    /// the boundary for the prompt, as [`Taint::show`] is for tool
    /// results. Every [`crate::model::SystemBlock`] and
    /// [`crate::conversation::Message`] states its origin (their fields
    /// have no default), so no text reaches a request without one, and
    /// the exchange's trust is the minimum over what it is shown.
    pub fn shown_prompt(
        &mut self,
        system: &[crate::model::SystemBlock],
        messages: &[crate::conversation::Message],
    ) {
        for block in system {
            self.outside.add_from(&block.outside);
        }
        for message in messages {
            self.outside.add_from(&message.outside);
        }
    }
}

pub use crate::outside::{Outside, MAX_SOURCES};

/// Recall's hits for a turn hearth assembles (the tick's inbox, an ask's
/// question) without those that carry outside words — what peers wrote,
/// lines a tainted exchange wrote, marked turns — so an operator's own
/// question is not tainted by what recall happened to quote beside it.
/// The agent may still read or recall them itself, which taints its
/// exchange. At most `k`.
pub fn without_outside(home: &Home, hits: Vec<Hit>, k: usize, vouched: &Vouched) -> Vec<Hit> {
    let origins = OriginJudge::open(home);
    hits.into_iter()
        .filter(|h| {
            let lines = Some((h.start as usize, h.end as usize));
            origins.of_file(&h.path, lines, vouched).is_none()
        })
        .take(k)
        .collect()
}

/// How many more hits to ask recall for, so that `k` remain once the
/// outside ones are left out.
pub const OUTSIDE_SLACK: usize = 5;

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
pub fn proposed_note(rel_path: &str, n: u64, sources: &Outside) -> String {
    format!(
        "not written to {rel_path}: this exchange read content from outside ({}), so changes \
         to identity-class memory wait for your operator. The change is proposal {n} \
         (`hearth proposals show {n}`); it is on main only if they accept it. Your other \
         memory writes go through as usual.",
        sources
    )
}

#[cfg(test)]
mod tests {
    use super::*;

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
    }
}
