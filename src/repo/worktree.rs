//! The working tree as hearth sees it: which files changed since the index,
//! and staging them. hearth does this itself instead of libgit2's status and
//! `add_all`, because the home is edited by hand while hearth commits:
//!
//! - **Files change under the commit.** libgit2 failed the whole commit
//!   ("file changed before we could read it") and could die of SIGBUS on a
//!   file truncated while mapped. Here a file is read with plain `read(2)`,
//!   its stat taken before and after: a file that keeps changing is staged as
//!   read and its index entry *smudged* (size 0), so the next scan looks at
//!   it again. Nothing fails.
//! - **Paths are paths.** A file named `memory/*.md` is that file, never a
//!   pattern matching the operator's files.
//! - **What is in the home is committed.** Only the home's own `.gitignore`
//!   and `.git/info/exclude` (the operator's) are honoured; ignore files
//!   deeper down (which the agent could write) are not. Names that are not
//!   UTF-8 or hold a newline are committed as the bytes they are.
//! - **A bad corner is skipped and named**, never fatal: a directory nested
//!   too deep, a FIFO, a file that cannot be read.
//!
//! It also keeps libgit2 from reading the working tree on its own when the
//! index is written: every racy entry (one as new as the index) is either
//! verified here or smudged, and marked up to date.

use std::collections::HashSet;
use std::ffi::OsStr;
use std::fs::Metadata;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::{Duration, SystemTime};

use git2::{Index, IndexEntry, IndexTime, ObjectType, Oid, Repository};

use super::stable_read::read_stable;

/// libgit2 refuses to walk deeper than 100 levels; hearth stops earlier and
/// says where.
pub const MAX_DEPTH: usize = 64;
/// `GIT_INDEX_ENTRY_UPTODATE`: an in-memory flag telling libgit2 the entry
/// was just checked, so writing the index does not diff it against the disk.
const UPTODATE: u16 = 1 << 2;
/// A file changed this recently may change again within the file system's
/// timestamp granularity without its stat showing it: its entry is smudged.
const RECENT: Duration = Duration::from_secs(2);

/// A path inside the home as git stores it: bytes, `/`-separated.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RepoPath(pub Vec<u8>);

impl RepoPath {
    fn as_path(&self) -> &Path {
        Path::new(OsStr::from_bytes(&self.0))
    }

    fn is_under(&self, prefix: &[u8]) -> bool {
        prefix.is_empty()
            || self.0 == prefix
            || (self.0.starts_with(prefix) && self.0.get(prefix.len()) == Some(&b'/'))
    }
}

impl std::fmt::Display for RepoPath {
    /// UTF-8 as is; anything else escaped (`\n`, `\xff`), so a name can be
    /// logged and put in a commit message on one line.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for chunk in self.0.utf8_chunks() {
            for c in chunk.valid().chars() {
                if c.is_control() {
                    write!(f, "{}", c.escape_default())?;
                } else {
                    write!(f, "{c}")?;
                }
            }
            for b in chunk.invalid() {
                write!(f, "\\x{b:02x}")?;
            }
        }
        Ok(())
    }
}

/// What one look at the working tree found.
#[derive(Debug, Default)]
pub struct Scan {
    /// Files added, modified or deleted since the index.
    pub changed: Vec<RepoPath>,
    /// What was skipped and why, one sentence each naming the path.
    pub problems: Vec<String>,
    /// Files read again whose content had not changed (a touch, a smudged
    /// entry): their index entries were refreshed, worth keeping when many.
    pub refreshed: usize,
    /// Symbolic links to a folder of the home (or into `.git/`), left out:
    /// named in `problems` too, and worth a flare of their own.
    pub home_links: Vec<RepoPath>,
}

/// What looking at one file found.
struct Look {
    /// Its content differs from the index entry.
    changed: bool,
    /// It was read (its stat did not vouch for it).
    read: bool,
}

/// Whether a scan only looks, or also stages what it finds.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Look,
    Stage,
}

