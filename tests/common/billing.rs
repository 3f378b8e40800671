//! A model API on 127.0.0.1 that bills like Anthropic's: the Messages API
//! (streamed), prompt caching by the documented rules, and three prices
//! for every request — what the rules charge, what the same request would
//! cost with no `cache_control` at all, and the floor an informed client
//! could reach (everything it sent in the last hour read at the cache
//! price, the rest at the input price). Its clock is the simulated one, so
//! lifetimes pass as a simulated month does.
//!
//! The rules ("Prompt caching", platform.claude.com, read 2026-11):
//! - a request is tools, then system blocks, then message content blocks;
//!   an entry is the exact prefix up to a block marked `cache_control`;
//! - at most 4 breakpoints; a `ttl: "1h"` breakpoint may not follow a
//!   5-minute one (both answered 400, as the API does);
//! - a breakpoint reads the longest live entry ending at it or at one of
//!   the 19 blocks before it (the 20-block look-back); a read refreshes
//!   the entry's lifetime at no cost;
//! - a breakpoint past the read writes an entry, if its prefix reaches the
//!   model's minimum (1,024 tokens for Sonnet 4.5): the tokens between the
//!   read and the last breakpoint are `cache_creation_input_tokens`, split
//!   by lifetime in `cache_creation`;
//! - prices: input, 5-minute writes 1.25×, 1-hour writes 2×, reads 0.1×.
//!
//! Tokens are counted as a quarter of the characters of each block's text.

#![allow(dead_code)] // shared by the cost test and the cost bench

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use chrono::{DateTime, Duration, Utc};
use serde_json::{json, Value};

use super::model_server::{anthropic::event, Answer, ModelServer};

/// Sonnet 4.5's prices, dollars per million tokens.
pub const INPUT: f64 = 3.0;
pub const OUTPUT: f64 = 15.0;
/// Sonnet 4.5's minimum cacheable prefix.
pub const MIN_CACHEABLE: u64 = 1024;
const LOOK_BACK: usize = 20;
const MAX_BREAKPOINTS: usize = 4;

/// What one request cost.
#[derive(Debug, Clone, Default)]
pub struct Bill {
    /// The simulated time it came.
    pub at: Option<DateTime<Utc>>,
    pub uncached: u64,
    pub read: u64,
    pub write_5m: u64,
    pub write_1h: u64,
    pub output: u64,
    /// Whether it was a tick's first request (its last message a new
    /// user turn, not tool results).
    pub first: bool,
    /// What the rules charge.
    pub usd: f64,
    /// The same request with no `cache_control`.
    pub uncached_usd: f64,
    /// Everything sent in the last hour read, the rest at the input price.
    pub floor_usd: f64,
}

impl Bill {
    pub fn sent(&self) -> u64 {
        self.uncached + self.read + self.write_5m + self.write_1h
    }
}

/// The cache and the books.
#[derive(Default)]
pub struct Biller {
    /// Prefix digest → (expires, lifetime).
    entries: HashMap<u64, (DateTime<Utc>, Duration)>,
    /// Prefix digest → when a request last sent it (for the floor).
    sent: HashMap<u64, DateTime<Utc>>,
    pub bills: Vec<Bill>,
}

fn per_m(tokens: u64, rate: f64) -> f64 {
    tokens as f64 * rate / 1_000_000.0
}

fn tokens_of(text: &str) -> u64 {
    (text.chars().count() as u64).div_ceil(4)
}

/// One block of the prefix: its digest-bearing text, tokens, breakpoint.
struct Piece {
    text: String,
    tokens: u64,
    mark: Option<Duration>,
}

