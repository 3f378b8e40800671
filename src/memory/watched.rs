//! What boot needs to know of `memory/` — which files are core, which must
//! be read, which cannot be read — kept current by a running supervisor
//! from its watcher's events instead of found by a walk of every file.
//!
//! On 10,000 memory files, the walk (a stat each) is most of a boot. The
//! supervisor watches `memory/` anyway: it scans once when the watch is in
//! place, then re-examines only the paths each event names, and publishes
//! the result with the token that labels it (`boot::snapshot`). A boot that
//! finds the supervisor alive reads only the files listed here.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{markdown_files, read_if_front_matter, Memory, MemoryProblem, LAYER_FILES};
use crate::home::layout::rel;
use crate::home::Home;

/// The claims boot acts on, by path relative to the home.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Claims {
    /// Every memory under `memory/core/`, and every other one whose front
    /// matter says `core: true`.
    pub core: BTreeSet<String>,
    /// Memories outside the core whose front matter says `must_read: true`.
    pub must_read: BTreeSet<String>,
    /// Memories that could not be read, with why: they may claim anything.
    pub unreadable: BTreeMap<String, String>,
}

impl Claims {
    /// From a walk of the whole memory (the supervisor's start).
    pub fn scan(home: &Home) -> Claims {
        let (core, must_read, problems) = super::scan(home);
        let core: BTreeSet<String> = core.into_iter().map(|m| m.rel).collect();
        // A problem on a file that is not a core memory is a read failure:
        // core memories' own problems travel with them when boot parses.
        let unreadable = problems
            .into_iter()
            .filter(|p| !core.contains(&p.path))
            .map(|p| (p.path, p.message))
            .collect();
        Claims {
            core,
            must_read: must_read.into_iter().collect(),
            unreadable,
        }
    }

    /// After events named `paths` (absolute): looks again at just those —
    /// a file is read up to its front matter, a directory (created, moved
    /// in) is walked, and whatever was at or under a path that is gone is
    /// forgotten. Paths outside `memory/` are ignored.
    pub fn update(&mut self, home: &Home, paths: &BTreeSet<PathBuf>) {
        let memory_dir = home.memory_dir();
        let core_dir = memory_dir.join("core");
        for path in paths.iter().filter(|p| p.starts_with(&memory_dir)) {
            let rel = home.relative(path);
            self.forget(&rel);
            let Ok(meta) = std::fs::symlink_metadata(path) else {
                continue; // gone
            };
            if meta.is_dir() {
                if hidden(&rel) {
                    continue;
                }
                let in_core = path.starts_with(&core_dir);
                for (file, under_core, _) in markdown_files(path, &core_dir, in_core) {
                    let rel = home.relative(&file);
                    self.examine(&rel, &file, under_core);
                }
            } else if meta.is_file() && is_memory(&rel) {
                self.examine(&rel, path, path.starts_with(&core_dir));
            }
        }
    }

    /// Drops `rel` and everything under it.
    fn forget(&mut self, rel: &str) {
        let under = format!("{rel}/");
        let gone = |p: &String| p == rel || p.starts_with(&under);
        self.core.retain(|p| !gone(p));
        self.must_read.retain(|p| !gone(p));
        self.unreadable.retain(|p, _| !gone(p));
    }

    /// Records what the memory at `rel` claims.
    fn examine(&mut self, rel: &str, path: &Path, in_core: bool) {
        if LAYER_FILES.contains(&rel) {
            return;
        }
        if in_core {
            // Boot reads it in full anyway, and says then if it cannot.
            self.core.insert(rel.to_string());
            return;
        }
        match read_if_front_matter(path) {
            Ok(Some(bytes)) => {
                let memory = Memory::parse(rel, &bytes);
                if memory.core {
                    self.core.insert(rel.to_string());
                } else if memory.must_read {
                    self.must_read.insert(rel.to_string());
                }
            }
            Ok(None) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                self.unreadable
                    .insert(rel.to_string(), format!("cannot be read: {e}"));
            }
        }
    }

    /// What [`super::scan`] returns, from these claims: the core memories
    /// read and parsed (one read each, no walk), the must-read ones, and
    /// the problems.
    pub fn load(&self, home: &Home) -> (Vec<Memory>, Vec<String>, Vec<MemoryProblem>) {
        let mut memories = Vec::new();
        let mut problems: Vec<MemoryProblem> = self
            .unreadable
            .iter()
            .map(|(path, message)| MemoryProblem {
                path: path.clone(),
                line: 1,
                message: message.clone(),
            })
            .collect();
        for rel in &self.core {
            match std::fs::read(home.root().join(rel)) {
                Ok(bytes) => {
                    let memory = Memory::parse(rel, &bytes);
                    problems.extend(memory.problem.clone());
                    memories.push(memory);
                }
                // Removed since: the event is on its way.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => problems.push(MemoryProblem {
                    path: rel.clone(),
                    line: 1,
                    message: format!("cannot be read: {e}"),
                }),
            }
        }
        problems.sort_by(|a, b| a.path.cmp(&b.path));
        (memories, self.must_read.iter().cloned().collect(), problems)
    }
}

/// What changed under the watched directories since someone last looked:
/// the paths events named, or "look at everything" when an event could not
/// say (an error, an inotify overflow, a flood of paths, a start).
#[derive(Debug, Default)]
pub struct Changes {
    /// The paths events named (absolute).
    pub paths: BTreeSet<PathBuf>,
    /// Whether to look at everything instead.
    pub rescan: bool,
}

/// Past this many distinct paths, one look at everything is cheaper.
const CHANGES_MAX: usize = 10_000;

