//! `state/ticks.jsonl`: one JSON line per finished tick, append-only,
//! written by the supervisor (the only one who knows how a tick ended).
//! What a line says is `record`'s ([`TickRecord`]); how the lines are
//! kept, rotated and read is this file's.
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

mod record;
pub use record::{TickRecord, Tokens};

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
    use super::record::tests::record;
    use super::*;

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