/// The operator's ignore rules: the home's `.gitignore` and
/// `.git/info/exclude`, nothing deeper.
pub struct RootIgnore(ignore::gitignore::Gitignore);

impl RootIgnore {
    pub fn load(root: &Path) -> (RootIgnore, Vec<String>) {
        let mut builder = ignore::gitignore::GitignoreBuilder::new(root);
        let mut problems = Vec::new();
        for file in [root.join(".gitignore"), root.join(".git/info/exclude")] {
            if file.is_file() {
                if let Some(e) = builder.add(&file) {
                    problems.push(format!("{}: {e}", file.display()));
                }
            }
        }
        let matcher = builder.build().unwrap_or_else(|e| {
            problems.push(format!("{}: {e}", root.join(".gitignore").display()));
            ignore::gitignore::Gitignore::empty()
        });
        (RootIgnore(matcher), problems)
    }

    fn ignores(&self, rel: &Path, is_dir: bool) -> bool {
        self.0.matched(rel, is_dir).is_ignore()
    }
}

/// One look at (and maybe staging of) the files under `scope` (literal
/// paths relative to `root`; empty for the whole home).
pub struct Scanner<'a> {
    pub git: &'a Repository,
    pub root: &'a Path,
    pub index: &'a mut Index,
    /// The index file's mtime when it was read: entries as new are racy.
    pub stamp: Option<SystemTime>,
    pub ignore: &'a RootIgnore,
    pub mode: Mode,
}