impl Changes {
    /// Nothing known: the next look is at everything.
    pub fn everything() -> Changes {
        Changes {
            paths: BTreeSet::new(),
            rescan: true,
        }
    }

    /// An event named `paths` (none: it could not say where).
    pub fn note(&mut self, paths: &[PathBuf]) {
        if paths.is_empty() || self.paths.len() + paths.len() > CHANGES_MAX {
            *self = Changes::everything();
        } else if !self.rescan {
            self.paths.extend(paths.iter().cloned());
        }
    }
}

/// `.hearth/memory-seq`: the token and the claims it labels, as one file
/// (one rename), so a reader never pairs a token with other claims.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Published {
    /// Changes with every event under `memory/` and every supervisor start.
    pub token: String,
    /// The claims as of that token.
    pub claims: Claims,
}

/// The published view, if a supervisor is alive to vouch for it.
pub fn vouched(home: &Home) -> Option<Published> {
    if !crate::home::lock::supervisor_running(home) {
        return None;
    }
    let bytes = std::fs::read(home.path(rel::MEMORY_SEQ)).ok()?;
    serde_json::from_slice::<Published>(&bytes)
        .ok()
        .filter(|p| !p.token.is_empty())
}

/// The running supervisor's memory token now, if one runs. Read it
/// *before* the work it is to label: a change after it then makes it stale.
pub fn token(home: &Home) -> Option<String> {
    vouched(home).map(|p| p.token)
}

/// Whether `rel` is a memory file boot would consider: `memory/**/*.md`,
/// no hidden component (an editor's swap file, `.git`).
fn is_memory(rel: &str) -> bool {
    rel.strip_prefix("memory/")
        .is_some_and(|rest| !hidden(rest) && Path::new(rest).extension().is_some_and(|x| x == "md"))
}

fn hidden(rel: &str) -> bool {
    rel.split('/').any(|c| c.is_empty() || c.starts_with('.'))
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // fixtures, not state
mod tests {
    use super::*;

    fn home() -> (tempfile::TempDir, Home) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("hearth.toml"), "").unwrap();
        std::fs::create_dir_all(dir.path().join("memory/core")).unwrap();
        std::fs::create_dir_all(dir.path().join("memory/notes")).unwrap();
        let home = Home::open(dir.path()).unwrap();
        (dir, home)
    }

    fn set(paths: &[&str]) -> BTreeSet<String> {
        paths.iter().map(|p| p.to_string()).collect()
    }

    /// Every change an editor or a shell can make, applied event by event,
    /// ends where a fresh walk would.
    #[test]
    fn updates_from_events_agree_with_a_fresh_scan() {
        let (dir, home) = home();
        let mem = dir.path().join("memory");
        std::fs::write(mem.join("core/a.md"), "# A\n").unwrap();
        std::fs::write(mem.join("notes/b.md"), "---\ncore: true\n---\n# B\n").unwrap();
        std::fs::write(mem.join("notes/c.md"), "# C\n").unwrap();
        let mut claims = Claims::scan(&home);
        assert_eq!(claims.core, set(&["memory/core/a.md", "memory/notes/b.md"]));

        let mut events = BTreeSet::new();
        // c gains must_read, b loses core, a new core file, a swap file.
        std::fs::write(mem.join("notes/c.md"), "---\nmust_read: true\n---\n").unwrap();
        std::fs::write(mem.join("notes/b.md"), "# B, plain now\n").unwrap();
        std::fs::write(mem.join("core/d.md"), "# D\n").unwrap();
        std::fs::write(mem.join("core/.d.md.swp"), "junk").unwrap();
        for f in ["notes/c.md", "notes/b.md", "core/d.md", "core/.d.md.swp"] {
            events.insert(mem.join(f));
        }
        claims.update(&home, &events);
        assert_eq!(claims, Claims::scan(&home));
        assert_eq!(claims.must_read, set(&["memory/notes/c.md"]));

        // A directory of pinned notes moved in, another moved out whole.
        std::fs::create_dir_all(mem.join("incoming/deep")).unwrap();
        std::fs::write(mem.join("incoming/deep/e.md"), "---\ncore: true\n---\n").unwrap();
        std::fs::rename(mem.join("incoming"), mem.join("pinned")).unwrap();
        std::fs::rename(mem.join("core"), dir.path().join("core-away")).unwrap();
        let events = [mem.join("incoming"), mem.join("pinned"), mem.join("core")];
        claims.update(&home, &events.into_iter().collect());
        assert_eq!(claims, Claims::scan(&home));
        assert_eq!(claims.core, set(&["memory/pinned/deep/e.md"]));
    }

    #[test]
    fn loading_the_claims_reads_only_the_listed_files() {
        let (dir, home) = home();
        let mem = dir.path().join("memory");
        std::fs::write(mem.join("core/a.md"), "---\ntags: [x\n---\n# A\n").unwrap();
        std::fs::write(mem.join("notes/b.md"), "---\nmust_read: true\n---\n").unwrap();
        let claims = Claims::scan(&home);
        let (core, must_read, problems) = claims.load(&home);
        assert_eq!(core.len(), 1);
        assert_eq!(core[0].title, "A");
        assert_eq!(must_read, ["memory/notes/b.md"]);
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert_eq!(problems[0].path, "memory/core/a.md");
        // A file the claims do not list is not looked at.
        std::fs::write(mem.join("notes/z.md"), "---\ncore: true\n---\n").unwrap();
        assert_eq!(claims.load(&home).0.len(), 1);
    }
}
