//! What the recall index reflects: `files.json`, a manifest of every
//! indexed file's content hash with the size and mtime it had when hashed
//! (so an unchanged file is only stat-ed), and `.hearth/index.lock`, which
//! serialises creating, rebuilding and updating the index across processes.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::IndexError;
use crate::home::layout::rel as layout;
use crate::home::Home;
use crate::io_hint::IoError;
use crate::stamp::{fnv1a, Stamp};

#[derive(Default, Serialize, Deserialize)]
pub(super) struct IndexManifest {
    pub(super) version: u32,
    /// HEAD when the index last changed: the commit it reflects (plus any
    /// uncommitted edits it indexed, which the next tick commits).
    #[serde(default)]
    pub(super) commit: Option<String>,
    #[serde(default)]
    pub(super) updated_at: Option<chrono::DateTime<chrono::Utc>>,
    pub(super) files: BTreeMap<String, FileStamp>,
}

/// What the index knows of one file: its content hash, and the size and
/// modification time it had when hashed, so an unchanged file is not read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct FileStamp {
    pub(super) hash: u64,
    stamp: Stamp,
}

/// `.hearth/index.lock`: held while the index is created, rebuilt or
/// updated. Searching needs no lock: tantivy readers see whole commits.
pub(super) struct IndexLock {
    _file: std::fs::File,
}

impl IndexLock {
    pub(super) fn take(home: &Home) -> Result<IndexLock, IndexError> {
        let path = home.index_lock_path();
        let err = |e: std::io::Error| IndexError::Io(IoError::at(path.clone(), e));
        std::fs::create_dir_all(home.runtime_dir()).map_err(err)?;
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(err)?;
        // Updates take milliseconds; a full build of a large memory takes
        // seconds, and then the wait is said, not silent.
        let quietly_until = std::time::Instant::now() + std::time::Duration::from_secs(1);
        loop {
            match file.try_lock() {
                Ok(()) => break,
                Err(std::fs::TryLockError::WouldBlock)
                    if std::time::Instant::now() < quietly_until =>
                {
                    std::thread::sleep(std::time::Duration::from_millis(5));
                }
                Err(std::fs::TryLockError::WouldBlock) => {
                    tracing::info!("another hearth process is updating the recall index; waiting");
                    file.lock().map_err(err)?;
                    break;
                }
                Err(std::fs::TryLockError::Error(e)) => return Err(err(e)),
            }
        }
        Ok(IndexLock { _file: file })
    }
}

pub(super) fn read_manifest(dir: &Path) -> IndexManifest {
    std::fs::read(dir.join("files.json"))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default()
}

/// `current.json` beside the manifest: the index reflects every watched
/// file (`memory/`, `state/archive/`) as of the running supervisor's
/// memory token, and `state/sessions.jsonl` as of its stamp. While both
/// still hold, a search needs no walk at all.
#[derive(Serialize, Deserialize)]
struct Current {
    version: u32,
    token: String,
    sessions: Option<Stamp>,
}

/// Marks the index current as of `token` and the sessions stamp in
/// `manifest` (what the index holds, not what the file is now). A failure
/// costs only the next search a walk.
pub(super) fn mark_current(dir: &Path, token: &str, manifest: &IndexManifest) {
    let mark = Current {
        version: manifest.version,
        token: token.to_string(),
        sessions: manifest.files.get(layout::SESSIONS).map(|f| f.stamp),
    };
    let json = serde_json::to_vec(&mark).expect("mark serialises");
    if let Err(e) = crate::atomic::replace_unsynced(&dir.join("current.json"), &json) {
        tracing::debug!("recall index not marked current: {e}");
    }
}

/// Forgets the mark (an update is under way, or failed).
pub(super) fn unmark_current(dir: &Path) {
    let _ = std::fs::remove_file(dir.join("current.json"));
}