impl Scanner<'_> {
    pub fn scan(&mut self, scope: &[RepoPath]) -> Result<Scan, git2::Error> {
        let mut scan = Scan::default();
        let mut seen: HashSet<Vec<u8>> = HashSet::new();
        let mut skipped: Vec<Vec<u8>> = Vec::new();
        for part in scope {
            // A path through a link (`memory/up/.git/index`, as a watcher
            // that follows links names it) is no file of the home: the link
            // itself is judged where its own folder is walked.
            if self.through_link(part) {
                continue;
            }
            self.walk(part, &mut scan, &mut seen, &mut skipped)?;
        }
        // What the index holds under the scope and the disk no longer does
        // (a path under a link too: a commit of old took files through it).
        let gone: Vec<RepoPath> = self
            .index
            .iter()
            .map(|e| RepoPath(e.path))
            .filter(|p| scope.iter().any(|s| p.is_under(&s.0)))
            .filter(|p| !seen.contains(&p.0))
            .filter(|p| !skipped.iter().any(|s| p.is_under(s)))
            .filter(|p| !scan.home_links.contains(p))
            .collect();
        for path in gone {
            if self.mode == Mode::Stage {
                self.index.remove_path(path.as_path())?;
            }
            scan.changed.push(path);
        }
        if self.mode == Mode::Stage {
            self.settle_racy(&seen)?;
        }
        scan.changed.sort();
        scan.changed.dedup();
        Ok(scan)
    }

    fn walk(
        &mut self,
        part: &RepoPath,
        scan: &mut Scan,
        seen: &mut HashSet<Vec<u8>>,
        skipped: &mut Vec<Vec<u8>>,
    ) -> Result<(), git2::Error> {
        let start = self.root.join(part.as_path());
        let mut walker = walkdir::WalkDir::new(&start)
            .follow_links(false)
            .follow_root_links(false)
            .into_iter();
        while let Some(next) = walker.next() {
            let entry = match next {
                Ok(entry) => entry,
                Err(e) => {
                    // Gone meanwhile: a deletion. Anything else: left as
                    // it is in the index, and named.
                    if e.io_error().map(|io| io.kind()) == Some(std::io::ErrorKind::NotFound) {
                        continue;
                    }
                    if let Some(rel) = e.path().and_then(|p| self.relative(p)) {
                        skipped.push(rel.0);
                    }
                    scan.problems
                        .push(format!("{e}; not committed until it can be read"));
                    continue;
                }
            };
            let Some(rel) = self.relative(entry.path()) else {
                continue;
            };
            let name = entry.file_name();
            let file_type = entry.file_type();
            let top = rel.0.split(|b| *b == b'/').next().unwrap_or(&[]);
            if name == ".git" || top == b".hearth" {
                if file_type.is_dir() {
                    walker.skip_current_dir();
                }
                continue;
            }
            if rel.0.is_empty() {
                continue; // the home itself
            }
            let depth = rel.0.iter().filter(|b| **b == b'/').count() + 1;
            if file_type.is_dir() {
                if depth >= MAX_DEPTH {
                    scan.problems.push(format!(
                        "{} is nested {depth} directories deep (more than {MAX_DEPTH}); hearth \
                         skips it and commits nothing below it: move it nearer the top",
                        self.root.join(rel.as_path()).display()
                    ));
                    skipped.push(rel.0.clone());
                    walker.skip_current_dir();
                } else if self.ignore.ignores(rel.as_path(), true) && !self.tracks_under(&rel) {
                    walker.skip_current_dir();
                }
                continue;
            }
            if self.ignore.ignores(rel.as_path(), false)
                && self.index.get_path(rel.as_path(), 0).is_none()
            {
                continue;
            }
            // A write in progress, or one a kill cut short: never a file
            // of anyone's to commit (once tracked, it is left as it is).
            // One whose writer is gone holds what was never written: it goes.
            if crate::atomic::is_temp_name(&name.to_string_lossy())
                && self.index.get_path(rel.as_path(), 0).is_none()
            {
                crate::atomic::remove_if_stale_temp(entry.path());
                continue;
            }
            if !file_type.is_file() && !file_type.is_symlink() {
                scan.problems.push(format!(
                    "{} is not a regular file (a FIFO, socket or device); not committed",
                    entry.path().display()
                ));
                skipped.push(rel.0.clone());
                continue;
            }
            if file_type.is_symlink() {
                if let Some(why) = self.link_into_home(entry.path()) {
                    scan.problems.push(why);
                    scan.home_links.push(rel);
                    continue;
                }
            }
            match self.look_at(&rel, entry.path()) {
                Ok(Some(Look { changed, read })) => {
                    seen.insert(rel.0.clone());
                    if changed {
                        scan.changed.push(rel);
                    } else if read {
                        scan.refreshed += 1;
                    }
                }
                Ok(None) => {} // vanished: the index entry, if any, is a deletion
                Err(Unlooked::Skip(why)) => {
                    scan.problems.push(why);
                    skipped.push(rel.0.clone());
                }
                Err(Unlooked::Git(e)) => return Err(e),
            }
        }
        Ok(())
    }

    /// Whether `path` differs from its index entry (staging it if so, in
    /// `Stage` mode). `None` when the file vanished meanwhile.
    fn look_at(&mut self, rel: &RepoPath, path: &Path) -> Result<Option<Look>, Unlooked> {
        let Ok(meta) = std::fs::symlink_metadata(path) else {
            return Ok(None);
        };
        let entry = self.index.get_path(rel.as_path(), 0);
        if let Some(entry) = &entry {
            if stat_matches(entry, &meta) && !self.is_racy(entry) && entry.file_size != 0 {
                return Ok(Some(Look {
                    changed: false,
                    read: false,
                }));
            }
        }
        let Some((bytes, meta, stable)) = read_stable(path, meta).map_err(|e| {
            Unlooked::Skip(format!(
                "{} cannot be read ({e}); not committed until it can",
                path.display()
            ))
        })?
        else {
            return Ok(None);
        };
        let mode = file_mode(&meta);
        let id = Oid::hash_object(ObjectType::Blob, &bytes).map_err(Unlooked::Git)?;
        let same = entry.as_ref().is_some_and(|e| e.id == id && e.mode == mode);
        // A merge that stopped half way (a sync by hand, a `git pull` gone
        // wrong) never reaches a commit hearth makes, whoever wrote it.
        if !same && super::conflict::has_conflict_markers(&bytes) {
            return Err(Unlooked::Skip(format!(
                "{} holds git conflict markers (<<<<<<<, =======, >>>>>>>); not committed \
                 until they are resolved (edit the file, or `git checkout -- FILE` for the \
                 committed version)",
                path.display()
            )));
        }
        if self.mode == Mode::Stage {
            if !same {
                self.git.blob(&bytes).map_err(Unlooked::Git)?;
            }
            let smudge = !stable || is_recent(&meta);
            let new = index_entry(rel, &meta, mode, id, smudge);
            self.index.add(&new).map_err(Unlooked::Git)?;
        }
        Ok(Some(Look {
            changed: !same,
            read: true,
        }))
    }

    /// Racy entries not looked at in this scan are smudged so the next look
    /// hashes them, and marked up to date so writing the index reads nothing.
    fn settle_racy(&mut self, seen: &HashSet<Vec<u8>>) -> Result<(), git2::Error> {
        let racy: Vec<IndexEntry> = self
            .index
            .iter()
            .filter(|e| !seen.contains(&e.path) && self.is_racy(e))
            .collect();
        for mut entry in racy {
            entry.file_size = 0;
            entry.flags_extended |= UPTODATE;
            self.index.add(&entry)?;
        }
        Ok(())
    }

    fn is_racy(&self, entry: &IndexEntry) -> bool {
        let Some(stamp) = self.stamp else {
            return false;
        };
        let mtime = SystemTime::UNIX_EPOCH
            + Duration::new(
                entry.mtime.seconds().max(0) as u64,
                entry.mtime.nanoseconds(),
            );
        mtime >= stamp
    }

    /// Whether a folder on the way to `part` (not `part` itself) is a
    /// symbolic link, looked at without following any.
    fn through_link(&self, part: &RepoPath) -> bool {
        let mut prefix = self.root.to_path_buf();
        let mut components = part.as_path().components().peekable();
        while let Some(component) = components.next() {
            if components.peek().is_none() {
                return false;
            }
            prefix.push(component);
            if std::fs::symlink_metadata(&prefix).is_ok_and(|m| m.file_type().is_symlink()) {
                return true;
            }
        }
        false
    }

    /// Why the link at `path` stays out of the commit, when it leads to a
    /// folder of the home or anywhere into `.git/` or `.hearth/`: git
    /// stores a link as a link, but hearth's own readers and a watcher
    /// that follows links would take the home's files (its repository's
    /// internals among them) for files under the link — a commit of them
    /// once broke every later commit ("invalid entry mode"). A link out of
    /// the home, a link to a file of the home and a dangling link are
    /// committed as links.
    fn link_into_home(&self, path: &Path) -> Option<String> {
        let target = std::fs::canonicalize(path).ok()?;
        let root = std::fs::canonicalize(self.root).ok()?;
        let inside = target.strip_prefix(&root).ok()?;
        let top = inside.components().next();
        let internal = top.is_some_and(|c| c.as_os_str() == ".git" || c.as_os_str() == ".hearth");
        if !internal && !target.is_dir() {
            return None;
        }
        Some(format!(
            "{} is a link to {}, a folder of the home: hearth leaves it out of its commits \
             (through it, the home's own files would be taken for new ones, and git's \
             internals with them); every other file is committed as usual. Remove it \
             (`rm {}`), or link to the files themselves",
            path.display(),
            target.display(),
            path.display()
        ))
    }

    fn tracks_under(&self, dir: &RepoPath) -> bool {
        self.index.iter().any(|e| RepoPath(e.path).is_under(&dir.0))
    }

    fn relative(&self, path: &Path) -> Option<RepoPath> {
        let rel = path.strip_prefix(self.root).ok()?;
        Some(RepoPath(rel.as_os_str().as_bytes().to_vec()))
    }
}

