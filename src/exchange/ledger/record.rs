//! What one line of `state/ticks.jsonl` says: a finished tick
//! ([`TickRecord`]), the tokens it used by price ([`Tokens`]), and what it
//! did in a few words ([`TickRecord::what_it_did`]). How the lines are
//! kept, rotated and read is the ledger's (`super`).

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::exchange::class::Class;

/// Tokens a tick used, by how they were priced. The keys keep their
/// first names (`in`, `cache_write`) so every ledger line ever written
/// reads the same way.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tokens {
    /// Input tokens sent at the full input price: neither read from the
    /// provider's prompt cache nor written to it.
    #[serde(rename = "in")]
    pub input: u64,
    /// Output tokens.
    #[serde(rename = "out")]
    pub output: u64,
    /// Input tokens read from the provider's prompt cache.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cache_read: u64,
    /// Input tokens written to the cache with the 5-minute lifetime.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cache_write: u64,
    /// Input tokens written to the cache with the 1-hour lifetime.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cache_write_1h: u64,
}

impl Tokens {
    /// Every input token the tick's requests sent, however priced.
    pub fn sent(&self) -> u64 {
        self.input + self.cache_read + self.cache_write + self.cache_write_1h
    }

    /// The `Hearth-Tokens` trailer's value: each kind under its own name.
    pub fn trailer(&self) -> String {
        format!(
            "sent={} uncached={} cache_read={} cache_write_5m={} cache_write_1h={} out={}",
            self.sent(),
            self.input,
            self.cache_read,
            self.cache_write,
            self.cache_write_1h,
            self.output
        )
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// One finished tick.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TickRecord {
    /// The tick's number, from 1.
    pub tick: u64,
    /// When it started.
    pub start: DateTime<Utc>,
    /// When it ended.
    pub end: DateTime<Utc>,
    /// The child's exit code; for a signal, 128 + the signal number.
    pub exit: i32,
    /// How it ended.
    pub class: Class,
    /// What it used.
    #[serde(default)]
    pub tokens: Tokens,
    /// What it cost, at `[budget.prices]`.
    #[serde(default)]
    pub cost_usd: f64,
    /// Estimated tokens per part of the context (system, user turn, …).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tokens_by_part: BTreeMap<String, u64>,
    /// Inbox messages the tick consumed, as archived under `state/`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inbox: Vec<String>,
    /// Memories the tick had to read before writing (DESIGN 4, 8).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub required_reads: Vec<String>,
    /// A fingerprint of the model's reply (normalised), to spot repeats.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply_fingerprint: Option<u64>,
    /// Why an exit-0 tick looks like a quiet failure, when it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quiet: Option<String>,
    /// The tick failed only because the provider was unreachable,
    /// rate-limited or overloaded; the healer does not count it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub outage: bool,
    /// The tick failed on a setting the operator must change (a key the
    /// API refuses or that is missing, a model or address it does not
    /// have): restoring the conversation cannot fix it, so the healer does
    /// not count it; its messages go back, and ticks wait with backoff.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub setting: bool,
    /// The supervisor was told to stop during this tick and cut it short:
    /// an operator's act, not the agent's failure (the healer skips it).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
    /// The tick failed because the home's disk was full: the host's
    /// trouble, not the agent's (the healer skips it).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub disk_full: bool,
    /// After an outage: how long the supervisor waited before the next try.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backoff_ms: Option<u64>,
    /// Why the tick failed, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// How the model stopped, as the provider said, when the answer was
    /// not whole (`max_tokens`, `length`, `refusal`, `pause_turn`…).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
    /// What the model said when it refused (at most 500 characters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refusal: Option<String>,
    /// The recoveries the tick tried before it ended, with their outcome.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub recoveries: Vec<crate::exchange::class::Recovery>,
    /// Where the outside content the tick read came from: its memory
    /// writes carry this mark (`provenance`).
    #[serde(
        default,
        skip_serializing_if = "crate::outside::Outside::is_empty",
        alias = "tainted_by"
    )]
    pub outside: crate::outside::Outside,
    /// The proposal its identity writes became.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proposal: Option<u64>,
    /// The requests its calls of acting tools became (they did not run).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub requested: Vec<u64>,
    /// When the tick was a consolidation, how it ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consolidation: Option<String>,
    /// The memory files the tick's tools wrote (for the commit's subject
    /// and `hearth day`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub wrote: Vec<String>,
    /// What the model's reply claimed to have done that the tick's tools
    /// did not do (`exchange::claims`): the claiming sentences.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unbacked: Vec<String>,
    /// The letters it sent to the operator (`outbox/…`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sent: Vec<String>,
    /// The handoffs it posted for peers (`outbox/…-handoff-…`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub handed: Vec<String>,
    /// The job it ran, when it was a job's run (`state/jobs.jsonl` has
    /// the run's outcome).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job: Option<String>,
}