fn mark_of(block: &Value) -> Result<Option<Duration>, String> {
    let Some(control) = block.get("cache_control") else {
        return Ok(None);
    };
    if control["type"] != "ephemeral" {
        return Err(format!(
            "cache_control.type must be \"ephemeral\": {control}"
        ));
    }
    match control.get("ttl").and_then(Value::as_str) {
        None | Some("5m") => Ok(Some(Duration::minutes(5))),
        Some("1h") => Ok(Some(Duration::hours(1))),
        Some(other) => Err(format!("cache_control.ttl: unknown lifetime {other:?}")),
    }
}

fn without_mark(block: &Value) -> Value {
    let mut b = block.clone();
    if let Some(o) = b.as_object_mut() {
        o.remove("cache_control");
    }
    b
}

fn block_text(block: &Value) -> String {
    match block["type"].as_str() {
        Some("text") => block["text"].as_str().unwrap_or("").to_string(),
        Some("tool_result") => match &block["content"] {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        },
        Some("tool_use") => format!("{}{}", block["name"], block["input"]),
        _ => without_mark(block).to_string(),
    }
}

/// The request as the cache sees it: tools, system, message blocks.
fn pieces(body: &Value) -> Result<Vec<Piece>, String> {
    let mut out = Vec::new();
    for tool in body["tools"].as_array().into_iter().flatten() {
        let canonical = without_mark(tool).to_string();
        out.push(Piece {
            tokens: tokens_of(&canonical),
            text: format!("tool:{canonical}"),
            mark: mark_of(tool)?,
        });
    }
    for block in body["system"].as_array().into_iter().flatten() {
        out.push(Piece {
            tokens: tokens_of(block["text"].as_str().unwrap_or("")),
            text: format!("system:{}", without_mark(block)),
            mark: mark_of(block)?,
        });
    }
    for message in body["messages"].as_array().into_iter().flatten() {
        let role = message["role"].as_str().unwrap_or("");
        for block in message["content"].as_array().into_iter().flatten() {
            out.push(Piece {
                tokens: tokens_of(&block_text(block)) + 3,
                text: format!("{role}:{}", without_mark(block)),
                mark: mark_of(block)?,
            });
        }
    }
    Ok(out)
}