enum Unlooked {
    Skip(String),
    Git(git2::Error),
}

fn stat_matches(entry: &IndexEntry, meta: &Metadata) -> bool {
    entry.mtime.seconds() as i64 == meta.mtime()
        && entry.mtime.nanoseconds() as i64 == meta.mtime_nsec()
        && entry.file_size == meta.size() as u32
        && entry.ino == meta.ino() as u32
        && entry.mode == file_mode(meta)
}

fn is_recent(meta: &Metadata) -> bool {
    meta.modified()
        .ok()
        .and_then(|m| crate::clock::file_time_now().duration_since(m).ok())
        .is_none_or(|age| age < RECENT)
}

fn file_mode(meta: &Metadata) -> u32 {
    if meta.is_symlink() {
        0o120000
    } else if meta.mode() & 0o111 != 0 {
        0o100755
    } else {
        0o100644
    }
}

fn index_entry(rel: &RepoPath, meta: &Metadata, mode: u32, id: Oid, smudge: bool) -> IndexEntry {
    IndexEntry {
        ctime: IndexTime::new(meta.ctime() as i32, meta.ctime_nsec() as u32),
        mtime: IndexTime::new(meta.mtime() as i32, meta.mtime_nsec() as u32),
        dev: meta.dev() as u32,
        ino: meta.ino() as u32,
        mode,
        uid: meta.uid(),
        gid: meta.gid(),
        file_size: if smudge { 0 } else { meta.size() as u32 },
        id,
        flags: 0,
        flags_extended: UPTODATE,
        path: rel.0.clone(),
    }
}

