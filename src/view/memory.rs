//! The memory as the operator reads it off the box: the files under
//! `memory/`, and one file line by line with who wrote each line — the
//! operator by hand, a tick of the agent, an accepted proposal — and
//! which lines came from outside, with the chain that says why (the same
//! judgment a tick's reads get, `provenance::origin::outside_lines`).
//! Closed world: a line whose history cannot be read is outside.
//!
//! A path is taken only under `memory/`, as plain names (no `..`, no
//! hidden name, no link out of the home): what the page asks for cannot
//! reach `.git/`, `.hearth/` or anything else.

use std::path::{Component, Path};

use crate::home::layout::rel;
use crate::home::Home;
use crate::provenance::origin::outside_lines;
use crate::provenance::vouch::Vouched;
use crate::repo::{LineOrigin, Repo};

/// The most of a file shown: past it, the rest is left out, and said.
pub const SHOWN_BYTES: usize = 512 * 1024;

/// The most files listed.
pub const LISTED_FILES: usize = 5000;

/// One file under `memory/`, as listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    /// Its path in the home (`memory/notes/tides.md`).
    pub path: String,
    /// Its size in bytes.
    pub bytes: u64,
}

/// The files under `memory/`, sorted by path (at most [`LISTED_FILES`];
/// the second value says how many more there are). Links are not
/// followed; hidden names are left out.
pub fn list(home: &Home) -> (Vec<Listed>, usize) {
    let mut files: Vec<Listed> = walkdir::WalkDir::new(home.path(rel::MEMORY))
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| e.depth() == 0 || !e.file_name().to_string_lossy().starts_with('.'))
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .filter_map(|e| {
            let path = e.path().strip_prefix(home.root()).ok()?;
            Some(Listed {
                path: path.to_string_lossy().into_owned(),
                bytes: e.metadata().map_or(0, |m| m.len()),
            })
        })
        .collect();
    let more = files.len().saturating_sub(LISTED_FILES);
    files.truncate(LISTED_FILES);
    (files, more)
}

/// Who wrote a line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WrittenBy {
    /// No commit holds it yet: a hand edit the next commit takes.
    Uncommitted,
    /// A tick of the agent's.
    Tick {
        /// The tick.
        n: u64,
        /// Its commit (short id).
        commit: String,
    },
    /// An accepted proposal (the operator's accept vouches for it).
    Proposal {
        /// The proposal.
        n: u64,
        /// The commit (short id).
        commit: String,
    },
    /// A commit by name: the operator's hand edit, or hearth's own.
    By {
        /// Its author.
        author: String,
        /// The commit (short id).
        commit: String,
    },
    /// The history cannot say (it is outside, and says why).
    Unknown,
}

impl WrittenBy {
    fn of(origin: Option<&LineOrigin>) -> WrittenBy {
        match origin {
            None => WrittenBy::Uncommitted,
            Some(o) => match (o.tick, o.proposal) {
                (Some(n), _) => WrittenBy::Tick {
                    n,
                    commit: o.commit.clone(),
                },
                (_, Some(n)) => WrittenBy::Proposal {
                    n,
                    commit: o.commit.clone(),
                },
                _ => WrittenBy::By {
                    author: o.author.clone(),
                    commit: o.commit.clone(),
                },
            },
        }
    }

    /// The commit a citation names (`path:line@commit`), when one holds it.
    pub fn commit(&self) -> Option<&str> {
        match self {
            WrittenBy::Tick { commit, .. }
            | WrittenBy::Proposal { commit, .. }
            | WrittenBy::By { commit, .. } => Some(commit),
            WrittenBy::Uncommitted | WrittenBy::Unknown => None,
        }
    }
}

/// One line of a memory file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryLine {
    /// 1-based.
    pub n: usize,
    /// Its text (invalid UTF-8 shown as U+FFFD).
    pub text: String,
    /// Who wrote it.
    pub written: WrittenBy,
    /// Why it is outside (a chain to where it came from), when it is.
    pub outside: Option<String>,
}

impl MemoryLine {
    /// `memory/x.md:12@abc1234`, or without `@…` when no commit holds it.
    pub fn citation(&self, path: &str) -> String {
        match self.written.commit() {
            Some(commit) => format!("{path}:{}@{commit}", self.n),
            None => format!("{path}:{}", self.n),
        }
    }
}

