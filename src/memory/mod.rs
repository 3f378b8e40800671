//! Memory files: markdown under `memory/`, with optional YAML front matter.
//!
//! Partial failure is normal here: one memory with broken front matter is a
//! [`MemoryProblem`] (file and line) and falls back to its title; it never
//! stops the others from loading.

pub mod front_matter;
pub mod page;
mod scan_cache;
pub mod watched;

use std::fmt;
use std::io::Read;
use std::path::Path;

use serde::Serialize;

use crate::home::Home;

/// One memory file, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Memory {
    /// Path inside the home, e.g. `memory/core/values.md`.
    pub rel: String,
    /// Its title: the front matter's, else the first heading, else the file name.
    pub title: String,
    /// Its tags.
    pub tags: Vec<String>,
    /// Whether it is a core memory (loaded in full every tick).
    pub core: bool,
    /// Whether the brake requires reading it.
    pub must_read: bool,
    /// The text after the front matter.
    pub body: String,
    /// Set when the front matter could not be used; the memory then counts
    /// as title-only whatever it claimed.
    pub problem: Option<MemoryProblem>,
}

/// A memory file hearth could not fully use, at a line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MemoryProblem {
    /// The file, relative to the home.
    pub path: String,
    /// The line, 1-based.
    pub line: usize,
    /// What is wrong, and the fix.
    pub message: String,
}

impl fmt::Display for MemoryProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.path, self.line, self.message)
    }
}

impl Memory {
    /// Parses the bytes of the memory at `rel`.
    pub fn parse(rel: &str, bytes: &[u8]) -> Memory {
        let (text, utf8_problem) = match std::str::from_utf8(bytes) {
            Ok(text) => (text.to_string(), None),
            Err(e) => {
                let line = crate::bounded::line_at(bytes, e.valid_up_to());
                let problem = MemoryProblem {
                    path: rel.into(),
                    line,
                    message: "not valid UTF-8; undecodable bytes shown as U+FFFD".into(),
                };
                (String::from_utf8_lossy(bytes).into_owned(), Some(problem))
            }
        };
        let problem_at = |p: front_matter::Problem| MemoryProblem {
            path: rel.into(),
            line: p.line,
            message: p.message,
        };
        let (front, body, problem) = match front_matter::split(&text) {
            Err(p) => (None, text.as_str(), Some(problem_at(p))),
            Ok(split) => match split.yaml.map(front_matter::parse) {
                None => (None, split.body, None),
                Some(Ok(front)) => (Some(front), split.body, None),
                Some(Err(p)) => (None, split.body, Some(problem_at(p))),
            },
        };
        let front = front.unwrap_or_default();
        let title = front
            .title
            .clone()
            .filter(|t| !t.is_empty())
            .or_else(|| first_heading(body))
            .unwrap_or_else(|| file_stem(rel));
        Memory {
            rel: rel.into(),
            title,
            tags: front.tags,
            core: front.core,
            must_read: front.must_read,
            body: body.to_string(),
            problem: problem.or(utf8_problem),
        }
    }

    /// Whether any tag is one of `identity_tags` (case-insensitively).
    pub fn is_identity(&self, identity_tags: &[String]) -> bool {
        self.problem.is_none()
            && self
                .tags
                .iter()
                .any(|t| identity_tags.iter().any(|i| i.eq_ignore_ascii_case(t)))
    }
}

fn first_heading(body: &str) -> Option<String> {
    body.lines()
        .map(str::trim)
        .find_map(|l| l.strip_prefix("# "))
        .map(|t| t.trim().to_string())
        .filter(|t| !t.is_empty())
}

fn file_stem(rel: &str) -> String {
    Path::new(rel)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| rel.to_string())
}

/// Files that are layers of their own, not memories among others.
const LAYER_FILES: [&str; 2] = ["memory/prompt.md", "memory/identity.md"];

/// Every core memory: each `.md` under `memory/core/`, and any other memory
/// whose front matter says `core: true`; sorted by path. Files that cannot
/// be read are reported, not fatal.
///
/// Finding the `core: true` ones means looking at every memory, every tick.
/// A cache in `.hearth/core-scan.json` remembers which files (by size and
/// modification time) are not core, so a warm boot only stats them.
pub fn core_memories(home: &Home) -> (Vec<Memory>, Vec<MemoryProblem>) {
    let (core, _, problems) = scan(home);
    (core, problems)
}