/// `scope` as repository paths: `.` or an empty string is the whole home.
pub fn scope_of(pathspecs: &[&str]) -> Vec<RepoPath> {
    if pathspecs
        .iter()
        .any(|p| p.trim_matches('/').is_empty() || *p == ".")
    {
        return vec![RepoPath(Vec::new())];
    }
    pathspecs
        .iter()
        .map(|p| RepoPath(p.trim_end_matches('/').as_bytes().to_vec()))
        .collect()
}

/// Puts every index entry outside `scope` back as `head` has it, so a scoped
/// commit holds only its own paths. The index can carry another commit's
/// staged changes: a supervisor killed between staging a tick and
/// committing it leaves the tick's `state/` staged, and the operator's next
/// `hearth say` must not commit them under its own name; the tick's commit
/// is made when its supervisor recovers. Entries put back are smudged (size
/// 0), so the next scan reads their files again. Returns whether any was.
pub fn unstage_outside(
    git: &Repository,
    index: &mut Index,
    head: Option<&git2::Tree<'_>>,
    scope: &[RepoPath],
) -> Result<bool, git2::Error> {
    if scope.iter().any(|s| s.0.is_empty()) {
        return Ok(false);
    }
    let in_scope = |p: &[u8]| {
        scope
            .iter()
            .any(|s| p == s.0 || (p.starts_with(&s.0) && p.get(s.0.len()) == Some(&b'/')))
    };
    let diff = git.diff_tree_to_index(head, Some(index), None)?;
    let outside: Vec<Vec<u8>> = diff
        .deltas()
        .filter_map(|d| {
            let file = if d.new_file().path_bytes().is_some() {
                d.new_file()
            } else {
                d.old_file()
            };
            file.path_bytes().map(<[u8]>::to_vec)
        })
        .filter(|p| !in_scope(p))
        .collect();
    let any = !outside.is_empty();
    for path in outside {
        let at_head = head.and_then(|t| t.get_path(Path::new(OsStr::from_bytes(&path))).ok());
        match at_head {
            Some(entry) => index.add(&IndexEntry {
                ctime: IndexTime::new(0, 0),
                mtime: IndexTime::new(0, 0),
                dev: 0,
                ino: 0,
                mode: entry.filemode() as u32,
                uid: 0,
                gid: 0,
                file_size: 0,
                id: entry.id(),
                flags: path.len().min(0xfff) as u16,
                flags_extended: 0,
                path,
            })?,
            None => index.remove_path(Path::new(OsStr::from_bytes(&path)))?,
        }
    }
    Ok(any)
}
