//! Who wrote each line, kept as the history grows instead of found by
//! `git blame` at every recall.
//!
//! A blame walks history until every line asked about is accounted for: a
//! note unchanged for 100,000 commits costs a walk of all of them, for
//! each citation. Here the first-parent history is replayed once, oldest
//! first — a file added gives all its lines to that commit, a file changed
//! keeps the origins of the lines a zero-context line diff leaves alone and
//! gives the new ones to the commit — and then only the commits since the
//! last replay. The result, per file: `.git/hearth/provenance/`, one small
//! JSON file per path (a rebuildable cache beside the objects it derives
//! from; a clone does not carry it). A reader trusts an entry only for the
//! blob it was made for, so a stale or half-written store costs speed,
//! never truth: the caller falls back to `git blame`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use git2::{DiffOptions, Oid, Patch};
use serde::{Deserialize, Serialize};

use super::{Provenance, Repo, RepoError};
use crate::io_hint::IoError;
use crate::stamp::fnv1a;

/// Marks a line that is in no commit (on disk only).
const UNCOMMITTED: u32 = u32::MAX;

/// The commit a line came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Origin {
    id: String,
    time: i64,
    author: String,
    tick: Option<u64>,
}

/// One file's lines, each with the index of its origin.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct FileLines {
    path: String,
    /// The blob these origins are for.
    blob: String,
    origins: Vec<Origin>,
    /// Runs of (line count, origin index).
    runs: Vec<(u32, u32)>,
}

impl FileLines {
    fn lines(&self) -> Vec<u32> {
        self.runs
            .iter()
            .flat_map(|&(n, o)| std::iter::repeat_n(o, n as usize))
            .collect()
    }

    fn set_lines(&mut self, lines: &[u32]) {
        self.runs.clear();
        for &o in lines {
            match self.runs.last_mut() {
                Some((n, last)) if *last == o => *n += 1,
                _ => self.runs.push((1, o)),
            }
        }
        // Origins no line names any more are dropped (and indices remapped).
        let mut used: Vec<u32> = self.runs.iter().map(|r| r.1).collect();
        used.sort_unstable();
        used.dedup();
        if used.len() < self.origins.len() {
            let map: HashMap<u32, u32> = used
                .iter()
                .enumerate()
                .map(|(i, &o)| (o, i as u32))
                .collect();
            self.origins = used
                .iter()
                .map(|&o| self.origins[o as usize].clone())
                .collect();
            for run in &mut self.runs {
                run.1 = map[&run.1];
            }
        }
    }
}

/// Each new line's origin index after `old` became `new`: lines the diff
/// leaves alone keep theirs, the others get `fresh`. None if the diff does
/// not add up (then the caller forgets the file rather than guess).
fn carry(old_lines: &[u32], old: &[u8], new: &[u8], fresh: u32) -> Option<Vec<u32>> {
    let mut opts = DiffOptions::new();
    opts.context_lines(0);
    let patch = Patch::from_buffers(old, None, new, None, Some(&mut opts)).ok()?;
    let mut out = Vec::with_capacity(line_count(new));
    let mut cursor = 0usize;
    for h in 0..patch.num_hunks() {
        let (hunk, _) = patch.hunk(h).ok()?;
        let (os, ol) = (hunk.old_start() as usize, hunk.old_lines() as usize);
        // With no old lines, old_start is the line the new ones follow.
        let begin = if ol == 0 { os } else { os.checked_sub(1)? };
        out.extend_from_slice(old_lines.get(cursor..begin)?);
        out.extend(std::iter::repeat_n(fresh, hunk.new_lines() as usize));
        cursor = begin + ol;
    }
    out.extend_from_slice(old_lines.get(cursor..)?);
    (out.len() == line_count(new)).then_some(out)
}

/// Lines as git counts them: a last line without a newline still counts.
fn line_count(bytes: &[u8]) -> usize {
    let newlines = bytes.iter().filter(|b| **b == b'\n').count();
    newlines + usize::from(bytes.last().is_some_and(|b| *b != b'\n'))
}

/// `.git/hearth/provenance/`: one file per path, and `at`, the commit the
/// replay has reached.
struct Store {
    dir: PathBuf,
}