/// [`core_memories`], and the other memories whose front matter says
/// `must_read: true` (the brake requires them), found by the same walk: a
/// file cached as neither core nor must-read is only stat'ed.
pub fn scan(home: &Home) -> (Vec<Memory>, Vec<String>, Vec<MemoryProblem>) {
    let core_dir = home.memory_dir().join("core");
    let mut must_read = Vec::new();
    let mut scan = scan_cache::ScanCache::load(home);
    let mut memories = Vec::new();
    let mut problems = Vec::new();
    for (path, in_core, meta) in markdown_files(&home.memory_dir(), &core_dir, false) {
        let path = path.as_path();
        let rel = home.relative(path);
        if LAYER_FILES.contains(&rel.as_str()) {
            continue;
        }
        let stamp = if in_core {
            None
        } else {
            meta.as_ref().map(crate::stamp::Stamp::of)
        };
        if let Some(stamp) = &stamp {
            if scan.known_not_core(&rel, stamp) {
                continue;
            }
        }
        let bytes = if in_core {
            std::fs::read(path).map(Some)
        } else {
            // Outside core/, only a file that opens with front matter can
            // claim `core: true`; the rest are skipped after a few bytes.
            read_if_front_matter(path)
        };
        match bytes {
            Ok(Some(bytes)) => {
                let memory = Memory::parse(&rel, &bytes);
                if let Some(stamp) = stamp {
                    // A must-read memory is never cached as plain.
                    scan.record(&rel, stamp, memory.core || memory.must_read);
                }
                if memory.must_read && !in_core && !memory.core {
                    must_read.push(rel.clone());
                }
                if in_core || memory.core {
                    problems.extend(memory.problem.clone());
                    memories.push(memory);
                }
            }
            Ok(None) => {
                if let Some(stamp) = stamp {
                    scan.record(&rel, stamp, false);
                }
            }
            Err(e) => problems.push(MemoryProblem {
                path: rel,
                line: 1,
                message: format!("cannot be read: {e}"),
            }),
        }
    }
    scan.save(home);
    memories.sort_by(|a, b| a.rel.cmp(&b.rel));
    problems.sort_by(|a, b| a.path.cmp(&b.path));
    must_read.sort();
    (memories, must_read, problems)
}

/// Every `*.md` under `root` (hidden names skipped), with whether it is
/// under `core` (`root_in_core`: `root` itself is) and its metadata.
/// `read_dir`'s entries stat relative to their directory, which on a
/// memory of 10,000 files is a good part of a boot's time saved over
/// stat'ing each full path.
fn markdown_files(
    root: &Path,
    core: &Path,
    root_in_core: bool,
) -> Vec<(std::path::PathBuf, bool, Option<std::fs::Metadata>)> {
    let mut found = Vec::new();
    let mut dirs = vec![(root.to_path_buf(), root_in_core || root == core)];
    while let Some((dir, in_core)) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            if name.as_encoded_bytes().starts_with(b".") {
                continue;
            }
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let path = entry.path();
            if kind.is_dir() {
                let below_core = in_core || path == core;
                dirs.push((path, below_core));
            } else if kind.is_file() && path.extension().is_some_and(|x| x == "md") {
                found.push((path, in_core, entry.metadata().ok()));
            }
        }
    }
    found
}

fn read_if_front_matter(path: &Path) -> std::io::Result<Option<Vec<u8>>> {
    let mut file = std::fs::File::open(path)?;
    let mut bytes = vec![0u8; 6];
    let mut got = 0;
    while got < bytes.len() {
        match file.read(&mut bytes[got..])? {
            0 => break,
            n => got += n,
        }
    }
    bytes.truncate(got);
    let head = bytes.strip_prefix("\u{feff}".as_bytes()).unwrap_or(&bytes);
    if !head.starts_with(b"---") {
        return Ok(None);
    }
    file.read_to_end(&mut bytes)?;
    Ok(Some(bytes))
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // fixtures, not state
mod tests {
    use super::*;

    #[test]
    fn title_comes_from_front_matter_then_heading_then_file_name() {
        let m = Memory::parse(
            "memory/a.md",
            b"---
title: T
---
# H
",
        );
        assert_eq!(m.title, "T");
        let m = Memory::parse(
            "memory/a.md",
            b"intro
# H
",
        );
        assert_eq!(m.title, "H");
        let m = Memory::parse("memory/notes/plain.md", b"no heading");
        assert_eq!(m.title, "plain");
    }

    #[test]
    fn broken_front_matter_is_a_problem_and_drops_the_claims() {
        let m = Memory::parse(
            "memory/core/x.md",
            b"---
tags: [identity
---
# X
",
        );
        let p = m.problem.clone().unwrap();
        assert_eq!(p.path, "memory/core/x.md");
        assert!(p.to_string().starts_with("memory/core/x.md:"));
        assert_eq!(m.title, "X");
        assert!(!m.is_identity(&["identity".into()]));
    }

    #[test]
    fn identity_tags_compare_case_insensitively() {
        let m = Memory::parse(
            "memory/core/x.md",
            b"---
tags: IDENTITY
---
",
        );
        assert!(m.is_identity(&["identity".into()]));
        let m = Memory::parse(
            "memory/core/x.md",
            b"---
tags: kit-identity
---
",
        );
        assert!(!m.is_identity(&["identity".into(), "facet:identity".into()]));
    }

    #[test]
    fn core_memories_are_core_dir_and_core_true() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("hearth.toml"), "").unwrap();
        let home = Home::open(dir.path()).unwrap();
        let mem = dir.path().join("memory");
        std::fs::create_dir_all(mem.join("core")).unwrap();
        std::fs::create_dir_all(mem.join("notes")).unwrap();
        std::fs::write(
            mem.join("identity.md"),
            "---
core: true
---
",
        )
        .unwrap();
        std::fs::write(
            mem.join("core/a.md"),
            "# A
",
        )
        .unwrap();
        std::fs::write(
            mem.join("notes/b.md"),
            "---
core: true
---
# B
",
        )
        .unwrap();
        std::fs::write(
            mem.join("notes/c.md"),
            "# C
",
        )
        .unwrap();
        std::fs::write(
            mem.join("notes/d.md"),
            "---
core: false
---
",
        )
        .unwrap();
        let (found, problems) = core_memories(&home);
        let rels: Vec<&str> = found.iter().map(|m| m.rel.as_str()).collect();
        assert_eq!(rels, ["memory/core/a.md", "memory/notes/b.md"]);
        assert!(problems.is_empty());
    }
}