impl Biller {
    /// Bills `body` at `now` for `output` tokens of answer, or the 400 the
    /// API would answer.
    pub fn bill(&mut self, body: &Value, now: DateTime<Utc>, output: u64) -> Result<Bill, String> {
        let pieces = pieces(body)?;
        let marks: Vec<(usize, Duration)> = pieces
            .iter()
            .enumerate()
            .filter_map(|(i, p)| p.mark.map(|m| (i, m)))
            .collect();
        if marks.len() > MAX_BREAKPOINTS {
            return Err(format!(
                "A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided. Found {}.",
                marks.len()
            ));
        }
        if marks.windows(2).any(|w| w[0].1 < w[1].1) {
            return Err("a ttl='1h' cache_control block must not come after a ttl='5m' one".into());
        }
        // Cumulative digests and token counts of every prefix.
        let model = body["model"].as_str().unwrap_or("");
        let mut digests = Vec::with_capacity(pieces.len());
        let mut totals = Vec::with_capacity(pieces.len());
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        model.hash(&mut hasher);
        let mut total = 0;
        for p in &pieces {
            p.text.hash(&mut hasher);
            digests.push(hasher.finish());
            total += p.tokens;
            totals.push(total);
        }
        let upto = |i: Option<usize>| i.map_or(0, |i| totals[i]);

        // The longest live entry any breakpoint finds.
        let mut hit: Option<usize> = None;
        for &(b, _) in &marks {
            let from = b.saturating_sub(LOOK_BACK - 1);
            if let Some(j) = (from..=b).rev().find(|&j| {
                self.entries
                    .get(&digests[j])
                    .is_some_and(|(exp, _)| *exp > now)
            }) {
                hit = hit.max(Some(j));
            }
        }
        // Reads refresh what they read, and every live entry at or before.
        for &(b, _) in &marks {
            if hit.is_some_and(|h| b <= h) {
                if let Some((exp, ttl)) = self.entries.get_mut(&digests[b]) {
                    if *exp > now {
                        *exp = now + *ttl;
                    }
                }
            }
        }
        if let Some(h) = hit {
            if let Some((exp, ttl)) = self.entries.get_mut(&digests[h]) {
                *exp = now + *ttl;
            }
        }
        let read = upto(hit);
        // Writes: breakpoints past the read, long enough to cache.
        let (mut write_1h, mut write_5m) = (0, 0);
        let mut written_to = read;
        for &(b, ttl) in &marks {
            if hit.is_some_and(|h| b <= h) || totals[b] < MIN_CACHEABLE {
                continue;
            }
            let tokens = totals[b] - written_to;
            if ttl == Duration::hours(1) {
                write_1h += tokens;
            } else {
                write_5m += tokens;
            }
            written_to = totals[b];
            self.entries.insert(digests[b], (now + ttl, ttl));
        }
        let uncached = total - written_to;

        // The floor: the longest prefix sent in the last hour, read.
        let fresh = |t: &DateTime<Utc>| now - *t < Duration::hours(1);
        let seen = (0..pieces.len())
            .rev()
            .find(|&j| self.sent.get(&digests[j]).is_some_and(fresh));
        let floor_read = upto(seen).max(read);
        let floor_read = if floor_read >= MIN_CACHEABLE {
            floor_read
        } else {
            0
        };
        for d in &digests {
            self.sent.insert(*d, now);
        }
        if self.bills.len() % 500 == 499 {
            self.sent.retain(|_, t| fresh(t));
            self.entries.retain(|_, (exp, _)| *exp > now);
        }

        let first = body["messages"]
            .as_array()
            .and_then(|m| m.last())
            .and_then(|m| m["content"].as_array())
            .is_some_and(|c| c.iter().all(|b| b["type"] != "tool_result"));
        let bill = Bill {
            at: Some(now),
            uncached,
            read,
            write_5m,
            write_1h,
            output,
            first,
            usd: per_m(uncached, INPUT)
                + per_m(read, INPUT * 0.1)
                + per_m(write_5m, INPUT * 1.25)
                + per_m(write_1h, INPUT * 2.0)
                + per_m(output, OUTPUT),
            uncached_usd: per_m(total, INPUT) + per_m(output, OUTPUT),
            floor_usd: per_m(floor_read, INPUT * 0.1)
                + per_m(total - floor_read, INPUT)
                + per_m(output, OUTPUT),
        };
        self.bills.push(bill.clone());
        Ok(bill)
    }
}

/// What the scripted agent says to one request: text, then tool calls
/// `(name, input)`.
pub type Reply = (String, Vec<(String, Value)>);

/// A streamed Messages API answer with the bill's usage.
fn stream(reply: &Reply, bill: &Bill) -> Vec<String> {
    let (text, calls) = reply;
    let usage = json!({
        "input_tokens": bill.uncached,
        "cache_read_input_tokens": bill.read,
        "cache_creation_input_tokens": bill.write_5m + bill.write_1h,
        "cache_creation": {
            "ephemeral_5m_input_tokens": bill.write_5m,
            "ephemeral_1h_input_tokens": bill.write_1h,
        },
        "output_tokens": 1,
    });
    let mut events = vec![event(
        "message_start",
        json!({"type": "message_start", "message": {"id": "msg_bill", "type": "message", "role": "assistant", "content": [], "model": "claude-sonnet-4-5-20250929", "stop_reason": null, "stop_sequence": null, "usage": usage}}),
    )];
    events.push(event("content_block_start", json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})));
    events.push(event("content_block_delta", json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}})));
    events.push(event(
        "content_block_stop",
        json!({"type": "content_block_stop", "index": 0}),
    ));
    for (i, (name, input)) in calls.iter().enumerate() {
        let index = i + 1;
        events.push(event("content_block_start", json!({"type": "content_block_start", "index": index, "content_block": {"type": "tool_use", "id": format!("toolu_{}_{index}", bill.read + bill.uncached), "name": name, "input": {}}})));
        events.push(event("content_block_delta", json!({"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": input.to_string()}})));
        events.push(event(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": index}),
        ));
    }
    let stop = if calls.is_empty() {
        "end_turn"
    } else {
        "tool_use"
    };
    events.push(event("message_delta", json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null}, "usage": {"input_tokens": bill.uncached, "cache_creation_input_tokens": bill.write_5m + bill.write_1h, "cache_read_input_tokens": bill.read, "output_tokens": bill.output}})));
    events.push(event("message_stop", json!({"type": "message_stop"})));
    events
}