impl TickRecord {
    /// What the tick did, in a few words a person reads at a glance (the
    /// commit's subject, `hearth day`): `answered 2 messages, wrote
    /// memory/notes/x.md`, or `idle`; empty for a failed tick that did
    /// nothing (its class says enough). Evidence only: messages are
    /// "answered" only when the tick sent a letter (by `send`, or hearth's
    /// own delivery of a plain answer); read without one, they are "read,
    /// answered none", whatever the model's words said.
    pub fn what_it_did(&self) -> String {
        let plural = |n: usize, one: &str| {
            if n == 1 {
                format!("1 {one}")
            } else {
                format!("{n} {one}s")
            }
        };
        let mut parts = Vec::new();
        if !self.inbox.is_empty() {
            let messages = plural(self.inbox.len(), "message");
            if !self.sent.is_empty() {
                parts.push(format!("answered {messages}"));
            } else if !self.handed.is_empty() {
                // Passed on to a peer: that is what it did with them.
                parts.push(format!("read {messages}"));
            } else {
                parts.push(format!("read {messages}, answered none"));
            }
        }
        if !self.handed.is_empty() {
            parts.push(format!("handed off {}", self.handed.len()));
        }
        if !self.wrote.is_empty() {
            let named: Vec<&str> = self.wrote.iter().take(2).map(String::as_str).collect();
            let more = self.wrote.len().saturating_sub(2);
            let tail = if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            };
            parts.push(format!("wrote {}{tail}", named.join(", ")));
        }
        if self.inbox.is_empty() && !self.sent.is_empty() {
            parts.push(format!("sent {}", plural(self.sent.len(), "letter")));
        }
        if let Some(n) = self.proposal {
            parts.push(format!("proposed {n}"));
        }
        if !self.requested.is_empty() {
            let numbers: Vec<String> = self.requested.iter().map(u64::to_string).collect();
            parts.push(format!(
                "asked the operator to run request {}",
                numbers.join(", ")
            ));
        }
        if !self.unbacked.is_empty() {
            parts.push(format!(
                "claimed {} without doing it",
                plural(self.unbacked.len(), "act")
            ));
        }
        if let Some(outcome) = &self.consolidation {
            let short: String = outcome.chars().take(48).collect();
            parts.push(format!("consolidation {short}"));
        }
        if parts.is_empty() && self.class == Class::Ok {
            parts.push("idle".into());
        }
        parts.join(", ")
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // fixtures, not state
pub(super) mod tests {
    use super::*;

    /// A tick that did nothing, numbered `tick`.
    pub(in crate::exchange::ledger) fn record(tick: u64) -> TickRecord {
        let t = DateTime::from_timestamp(1_700_000_000, 0).unwrap();
        TickRecord {
            tick,
            start: t,
            end: t,
            exit: 0,
            class: Class::Ok,
            tokens: Tokens::default(),
            cost_usd: 0.0,
            tokens_by_part: BTreeMap::new(),
            inbox: vec![],
            required_reads: vec![],
            reply_fingerprint: None,
            quiet: None,
            outage: false,
            setting: false,
            interrupted: false,
            disk_full: false,
            stop_reason: None,
            refusal: None,
            recoveries: Vec::new(),
            outside: crate::outside::Outside::none(),
            proposal: None,
            requested: Vec::new(),
            consolidation: None,
            wrote: Vec::new(),
            sent: Vec::new(),
            handed: Vec::new(),
            job: None,
            unbacked: Vec::new(),
            backoff_ms: None,
            note: None,
        }
    }

    #[test]
    fn a_ticks_outside_sources_are_written_as_outside_and_old_lines_still_read() {
        let mut tainted = record(3);
        tainted.outside = crate::outside::Outside::of("inbox/x.md (from a@example.com)");
        let line = serde_json::to_string(&tainted).unwrap();
        assert!(line.contains("\"outside\":[\"inbox/x.md"), "{line}");
        assert!(!line.contains("tainted_by"), "one name: {line}");
        let old = line.replace("\"outside\"", "\"tainted_by\"");
        let read: TickRecord = serde_json::from_str(&old).unwrap();
        assert_eq!(read.outside, tainted.outside, "a line written before reads");
    }

    #[test]
    fn a_tick_says_it_answered_only_with_a_letter_and_names_a_handoff() {
        let mut r = record(1);
        r.inbox = vec!["state/inbox-archive/a.md".into()];
        assert_eq!(r.what_it_did(), "read 1 message, answered none");
        r.handed = vec!["outbox/x-handoff-bob.md".into()];
        assert_eq!(r.what_it_did(), "read 1 message, handed off 1");
        r.sent = vec!["outbox/x-reply.md".into()];
        assert_eq!(r.what_it_did(), "answered 1 message, handed off 1");
    }
}
