//! The one decision on what outside words may make an exchange do, as
//! pure functions over plain values; the tools and the doors do the I/O.
//!
//! Once an exchange has read anything from outside the operator (its
//! [`super::Taint`] has a source), two kinds of act wait for the operator
//! instead of happening:
//!
//! - a write to identity-class memory becomes a proposal
//!   ([`write()`]; every write path asks, judged where the bytes land);
//! - a call of a tool that acts outside the home — an operator command
//!   not marked `read_only`, an MCP tool the server does not mark
//!   `readOnlyHint: true` — becomes a request the operator approves (it
//!   then runs once, as the operator) or declines ([`tool_call()`]), unless
//!   its manifest says `when_outside = "run"`.
//!
//! Filtering what outside words say does not stop a planted "post this
//! to …" (published attacks on agent memory fire through exactly that
//! door, a hundred sessions later); gating on where the words came from
//! does, however many hops they took.

use serde::{Deserialize, Serialize};

/// What a manifest says its tool does in an exchange that read outside
/// content (`when_outside`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WhenOutside {
    /// It becomes a request for the operator (the default: what cannot be
    /// proven harmless waits).
    #[default]
    Request,
    /// It runs: the operator says outside words may drive it.
    Run,
}

/// What happens to one tool call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallGate {
    /// It runs now.
    Run,
    /// It does not run: it waits for the operator as a request.
    Request,
}

/// Whether a call runs: a tool that only reads always does; one that acts
/// runs in a clean exchange, and in a tainted one only when its manifest
/// says `when_outside = "run"`.
pub fn tool_call(tainted: bool, acts: bool, when_outside: WhenOutside) -> CallGate {
    match (tainted, acts, when_outside) {
        (true, true, WhenOutside::Request) => CallGate::Request,
        _ => CallGate::Run,
    }
}

/// What happens to one memory write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteGate {
    /// Onto the file, as asked.
    Direct,
    /// Into the exchange's proposal: `main` holds it only if the operator
    /// accepts.
    Propose,
    /// Into a consolidation's draft: no write of it touches `main`.
    Stage,
}

/// Whether a write lands: identity-class memory written by a tainted
/// exchange waits in a proposal; everything else is written.
pub fn write(tainted: bool, identity_class: bool) -> WriteGate {
    match (tainted, identity_class) {
        (true, true) => WriteGate::Propose,
        _ => WriteGate::Direct,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_acting_tool_in_a_tainted_exchange_waits_unless_its_manifest_says_run() {
        use WhenOutside::{Request as Ask, Run};
        assert_eq!(tool_call(true, true, Ask), CallGate::Request);
        assert_eq!(tool_call(true, true, Run), CallGate::Run);
        assert_eq!(
            tool_call(true, false, Ask),
            CallGate::Run,
            "reading never waits"
        );
        assert_eq!(
            tool_call(false, true, Ask),
            CallGate::Run,
            "a clean exchange acts"
        );
        assert_eq!(
            WhenOutside::default(),
            Ask,
            "closed world: the default waits"
        );
    }

    #[test]
    fn only_identity_written_by_a_tainted_exchange_is_proposed() {
        assert_eq!(write(true, true), WriteGate::Propose);
        assert_eq!(write(true, false), WriteGate::Direct);
        assert_eq!(write(false, true), WriteGate::Direct);
    }
}
