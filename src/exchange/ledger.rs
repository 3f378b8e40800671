//! `state/ticks.jsonl`: one JSON line per finished tick, append-only,
//! written by the supervisor (the only one who knows how a tick ended).
//!
//! Reading is forgiving: a line that does not parse (a torn write, a hand
//! edit gone wrong) is reported with its line number and skipped, and the
//! lines after it still count.
//!
//! The ledger rotates: once `state/ticks.jsonl` reaches [`SEGMENT_BYTES`],
//! it is renamed whole to `state/ticks/FIRST-LAST.jsonl` (the tick numbers
//! it holds, zero-padded so the names sort) before the next line goes on.
//! Without it every tick would commit a new copy of an ever-growing file,
//! and `.git` would grow with the square of the ticks. Readers that need
//! the newest tick read the live file (and the newest segment when a
//! rotation has just emptied it); [`Ledger::read_all`] reads across them
//! and [`Ledger::tally`] counts across them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::atomic;
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

/// What reading the ledger found.
#[derive(Debug, Default)]
pub struct Ledger {
    /// The lines that parse, in order.
    pub records: Vec<TickRecord>,
    /// `(line number, problem)` for each line skipped.
    pub skipped: Vec<(usize, String)>,
}

/// The live ledger is rotated once it holds this many bytes (about a
/// thousand ticks).
pub const SEGMENT_BYTES: u64 = 256 * 1024;

/// Where the live ledger at `path` (`state/ticks.jsonl`) puts its rotated
/// segments (`state/ticks/`).
pub fn segments_dir(path: &Path) -> PathBuf {
    path.with_extension("")
}

/// The rotated segments, oldest first.
pub fn segments(path: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(segments_dir(path))
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
                .collect()
        })
        .unwrap_or_default();
    found.sort();
    found
}

/// The whole ledger in brief (see [`Ledger::tally`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Tally {
    /// Ticks recorded, in the live file and every segment.
    pub recorded: usize,
    /// The newest tick.
    pub last: Option<TickRecord>,
    /// The live file's lines that do not parse: (line, why).
    pub skipped: Vec<(usize, String)>,
}

/// Each rotated segment's line count, by its file name: (size, lines).
#[derive(Debug, Default, Serialize, Deserialize)]
struct SegmentCounts {
    counts: BTreeMap<String, (u64, usize)>,
}

impl crate::json_file::JsonFile for SegmentCounts {
    const VERSION: u32 = 1;
}

impl Ledger {
    /// Reads the live ledger (or, when a rotation has just emptied it, the
    /// newest segment); lines that do not parse are kept aside in `skipped`.
    pub fn read(path: &Path) -> std::io::Result<Ledger> {
        let live = Ledger::read_file(path)?;
        if !live.records.is_empty() {
            return Ok(live);
        }
        match segments(path).last() {
            Some(newest) => Ledger::read_file(newest),
            None => Ok(live),
        }
    }

    /// Reads every segment and the live ledger, oldest first (every record
    /// parsed: for the benches and tools that need them all).
    pub fn read_all(path: &Path) -> std::io::Result<Ledger> {
        let mut all = Ledger::default();
        for file in segments(path).iter().map(PathBuf::as_path).chain([path]) {
            // The error names the file that could not be read, which may
            // be a rotated segment rather than the live ledger.
            let part = Ledger::read_file(file)
                .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", file.display())))?;
            all.records.extend(part.records);
            all.skipped.extend(part.skipped);
        }
        Ok(all)
    }

    /// The ticks that ended at or after `since`, oldest first: the live
    /// file, and rotated segments newest first only as far back as needed
    /// (a day of one-minute ticks is a few segments, a year hundreds).
    pub fn since(path: &Path, since: DateTime<Utc>) -> std::io::Result<Vec<TickRecord>> {
        let mut found: Vec<TickRecord> = Vec::new();
        for file in [path.to_path_buf()]
            .into_iter()
            .chain(segments(path).into_iter().rev())
        {
            let part = Ledger::read_file(&file)?;
            let older = part.records.iter().any(|r| r.end < since);
            let mut records: Vec<TickRecord> = part
                .records
                .into_iter()
                .filter(|r| r.end >= since)
                .collect();
            records.append(&mut found);
            found = records;
            if older {
                break;
            }
        }
        Ok(found)
    }

