//! Which files the brake requires (DESIGN 8), as they are now: what boot
//! lists (the identity memories that did not fit the identity budget, and
//! every memory under `memory/` whose front matter says `must_read: true`,
//! found by boot's cached walk), and `[brake] must_read`.

use super::{digest, Required};
use crate::home::Home;

/// The required files, each once, in a stable order: `from_boot` (the
/// overflowed identity memories and the `must_read: true` ones), then
/// `configured` (`[brake] must_read`).
pub fn required(home: &Home, from_boot: &[String], configured: &[String]) -> Vec<Required> {
    let mut paths: Vec<String> = from_boot.to_vec();
    for path in configured {
        let path = path.trim().trim_start_matches("./").to_string();
        if !path.is_empty() && !paths.contains(&path) {
            paths.push(path);
        }
    }
    paths
        .into_iter()
        .map(|path| Required {
            pages: now(home, &path),
            path,
        })
        .collect()
}

/// The digests of `rel`'s pages now, as `read` would return them; `None`
/// if it is missing or cannot be read.
pub fn now(home: &Home, rel: &str) -> Option<Vec<u64>> {
    let path = home.path(rel);
    if !path.starts_with(home.root()) {
        return None;
    }
    let bytes = std::fs::read(path).ok()?;
    let text = String::from_utf8_lossy(&bytes);
    Some(
        crate::memory::page::all(rel, &text)
            .iter()
            .map(|page| digest(page.as_bytes()))
            .collect(),
    )
}
