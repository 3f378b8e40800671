//! Which files the brake requires (DESIGN 8), as they are now: the identity
//! memories that did not fit the identity budget (boot lists them), every
//! memory under `memory/` whose front matter says `must_read: true`, and
//! `[brake] must_read`.

use std::io::Read;

use super::{digest, Required};
use crate::home::Home;
use crate::memory::front_matter;

/// How much of a memory file is read to find its front matter.
const HEAD_BYTES: u64 = 8 * 1024;

/// The required files, each once, in a stable order: `from_boot` (the
/// overflowed identity memories), then `must_read: true` memories, then
/// `configured` (`[brake] must_read`).
pub fn required(home: &Home, from_boot: &[String], configured: &[String]) -> Vec<Required> {
    let mut paths: Vec<String> = from_boot.to_vec();
    for path in must_read_memories(home) {
        if !paths.contains(&path) {
            paths.push(path);
        }
    }
    for path in configured {
        let path = path.trim().trim_start_matches("./").to_string();
        if !path.is_empty() && !paths.contains(&path) {
            paths.push(path);
        }
    }
    paths
        .into_iter()
        .map(|path| Required {
            digest: now(home, &path),
            path,
        })
        .collect()
}

/// The digest of `rel` now, `None` if it is missing or cannot be read.
pub fn now(home: &Home, rel: &str) -> Option<u64> {
    let path = home.path(rel);
    if !path.starts_with(home.root()) {
        return None;
    }
    std::fs::read(path).ok().map(|b| digest(&b))
}

/// Every `memory/**/*.md` whose front matter has `must_read: true`. Only
/// the head of each file is read: front matter comes first.
fn must_read_memories(home: &Home) -> Vec<String> {
    let mut found = Vec::new();
    for entry in walkdir::WalkDir::new(home.memory_dir())
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| !e.file_name().as_encoded_bytes().starts_with(b"."))
        .flatten()
    {
        if !entry.file_type().is_file() || entry.path().extension().is_none_or(|x| x != "md") {
            continue;
        }
        let mut head = Vec::new();
        let read = std::fs::File::open(entry.path())
            .and_then(|f| f.take(HEAD_BYTES).read_to_end(&mut head));
        if read.is_err() || !head.starts_with(b"---") {
            continue;
        }
        let text = String::from_utf8_lossy(&head);
        let must = front_matter::split(&text)
            .ok()
            .and_then(|s| s.yaml)
            .and_then(|yaml| front_matter::parse(yaml).ok())
            .is_some_and(|f| f.must_read);
        if must {
            found.push(home.relative(entry.path()));
        }
    }
    found
}