/// One memory file, line by line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryFile {
    /// Its path in the home.
    pub path: String,
    /// Its lines (those within [`SHOWN_BYTES`]).
    pub lines: Vec<MemoryLine>,
    /// Bytes past [`SHOWN_BYTES`], left out.
    pub left_out: u64,
    /// It is not valid UTF-8 (shown with U+FFFD).
    pub not_utf8: bool,
    /// Why the history could not say who wrote the lines, when it could
    /// not (every line is then outside).
    pub unproven: Option<String>,
}

/// Why a memory file is not shown.
#[derive(Debug, thiserror::Error)]
pub enum NotShown {
    /// Not a plain path under `memory/`.
    #[error("{0}: only files under memory/ are shown")]
    NotMemory(String),
    /// No such file.
    #[error("{0}: no such file")]
    Missing(String),
    /// It could not be read.
    #[error("{path}: {source}")]
    Unreadable {
        /// The path.
        path: String,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
}

/// Whether `path` is a plain relative path under `memory/`: normal
/// components only, none hidden.
fn plain_under_memory(path: &str) -> bool {
    let mut components = Path::new(path).components();
    components.next() == Some(Component::Normal(rel::MEMORY.as_ref()))
        && components.clone().next().is_some()
        && components.all(
            |c| matches!(c, Component::Normal(name) if !name.to_string_lossy().starts_with('.')),
        )
}

/// The memory file `path` (`memory/notes/tides.md`), with each line's
/// origin as the history tells it.
pub fn file(home: &Home, path: &str, vouched: &Vouched) -> Result<MemoryFile, NotShown> {
    if !plain_under_memory(path) {
        return Err(NotShown::NotMemory(path.to_string()));
    }
    let full = home.path(path);
    // A link that leads out of memory/ (or the home) is not followed.
    let inside = match (full.canonicalize(), home.path(rel::MEMORY).canonicalize()) {
        (Ok(real), Ok(memory)) => {
            // Where a link leads must be a plain path too: no hidden name.
            let target = real
                .strip_prefix(&memory)
                .map(|r| format!("{}/{}", rel::MEMORY, r.to_string_lossy()));
            target.is_ok_and(|t| plain_under_memory(&t)) && real.is_file()
        }
        (Err(e), _) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(NotShown::Missing(path.to_string()))
        }
        _ => false,
    };
    if !inside {
        return Err(NotShown::NotMemory(path.to_string()));
    }
    let unreadable = |source| NotShown::Unreadable {
        path: path.to_string(),
        source,
    };
    // Only what is shown is read, checked and blamed: a view costs the
    // same on a 50 MB file as on a 512 KB one.
    let (shown, size) = read_head(&full, SHOWN_BYTES).map_err(unreadable)?;
    let left_out = size.saturating_sub(shown.len() as u64);
    let not_utf8 = match std::str::from_utf8(&shown) {
        Ok(_) => false,
        // A character cut at the end of what is shown is no fault.
        Err(e) => !(left_out > 0 && e.error_len().is_none()),
    };
    let text = String::from_utf8_lossy(&shown).into_owned();
    let origins = if left_out > 0 {
        // A blame reads the whole file and its whole history.
        Err(Unblamed::TooLarge {
            path: path.to_string(),
        })
    } else {
        Repo::open(home.root())
            .and_then(|repo| repo.origins_of(path, &shown))
            .map_err(Unblamed::History)
    };
    Ok(lines_of(path, &text, origins, vouched, left_out, not_utf8))
}

/// Why a file's lines cannot be said to be anyone's: every line is then
/// outside, with this as its reason.
#[derive(Debug, thiserror::Error)]
enum Unblamed {
    /// Past what the page shows: not blamed at all.
    #[error(
        "the file is larger than the {} KiB the page shows, and the page does not blame it \
         whole; `git blame {path}` on the server does",
        SHOWN_BYTES / 1024
    )]
    TooLarge {
        /// The file.
        path: String,
    },
    /// git could not read its history.
    #[error(transparent)]
    History(#[from] crate::repo::RepoError),
}

/// The first `max` bytes of `path`, and its whole size.
fn read_head(path: &Path, max: usize) -> std::io::Result<(Vec<u8>, u64)> {
    use std::io::Read;
    let file = std::fs::File::open(path)?;
    let size = file.metadata()?.len();
    let mut shown = Vec::with_capacity(max.min(size as usize));
    file.take(max as u64).read_to_end(&mut shown)?;
    let size = size.max(shown.len() as u64);
    Ok((shown, size))
}

