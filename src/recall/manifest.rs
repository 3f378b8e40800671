//! What the recall index reflects: `files.json`, a manifest of every
//! indexed file's content hash with the size and mtime it had when hashed
//! (so an unchanged file is only stat-ed), and `.hearth/index.lock`, which
//! serialises creating, rebuilding and updating the index across processes.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::index::IndexError;
use crate::home::Home;
use crate::stamp::{fnv1a, Stamp};

#[derive(Default, Serialize, Deserialize)]
pub(super) struct Manifest {
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
        let path = home.runtime_dir().join("index.lock");
        let err = |e: std::io::Error| IndexError::Tantivy {
            dir: path.clone(),
            message: e.to_string(),
        };
        std::fs::create_dir_all(home.runtime_dir()).map_err(err)?;
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(err)?;
        file.lock().map_err(err)?;
        Ok(IndexLock { _file: file })
    }
}

pub(super) fn read_manifest(dir: &Path) -> Manifest {
    std::fs::read(dir.join("files.json"))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default()
}

/// Every indexable file (`memory/**/*.md`, `state/archive/*.json`) with its
/// stamp. A file whose size and mtime match the manifest (and are not
/// racy) keeps its known hash without being read.
pub(super) fn source_files(home: &Home, known: &Manifest) -> BTreeMap<String, FileStamp> {
    let mut files = BTreeMap::new();
    let roots = [
        (home.memory_dir(), "md"),
        (home.state_dir().join("archive"), "json"),
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
            let stamp = Stamp::of(&meta);
            let rel = home.relative(entry.path());
            let reusable = known
                .files
                .get(&rel)
                .filter(|k| k.stamp == stamp && !stamp.is_racy());
            let hash = match reusable {
                Some(k) => k.hash,
                None => match std::fs::read(entry.path()) {
                    Ok(bytes) => fnv1a(&bytes),
                    Err(_) => continue,
                },
            };
            files.insert(rel, FileStamp { hash, stamp });
        }
    }
    files
}