impl Store {
    fn file(&self, path: &str) -> PathBuf {
        self.dir
            .join(format!("{:016x}.json", fnv1a(path.as_bytes())))
    }

    fn load(&self, path: &str) -> Option<FileLines> {
        let bytes = std::fs::read(self.file(path)).ok()?;
        serde_json::from_slice::<FileLines>(&bytes)
            .ok()
            .filter(|f| f.path == path)
    }

    fn at(&self) -> Option<Oid> {
        let text = std::fs::read_to_string(self.dir.join("at")).ok()?;
        Oid::from_str(text.trim()).ok()
    }

    /// Whole files by rename, not fsynced: a cache. After a power loss a
    /// file may be older than `at`; its blob then no longer matches HEAD's
    /// and the reader blames, slower but never wrong.
    fn write(&self, name: &Path, bytes: &[u8]) -> Result<(), RepoError> {
        crate::atomic::replace_unsynced(name, bytes).map_err(|e| {
            RepoError::Io(IoError::at(e.path, e.source).framed("could not write or remove {}"))
        })
    }
}

impl Repo {
    fn provenance_store(&self) -> Store {
        Store {
            dir: self.git.path().join("hearth/provenance"),
        }
    }

    /// Brings the line origins of the files under `scope` (paths or
    /// directories relative to the root) up to HEAD: the commits since the
    /// last replay, or the whole first-parent history when there was none
    /// (or it is not an ancestor any more). Returns how many commits were
    /// replayed.
    pub fn update_provenance(&self, scope: &[&str]) -> Result<usize, RepoError> {
        let store = self.provenance_store();
        let Some(head) = self.head_commit()? else {
            return Ok(0);
        };
        let at = store.at();
        if at == Some(head.id()) {
            return Ok(0);
        }
        let (chain, reached) = self.first_parent_since(at, usize::MAX);
        if !reached && store.dir.exists() {
            // Rewritten (or never built): start over from the root.
            let _ = std::fs::remove_dir_all(&store.dir);
        }
        std::fs::create_dir_all(&store.dir).map_err(|e| self.io_error(&store.dir, e))?;
        let mut touched: HashMap<String, Option<FileLines>> = HashMap::new();
        for id in chain.iter().rev() {
            let commit = self.git.find_commit(*id).map_err(|e| self.error(e))?;
            let tree = commit.tree().map_err(|e| self.error(e))?;
            let parent_tree = match commit.parent(0) {
                Ok(p) => Some(p.tree().map_err(|e| self.error(e))?),
                Err(_) => None,
            };
            let mut changes = Vec::new();
            for s in scope {
                let old = parent_tree.as_ref().and_then(|t| entry_at(t, s));
                let new = entry_at(&tree, s);
                self.changed_blobs(s, old, new, &mut changes);
            }
            let origin = origin_of(&commit);
            for (path, old, new) in changes {
                let after = match (old, new) {
                    (None, Some(blob)) => self.git.find_blob(blob).ok().map(|b| FileLines {
                        path: path.clone(),
                        blob: blob.to_string(),
                        origins: vec![origin.clone()],
                        runs: match line_count(b.content()) as u32 {
                            0 => vec![],
                            n => vec![(n, 0)],
                        },
                    }),
                    (Some(old), Some(new)) => {
                        let before = match touched.remove(&path) {
                            Some(known) => known,
                            None => store.load(&path),
                        };
                        before.and_then(|f| self.advance(f, old, new, &origin))
                    }
                    _ => None, // deleted
                };
                touched.insert(path, after);
            }
        }
        for (path, lines) in &touched {
            let file = store.file(path);
            match lines {
                Some(lines) => {
                    let json = serde_json::to_vec(lines).expect("origins serialise");
                    store.write(&file, &json)?;
                }
                None => match std::fs::remove_file(&file) {
                    Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                        return Err(self.io_error(&file, e));
                    }
                    _ => {}
                },
            }
        }
        store.write(&store.dir.join("at"), head.id().to_string().as_bytes())?;
        Ok(chain.len())
    }

    /// `lines` after the commit `origin` changed blob `old` into `new`.
    fn advance(
        &self,
        mut lines: FileLines,
        old: Oid,
        new: Oid,
        origin: &Origin,
    ) -> Option<FileLines> {
        if lines.blob != old.to_string() {
            return None;
        }
        let old = self.git.find_blob(old).ok()?;
        let new_blob = self.git.find_blob(new).ok()?;
        let fresh = lines.origins.len() as u32;
        let next = carry(&lines.lines(), old.content(), new_blob.content(), fresh)?;
        lines.origins.push(origin.clone());
        lines.set_lines(&next);
        lines.blob = new.to_string();
        Some(lines)
    }

    /// The files (blobs) that differ between two versions of the entry at
    /// `path`, as (path, old blob, new blob). Subtrees with the same id are
    /// not opened, so a commit that changed one file costs a few tree reads
    /// however large the tree (libgit2's diff with a pathspec walked every
    /// entry: 1.2 ms a commit on 10,000 files).
    fn changed_blobs(
        &self,
        path: &str,
        old: Option<(Oid, git2::ObjectType)>,
        new: Option<(Oid, git2::ObjectType)>,
        out: &mut Vec<(String, Option<Oid>, Option<Oid>)>,
    ) {
        use git2::ObjectType::{Blob, Tree};
        if old.map(|o| o.0) == new.map(|n| n.0) {
            return;
        }
        let blob = |e: Option<(Oid, git2::ObjectType)>| e.filter(|e| e.1 == Blob).map(|e| e.0);
        let tree = |e: Option<(Oid, git2::ObjectType)>| {
            e.filter(|e| e.1 == Tree)
                .and_then(|e| self.git.find_tree(e.0).ok())
        };
        if blob(old).is_some() || blob(new).is_some() {
            out.push((path.to_string(), blob(old), blob(new)));
        }
        let (old_tree, new_tree) = (tree(old), tree(new));
        if old_tree.is_none() && new_tree.is_none() {
            return;
        }
        let mut names: Vec<String> = Vec::new();
        for t in [&old_tree, &new_tree].into_iter().flatten() {
            for e in t.iter() {
                if let Some(name) = e.name() {
                    names.push(name.to_string());
                }
            }
        }
        names.sort();
        names.dedup();
        let find = |t: &Option<git2::Tree<'_>>, name: &str| {
            t.as_ref()
                .and_then(|t| t.get_name(name).map(|e| (e.id(), e.kind().unwrap_or(Blob))))
        };
        for name in names {
            let child = format!("{path}/{name}");
            self.changed_blobs(&child, find(&old_tree, &name), find(&new_tree, &name), out);
        }
    }

    /// [`Repo::provenance`] from the replayed store, when it has the file
    /// as HEAD has it: `Some(None)` when a line asked about is not
    /// committed; `None` when the store cannot say (the caller blames).
    pub(super) fn provenance_from_store(
        &self,
        rel: &str,
        head_blob: Oid,
        on_disk: &[u8],
        start: usize,
        end: usize,
    ) -> Option<Option<Provenance>> {
        let lines = self.provenance_store().load(rel)?;
        if lines.blob != head_blob.to_string() {
            return None;
        }
        let mut per_line = lines.lines();
        let head = self.git.find_blob(head_blob).ok()?;
        if head.content() != on_disk {
            // Edited since the commit: the new lines are nobody's yet.
            per_line = carry(&per_line, head.content(), on_disk, UNCOMMITTED)?;
        }
        let asked = per_line.get(start - 1..end.min(per_line.len()))?;
        if asked.is_empty() {
            return None;
        }
        if asked.contains(&UNCOMMITTED) {
            return Some(None);
        }
        let newest = asked
            .iter()
            .map(|&o| &lines.origins[o as usize])
            .max_by_key(|o| o.time)?;
        Some(Some(Provenance {
            commit: newest.id[..7].to_string(),
            author: newest.author.clone(),
            tick: newest.tick,
        }))
    }
}