/// The lines of `text` with their origins (or why there are none): pure.
fn lines_of(
    path: &str,
    text: &str,
    origins: Result<Vec<Option<LineOrigin>>, Unblamed>,
    vouched: &Vouched,
    left_out: u64,
    not_utf8: bool,
) -> MemoryFile {
    let (origins, unproven) = match origins {
        Ok(origins) => (origins, None),
        Err(why) => (Vec::new(), Some(why)),
    };
    let mut outside: std::collections::BTreeMap<usize, String> =
        outside_lines(path, text, &origins, vouched)
            .into_iter()
            .map(|l| (l.line, l.chain))
            .collect();
    let lines = text
        .lines()
        .enumerate()
        .map(|(i, line)| {
            let n = i + 1;
            let (written, outside) = match &unproven {
                Some(why) => (
                    WrittenBy::Unknown,
                    Some(format!(
                        "{path}:{n} (the history cannot say who wrote it: {why})"
                    )),
                ),
                None => (
                    WrittenBy::of(origins.get(i).and_then(Option::as_ref)),
                    outside.remove(&n),
                ),
            };
            MemoryLine {
                n,
                text: line.to_string(),
                written,
                outside,
            }
        })
        .collect();
    MemoryFile {
        path: path.to_string(),
        lines,
        left_out,
        not_utf8,
        unproven: unproven.map(|why| why.to_string()),
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // fixtures, not state
mod tests {
    use super::*;

    #[test]
    fn only_plain_paths_under_memory_are_taken() {
        assert!(plain_under_memory("memory/notes/tides.md"));
        assert!(plain_under_memory("memory/a b.md"));
        assert!(!plain_under_memory("memory"));
        assert!(!plain_under_memory("memory/../hearth.toml"));
        assert!(!plain_under_memory("memory/.git/config"));
        assert!(!plain_under_memory("/etc/passwd"));
        assert!(!plain_under_memory(".hearth/tick.json"));
    }

    #[test]
    fn a_huge_file_is_read_only_as_far_as_it_is_shown_and_its_lines_are_outside() {
        let dir = tempfile::tempdir().unwrap();
        let now = chrono::DateTime::from_timestamp(1_790_000_000, 0).unwrap();
        crate::home::init(dir.path(), now).unwrap();
        let home = Home::open(dir.path()).unwrap();
        let line = "é".repeat(40) + "\n";
        let big = line.repeat(3 * SHOWN_BYTES / line.len());
        std::fs::write(home.path("memory/big.md"), &big).unwrap();
        let file = file(&home, "memory/big.md", &Vouched::default()).unwrap();
        let shown: usize = file.lines.iter().map(|l| l.text.len() + 1).sum();
        assert!(shown <= SHOWN_BYTES + 1, "{shown}");
        assert_eq!(file.left_out, (big.len() - SHOWN_BYTES) as u64);
        assert!(!file.not_utf8, "a character cut at the edge is no fault");
        assert!(file
            .unproven
            .as_deref()
            .is_some_and(|w| w.contains("git blame")));
        assert!(
            file.lines.iter().all(|l| l.outside.is_some()),
            "closed world"
        );
    }

    #[test]
    fn a_link_to_a_hidden_file_of_memory_is_not_shown() {
        let dir = tempfile::tempdir().unwrap();
        let now = chrono::DateTime::from_timestamp(1_790_000_000, 0).unwrap();
        crate::home::init(dir.path(), now).unwrap();
        let home = Home::open(dir.path()).unwrap();
        std::fs::write(home.path("memory/.vault.md"), "the code is 4711\n").unwrap();
        std::os::unix::fs::symlink(".vault.md", home.path("memory/open.md")).unwrap();
        let shown = file(&home, "memory/open.md", &Vouched::default());
        assert!(matches!(shown, Err(NotShown::NotMemory(_))), "{shown:?}");
    }

    #[test]
    fn a_history_that_cannot_be_read_makes_every_line_outside() {
        let file = lines_of(
            "memory/a.md",
            "one\ntwo\n",
            Err(Unblamed::TooLarge {
                path: "memory/a.md".into(),
            }),
            &Vouched::default(),
            0,
            false,
        );
        assert_eq!(file.lines.len(), 2);
        assert!(file
            .lines
            .iter()
            .all(|l| l.written == WrittenBy::Unknown && l.outside.is_some()));
    }

    #[test]
    fn a_line_no_commit_holds_is_cited_without_a_commit() {
        let file = lines_of(
            "memory/a.md",
            "one\n",
            Ok(vec![None]),
            &Vouched::default(),
            0,
            false,
        );
        assert_eq!(file.lines[0].written, WrittenBy::Uncommitted);
        assert_eq!(file.lines[0].citation("memory/a.md"), "memory/a.md:1");
    }
}
