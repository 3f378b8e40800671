//! `state/sessions.jsonl` read newest first, one page at a time: the
//! thread (`/talk`) shows the latest of a history that only grows, so it
//! reads back from the end — or from where the previous page began — only
//! as far as one page needs, never the whole file.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use chrono::{DateTime, Utc};

use super::sessions::Line;

/// How much is read at a time, backwards.
const BLOCK: u64 = 64 * 1024;

/// One page of lines, read back.
#[derive(Debug, Default)]
pub struct Back {
    /// The lines, oldest first, each with where it starts in the file.
    pub lines: Vec<(u64, Line)>,
    /// Where the page before this one ends (the start of its oldest
    /// line): `None` when this page reaches the file's start.
    pub older: Option<u64>,
}

/// The last `want` lines that parse and start before byte `before` (the
/// file's end when `None`); a torn or hand-broken line is skipped, as
/// [`super::sessions::read`] skips it. A missing file is an empty page.
pub fn read_back(path: &Path, before: Option<u64>, want: usize) -> std::io::Result<Back> {
    let mut newest_first: Vec<(u64, Line)> = Vec::new();
    walk_back(path, before, |offset, line| {
        if newest_first.len() == want {
            return false;
        }
        if let Ok(line) = line {
            newest_first.push((offset, line));
        }
        true
    })?;
    let oldest = newest_first.last().map(|(offset, _)| *offset);
    let older = match oldest {
        Some(offset) if offset > 0 && newest_first.len() == want => Some(offset),
        _ => None,
    };
    newest_first.reverse();
    Ok(Back {
        lines: newest_first,
        older,
    })
}

/// A line that does not parse: where it starts, and why.
pub type Torn = (u64, String);

/// The lines written at or after `since`, oldest first, and `(byte,
/// why)` for each line among them that does not parse: the log is
/// appended in time order, so the walk back stops at the first line older
/// than `since` — a day's spend costs the day's lines, not the history's.
pub fn since(path: &Path, since: DateTime<Utc>) -> std::io::Result<(Vec<Line>, Vec<Torn>)> {
    let mut lines = Vec::new();
    let mut torn = Vec::new();
    walk_back(path, None, |offset, line| match line {
        Ok(line) if line.time < since => false,
        Ok(line) => {
            lines.push(line);
            true
        }
        Err(why) => {
            torn.push((offset, why));
            true
        }
    })?;
    lines.reverse();
    torn.reverse();
    Ok((lines, torn))
}

/// The session log's lines written since `since` (a torn line skipped):
/// what a day's spend needs, at the cost of the day's lines however long
/// the history. An unreadable log is read as empty, as
/// [`super::sessions::read`] reads it.
pub fn of_home_since(home: &crate::home::Home, since: DateTime<Utc>) -> Vec<Line> {
    self::since(&home.path(crate::home::layout::rel::SESSIONS), since)
        .map(|(lines, _)| lines)
        .unwrap_or_default()
}

/// The line (1-based) that starts at `byte` of the file at `path`: the
/// newlines before it counted, for a torn line named where an editor
/// finds it. Reads the file up to there, so only for what is rare.
pub fn line_number(path: &Path, byte: u64) -> std::io::Result<usize> {
    let mut file = std::fs::File::open(path)?.take(byte);
    let mut block = vec![0u8; BLOCK as usize];
    let mut newlines = 0;
    loop {
        let n = file.read(&mut block)?;
        if n == 0 {
            return Ok(newlines + 1);
        }
        newlines += block[..n].iter().filter(|b| **b == b'\n').count();
    }
}