/// The entry at `path` (a file or a directory) in `tree`.
fn entry_at(tree: &git2::Tree<'_>, path: &str) -> Option<(Oid, git2::ObjectType)> {
    let e = tree.get_path(Path::new(path)).ok()?;
    Some((e.id(), e.kind()?))
}

fn origin_of(commit: &git2::Commit<'_>) -> Origin {
    let tick = super::trailers::number(commit.message().unwrap_or(""), super::trailers::TICK);
    Origin {
        id: commit.id().to_string(),
        time: commit.time().seconds(),
        author: commit.author().name().unwrap_or("").to_string(),
        tick,
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // fixtures, not state
mod tests {
    use super::*;
    use crate::repo::Identity;

    /// Every line of every file, as the store answers and as `git blame`
    /// does (the store removed), after a history of inserts, deletes,
    /// rewrites, a file removed and re-added, a last line without a
    /// newline, and edits not yet committed — replayed in several steps.
    #[test]
    fn the_replayed_origins_agree_with_git_blame_line_by_line() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let repo = Repo::init(root).unwrap();
        std::fs::create_dir_all(root.join("memory")).unwrap();
        let people = [
            Identity::hearth(),
            Identity {
                name: "Ada".into(),
                email: "ada@example.org".into(),
            },
        ];
        let mut a: Vec<String> = (0..12).map(|i| format!("line {i}")).collect();
        let mut b: Vec<String> = (0..5).map(|i| format!("b {i}")).collect();
        let write = |rel: &str, lines: &[String], newline: bool| {
            let mut text = lines.join("\n");
            if newline {
                text.push('\n');
            }
            std::fs::write(root.join(rel), text).unwrap();
        };
        let t0 = chrono::DateTime::from_timestamp(1_700_000_000, 0).unwrap();
        for n in 0..24usize {
            match n % 6 {
                0 => a.insert(n % a.len(), format!("inserted at {n}")),
                1 => {
                    a.remove((n * 5) % a.len());
                }
                2 => {
                    let at = (n * 3) % a.len();
                    a[at] = format!("rewritten at {n}");
                }
                3 => b.push(format!("b appended at {n}")),
                4 if n == 10 => {
                    std::fs::remove_file(root.join("memory/b.md")).unwrap();
                }
                _ => a.extend([format!("tail {n}"), format!("tail {n}b")]),
            }
            write("memory/a.md", &a, n % 4 != 3);
            if n != 10 {
                write("memory/b.md", &b, true);
            }
            std::fs::write(root.join("other.txt"), format!("{n}")).unwrap();
            let message = format!("tick {n}\n\nHearth-Tick: {n}\n");
            let when = t0 + chrono::Duration::seconds(n as i64 * 60);
            repo.commit(&["."], &people[n % 2], &message, when).unwrap();
            if n % 7 == 3 {
                repo.update_provenance(&["memory"]).unwrap();
            }
        }
        assert!(repo.update_provenance(&["memory"]).unwrap() > 0);
        assert_eq!(repo.update_provenance(&["memory"]).unwrap(), 0, "at HEAD");
        // Edited on disk, not committed: those lines are nobody's yet.
        a[2] = "edited by hand, not committed".into();
        write("memory/a.md", &a, true);

        let answers = |repo: &Repo| {
            let mut all = Vec::new();
            for (rel, len) in [("memory/a.md", a.len()), ("memory/b.md", b.len())] {
                for line in 1..=len {
                    all.push(repo.provenance(rel, line, line));
                }
                all.push(repo.provenance(rel, 1, len));
            }
            all
        };
        let from_store = answers(&repo);
        assert!(from_store[2].is_none(), "the uncommitted line");
        assert!(from_store.iter().filter(|p| p.is_some()).count() > 20);
        std::fs::remove_dir_all(root.join(".git/hearth/provenance")).unwrap();
        let from_blame = answers(&repo);
        assert_eq!(from_store, from_blame);
    }

    #[test]
    fn unchanged_lines_keep_their_origin_and_new_ones_take_the_commits() {
        let old = b"a\nb\nc\nd\n";
        let new = b"a\nB\nc\nd\ne\n";
        assert_eq!(carry(&[0, 0, 1, 1], old, new, 2), Some(vec![0, 2, 1, 1, 2]));
        // Lines removed, one inserted at the top, no newline at the end.
        let new = b"z\na\nd";
        assert_eq!(carry(&[0, 1, 2, 3], old, new, 9), Some(vec![9, 0, 9]));
        assert_eq!(line_count(b""), 0);
        assert_eq!(line_count(b"x"), 1);
    }
}