    /// What `hearth status` needs of the whole ledger: how many ticks are
    /// recorded, the newest, and the live file's lines that do not parse.
    /// Rotated segments are counted by their lines, not parsed: at a year
    /// of one-minute ticks they are hundreds of MB, and they were written
    /// whole by a rotation.
    pub fn tally(path: &Path) -> std::io::Result<Tally> {
        Ledger::tally_remembering(path, None)
    }

    /// [`Ledger::tally`], each segment's count kept in `memo` (under
    /// `.hearth/`, never committed) by its name and size: a segment is
    /// written whole by one rotation and never again, so it is counted
    /// once, and a status on a year of ticks reads none of them. A memo
    /// that cannot be read or written only costs the count.
    pub fn tally_remembering(path: &Path, memo: Option<&Path>) -> std::io::Result<Tally> {
        let live = Ledger::read_file(path)?;
        let segments = segments(path);
        let mut known: SegmentCounts = memo
            .and_then(|m| crate::json_file::load(m).ok().flatten())
            .unwrap_or_default();
        let mut fresh = false;
        let mut recorded = live.records.len();
        for segment in &segments {
            let name = segment
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let size = std::fs::metadata(segment)?.len();
            match known.counts.get(&name) {
                Some(&(was, lines)) if was == size => recorded += lines,
                _ => {
                    let bytes = std::fs::read(segment)?;
                    let lines = bytes
                        .split(|b| *b == b'\n')
                        .filter(|line| !line.iter().all(u8::is_ascii_whitespace))
                        .count();
                    known.counts.insert(name, (size, lines));
                    fresh = true;
                    recorded += lines;
                }
            }
        }
        if let (true, Some(memo)) = (fresh, memo) {
            known.counts.retain(|name, _| {
                segments
                    .iter()
                    .any(|s| s.file_name().is_some_and(|n| n.to_string_lossy() == *name))
            });
            if let Err(e) = crate::json_file::save(memo, &known) {
                tracing::debug!("the ledger's segment counts were not kept: {e}");
            }
        }
        let last = match live.last() {
            Some(last) => Some(last.clone()),
            None => match segments.last() {
                Some(newest) => Ledger::read_file(newest)?.last().cloned(),
                None => None,
            },
        };
        Ok(Tally {
            recorded,
            last,
            skipped: live.skipped,
        })
    }

    fn read_file(path: &Path) -> std::io::Result<Ledger> {
        let text = match std::fs::read(path) {
            Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Ledger::default()),
            Err(e) => return Err(e),
        };
        let mut ledger = Ledger::default();
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            match serde_json::from_str::<TickRecord>(line) {
                Ok(record) => ledger.records.push(record),
                Err(e) => ledger.skipped.push((i + 1, e.to_string())),
            }
        }
        Ok(ledger)
    }

    /// The highest tick number recorded (0 when none).
    pub fn last_number(&self) -> u64 {
        self.records.iter().map(|r| r.tick).max().unwrap_or(0)
    }

    /// The newest record.
    pub fn last(&self) -> Option<&TickRecord> {
        self.records.iter().max_by_key(|r| r.tick)
    }
}

/// Appends one record as one line (a torn last line is repaired first),
/// rotating the live file first when it has grown to [`SEGMENT_BYTES`].
pub fn append(path: &Path, record: &TickRecord) -> Result<(), atomic::WriteError> {
    rotate_if_full(path, SEGMENT_BYTES)?;
    let line = serde_json::to_string(record).expect("a tick record serialises");
    atomic::append_line(path, &line)
}