/// Whether the mark still holds: an index of format `version`, the
/// supervisor's token unchanged, and
/// `state/sessions.jsonl` as it was (and old enough to trust its stamp).
pub(super) fn is_current(home: &Home, dir: &Path, version: u32) -> bool {
    let Some(mark) = std::fs::read(dir.join("current.json"))
        .ok()
        .and_then(|b| serde_json::from_slice::<Current>(&b).ok())
    else {
        return false;
    };
    let sessions = match std::fs::metadata(home.path(layout::SESSIONS)) {
        Ok(meta) => Some(Stamp::of(&meta)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(_) => return false,
    };
    mark.version == version
        && sessions == mark.sessions
        && !sessions.is_some_and(|s| s.is_racy())
        && crate::memory::watched::token(home).is_some_and(|t| t == mark.token)
}

/// Every indexable file (`memory/**/*.md`, `state/archive/*.json`,
/// `collaborations/*.md`) with its
/// stamp. A file whose size and mtime match the manifest (and are not
/// racy) keeps its known hash without being read.
pub(super) fn source_files(home: &Home, known: &IndexManifest) -> BTreeMap<String, FileStamp> {
    let mut files = BTreeMap::new();
    let roots = [
        (home.memory_dir(), "md"),
        (home.archive_dir(), "json"),
        (home.path(layout::COLLABORATIONS), "md"),
    ];
    for (root, ext) in roots {
        for entry in walkdir::WalkDir::new(&root)
            .into_iter()
            .filter_entry(|e| !e.file_name().as_encoded_bytes().starts_with(b"."))
            .flatten()
        {
            if !entry.file_type().is_file() || entry.path().extension().is_none_or(|x| x != ext) {
                continue;
            }
            let Ok(meta) = entry.metadata() else { continue };
            let rel = home.relative(entry.path());
            if let Some(stamp) = file_stamp(entry.path(), &meta, known.files.get(&rel)) {
                files.insert(rel, stamp);
            }
        }
    }
    // What was said through `hearth ask` and by ticks.
    let sessions = home.path(crate::home::layout::rel::SESSIONS);
    if let Ok(meta) = std::fs::metadata(&sessions) {
        let rel = crate::home::layout::rel::SESSIONS.to_string();
        if let Some(stamp) = file_stamp(&sessions, &meta, known.files.get(&rel)) {
            files.insert(rel, stamp);
        }
    }
    files
}

/// The stamps of just these files (relative paths, as the memory watcher
/// names them); a file that is gone is left out. None when a path cannot
/// be accounted for file by file — a directory (moved, removed, created
/// with files in it) — and only a full walk will do.
pub(super) fn stamps_of(
    home: &Home,
    known: &IndexManifest,
    paths: &BTreeSet<String>,
) -> Option<BTreeMap<String, FileStamp>> {
    let mut files = BTreeMap::new();
    for rel in paths {
        let path = home.root().join(rel);
        let meta = std::fs::symlink_metadata(&path);
        let was_a_directory = known
            .files
            .range(format!("{rel}/")..)
            .next()
            .is_some_and(|(k, _)| k.starts_with(&format!("{rel}/")));
        if was_a_directory || meta.as_ref().is_ok_and(|m| m.is_dir()) {
            return None;
        }
        if !indexable(rel) {
            continue;
        }
        match meta {
            Ok(meta) if meta.is_file() => {
                if let Some(stamp) = file_stamp(&path, &meta, known.files.get(rel)) {
                    files.insert(rel.clone(), stamp);
                }
            }
            _ => {} // gone, or not a regular file: not indexed
        }
    }
    Some(files)
}

/// Whether the walk of [`source_files`] would index `rel`.
pub(super) fn indexable(rel: &str) -> bool {
    let under = |dir: &str| rel.strip_prefix(dir).and_then(|r| r.strip_prefix('/'));
    let (rest, ext) = if let Some(rest) = under(layout::MEMORY) {
        (rest, "md")
    } else if let Some(rest) = under(layout::ARCHIVE) {
        (rest, "json")
    } else if let Some(rest) = under(layout::COLLABORATIONS) {
        (rest, "md")
    } else {
        return false;
    };
    !rest.split('/').any(|c| c.is_empty() || c.starts_with('.'))
        && Path::new(rest).extension().is_some_and(|x| x == ext)
}

/// A file's stamp, reusing the known hash when size and mtime match.
fn file_stamp(
    path: &Path,
    meta: &std::fs::Metadata,
    known: Option<&FileStamp>,
) -> Option<FileStamp> {
    let stamp = Stamp::of(meta);
    let hash = match known.filter(|k| k.stamp == stamp && !stamp.is_racy()) {
        Some(k) => k.hash,
        None => fnv1a(&std::fs::read(path).ok()?),
    };
    Some(FileStamp { hash, stamp })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indexable_paths_are_those_the_walk_finds() {
        assert!(indexable("memory/a.md"));
        assert!(indexable("memory/notes/b.md"));
        assert!(indexable("state/archive/messages-2026-01-01-1.json"));
        assert!(!indexable("memory/a.md.swp"));
        assert!(!indexable("memory/.a.md"));
        assert!(!indexable("memory/.hidden/a.md"));
        assert!(!indexable("memory/notes"));
        assert!(!indexable("state/messages.json"));
        assert!(!indexable("state/archive/x.md"));
        assert!(!indexable("outbox/a.md"));
    }
}