/// Visits the file's lines from the last one that starts before `before`
/// back to its first, each with where it starts and what it parses as,
/// while `visit` says go on; blank lines are passed over.
fn walk_back(
    path: &Path,
    before: Option<u64>,
    mut visit: impl FnMut(u64, Result<Line, String>) -> bool,
) -> std::io::Result<()> {
    let mut file = match std::fs::File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    let len = file.metadata()?.len();
    let mut pos = before.unwrap_or(len).min(len);
    // Bytes from `pos` on not yet taken as lines: the head of a line whose
    // start is further back.
    let mut pending: Vec<u8> = Vec::new();
    while pos > 0 {
        let start = pos.saturating_sub(BLOCK);
        let mut block = vec![0; (pos - start) as usize];
        file.seek(SeekFrom::Start(start))?;
        file.read_exact(&mut block)?;
        block.extend_from_slice(&pending);
        pending = block;
        pos = start;
        // Whole lines are those after the first newline, or all of it at
        // the file's start.
        let cut = match (pos, pending.iter().position(|b| *b == b'\n')) {
            (0, _) => 0,
            (_, Some(newline)) => newline + 1,
            (_, None) => continue,
        };
        let whole = pending.split_off(cut);
        let base = pos + cut as u64;
        let mut lines: Vec<(u64, &[u8])> = Vec::new();
        let mut at = 0usize;
        for line in whole.split(|b| *b == b'\n') {
            lines.push((base + at as u64, line));
            at += line.len() + 1;
        }
        for (offset, bytes) in lines.into_iter().rev() {
            let text = String::from_utf8_lossy(bytes);
            if text.trim().is_empty() {
                continue;
            }
            let line = serde_json::from_str::<Line>(&text).map_err(|e| e.to_string());
            if !visit(offset, line) {
                return Ok(());
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conversation::sessions::VERSION;

    fn line(n: usize) -> String {
        let line = Line {
            v: VERSION,
            id: format!("a{n}"),
            kind: "question".into(),
            asked: "x".repeat(n % 7 * 9000),
            ..Line::default()
        };
        serde_json::to_string(&line).unwrap()
    }

    #[test]
    fn pages_back_through_blocks_to_the_start_missing_nothing_and_skipping_a_torn_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sessions.jsonl");
        let mut text: String = (0..40).map(|n| line(n) + "\n").collect();
        text.push_str("{\"v\":1,\"id\":\"torn");
        crate::atomic::write(&path, text.as_bytes()).unwrap();
        let mut seen = Vec::new();
        let mut before = None;
        loop {
            let page = read_back(&path, before, 6).unwrap();
            assert!(page.lines.len() <= 6);
            let ids: Vec<String> = page.lines.iter().map(|(_, l)| l.id.clone()).collect();
            seen.splice(0..0, ids);
            for (offset, l) in &page.lines {
                assert!(
                    text[*offset as usize..].starts_with(&format!("{{\"v\":1,\"id\":\"{}\"", l.id))
                );
            }
            match page.older {
                Some(offset) => before = Some(offset),
                None => break,
            }
        }
        let all: Vec<String> = (0..40).map(|n| format!("a{n}")).collect();
        assert_eq!(seen, all);
        assert!(read_back(&dir.path().join("none"), None, 5)
            .unwrap()
            .lines
            .is_empty());
    }

    #[test]
    fn since_stops_at_the_first_older_line_and_names_a_torn_one_after_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sessions.jsonl");
        let at = |minute: i64| DateTime::from_timestamp(1_800_000_000 + minute * 60, 0).unwrap();
        let mut text = String::new();
        for minute in 0..10 {
            let line = Line {
                v: VERSION,
                id: format!("m{minute}"),
                time: at(minute),
                kind: "answer".into(),
                ..Line::default()
            };
            text.push_str(&serde_json::to_string(&line).unwrap());
            text.push('\n');
            if minute == 7 {
                text.push_str("{torn\n");
            }
        }
        crate::atomic::write(&path, text.as_bytes()).unwrap();
        let (lines, torn) = since(&path, at(6)).unwrap();
        let ids: Vec<&str> = lines.iter().map(|l| l.id.as_str()).collect();
        assert_eq!(ids, ["m6", "m7", "m8", "m9"]);
        assert_eq!(torn.len(), 1);
        assert!(text[torn[0].0 as usize..].starts_with("{torn"));
    }
}