/// Renames the live ledger to `state/ticks/FIRST-LAST.jsonl` when it holds
/// `limit` bytes or more. One rename: a crash leaves it live or rotated.
fn rotate_if_full(path: &Path, limit: u64) -> Result<(), atomic::WriteError> {
    let err = |source| atomic::WriteError {
        path: path.to_path_buf(),
        source,
    };
    match std::fs::metadata(path) {
        Ok(meta) if meta.len() >= limit => {}
        _ => return Ok(()),
    }
    let live = Ledger::read_file(path).map_err(err)?;
    let first = live.records.iter().map(|r| r.tick).min().unwrap_or(0);
    let last = live.last_number();
    let dir = segments_dir(path);
    std::fs::create_dir_all(&dir).map_err(err)?;
    let mut target = dir.join(format!("{first:09}-{last:09}.jsonl"));
    let mut n = 1;
    while target.exists() {
        // Never over an older segment (a hand-edited ledger, say).
        n += 1;
        target = dir.join(format!("{first:09}-{last:09}.{n}.jsonl"));
    }
    std::fs::rename(path, &target).map_err(err)?;
    atomic::sync_dir(&dir).map_err(err)?;
    atomic::sync_dir(crate::atomic::parent_dir(path)).map_err(err)
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

/// What each tick that read outside content read, by tick number
/// ([`crate::provenance::identity::TaintedTicks`]): the ledger's account
/// of commits made before hearth kept trailers. A ledger that cannot be
/// read says nothing here; the commits' own trailers still speak.
pub fn tainted_ticks(home: &crate::home::Home) -> crate::provenance::identity::TaintedTicks {
    let ledger = Ledger::read_all(&home.ticks_path()).ok();
    ledger
        .iter()
        .flat_map(|l| &l.records)
        .filter(|r| !r.outside.is_empty())
        .map(|r| (r.tick, r.outside.clone()))
        .collect()
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // fixtures, not state
mod tests {
    use super::*;

    fn record(tick: u64) -> TickRecord {
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

    #[test]
    fn a_torn_line_is_skipped_and_named_and_later_lines_count() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ticks.jsonl");
        append(&path, &record(1)).unwrap();
        let mut text = std::fs::read_to_string(&path).unwrap();
        text.push_str("{\"tick\":2,\"sta");
        std::fs::write(&path, text).unwrap();
        append(&path, &record(3)).unwrap();
        let ledger = Ledger::read(&path).unwrap();
        assert_eq!(ledger.last_number(), 3);
        assert_eq!(ledger.records.len(), 2);
        assert_eq!(ledger.skipped[0].0, 2);
    }

    #[test]
    fn a_full_ledger_rotates_whole_and_is_read_across_its_segments() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ticks.jsonl");
        let line_bytes = serde_json::to_string(&record(1)).unwrap().len() as u64 + 1;
        for tick in 1..=25 {
            rotate_if_full(&path, line_bytes * 10).unwrap();
            let line = serde_json::to_string(&record(tick)).unwrap();
            atomic::append_line(&path, &line).unwrap();
        }
        let names: Vec<String> = segments(&path)
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            names,
            ["000000001-000000010.jsonl", "000000011-000000020.jsonl"]
        );
        assert_eq!(Ledger::read(&path).unwrap().records.len(), 5, "live only");
        let all = Ledger::read_all(&path).unwrap();
        let numbers: Vec<u64> = all.records.iter().map(|r| r.tick).collect();
        assert_eq!(numbers, (1..=25).collect::<Vec<_>>());
        let tally = Ledger::tally(&path).unwrap();
        assert_eq!(tally.recorded, 25);
        assert_eq!(tally.last.map(|r| r.tick), Some(25));
        // Just rotated, before the next line: the newest tick is still known.
        rotate_if_full(&path, 1).unwrap();
        assert!(!path.exists());
        assert_eq!(Ledger::read(&path).unwrap().last_number(), 25);
        let tally = Ledger::tally(&path).unwrap();
        assert_eq!((tally.recorded, tally.last.map(|r| r.tick)), (25, Some(25)));
    }
}