fn now_of(clock: &std::path::Path) -> DateTime<Utc> {
    let text = std::fs::read_to_string(clock).unwrap_or_default();
    DateTime::parse_from_rfc3339(text.trim())
        .map(|t| t.with_timezone(&Utc))
        .unwrap_or_default()
}

/// A billing server whose time is the simulated clock in `clock`, and
/// whose agent answers with `agent`.
pub fn serve(clock: PathBuf, agent: fn(&Value) -> Reply) -> (ModelServer, Arc<Mutex<Biller>>) {
    let biller = Arc::new(Mutex::new(Biller::default()));
    let books = biller.clone();
    let server =
        ModelServer::start_unrecorded(vec![Answer::Computed(Arc::new(move |body: &Value| {
            let reply = agent(body);
            let output = tokens_of(&reply.0)
                + reply
                    .1
                    .iter()
                    .map(|(n, i)| tokens_of(&format!("{n}{i}")))
                    .sum::<u64>();
            let billed = books.lock().unwrap().bill(body, now_of(&clock), output);
            match billed {
                Ok(bill) => Answer::Stream {
                    events: stream(&reply, &bill),
                    hang: None,
                },
                Err(message) => Answer::Status {
                    status: 400,
                    headers: vec![],
                    body: super::model_server::anthropic::error_body(
                        "invalid_request_error",
                        &message,
                    ),
                },
            }
        }))]);
    (server, biller)
}

/// The text of the request's last turn; `None` when that turn answers
/// tool calls (an agent then says it is done).
pub fn last_turn_text(body: &Value) -> Option<String> {
    let last = body["messages"]
        .as_array()
        .and_then(|m| m.last())
        .cloned()
        .unwrap_or_default();
    let blocks = last["content"].as_array().cloned().unwrap_or_default();
    if blocks.iter().any(|b| b["type"] == "tool_result") {
        return None;
    }
    Some(
        blocks
            .iter()
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
    )
}

/// An agent like a real one: it answers each inbox message with `send`,
/// then says it did; on a quiet tick it writes a short note of what it
/// looked at (no two alike: it names the tick's time).
pub fn agent(body: &Value) -> Reply {
    let Some(text) = last_turn_text(body) else {
        return ("Answered; nothing else needs me now.".into(), vec![]);
    };
    let header = text.lines().next().unwrap_or("").to_string();
    let paths: Vec<String> = text
        .match_indices("<inbox-message path=\"")
        .filter_map(|(i, m)| {
            let rest = &text[i + m.len()..];
            rest.find('"').map(|end| rest[..end].to_string())
        })
        .collect();
    if paths.is_empty() {
        return (
            format!(
                "{header} Nothing new in the inbox. I looked over my notes and the journal; \
                 the work from this morning still stands and nothing needs my operator. \
                 I will look again at the next tick."
            ),
            vec![],
        );
    }
    let calls = paths
        .iter()
        .map(|p| {
            (
                "send".to_string(),
                json!({"subject": "Re: your message", "in_reply_to": p,
                       "body": format!("{header} Thank you; I read {p} and noted it in my journal. \
                                        It fits what we planned last week.")}),
            )
        })
        .collect();
    (
        format!("{header} Answering {} message(s).", paths.len()),
        calls,
    )
}
