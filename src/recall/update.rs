//! Keeping the recall index true to the files: a full reconcile (walk,
//! compare content hashes with the manifest), or just the paths the
//! supervisor's watcher saw change. Files are read, split and analysed on a
//! thread per core; tantivy's own threads only build postings.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use serde::Serialize;
use tantivy::{doc, IndexWriter, Term};

use super::analysis::Normaliser;
use super::index::{dir_of, RecallIndex, VERSION};
use super::manifest::{
    is_current, mark_current, read_manifest, source_files, stamps_of, unmark_current, FileStamp,
    IndexLock, IndexManifest,
};
use super::units::{analyse, units, Skip};
use super::IndexError;
use crate::atomic;
use crate::home::Home;
use crate::io_hint::IoError;
use crate::memory::watched::token as watched_token;

/// What a reconcile did.
#[derive(Debug, Default, Clone, PartialEq, Serialize)]
pub struct Reconciled {
    /// Files (re)indexed.
    pub indexed: usize,
    /// Files removed from the index.
    pub removed: usize,
    /// Files that could not be indexed, with why (file skipped, others go on).
    pub skipped: Vec<String>,
}

impl RecallIndex {
    /// Throws the index away and builds it again from the files.
    pub fn rebuild(home: &Home) -> Result<(RecallIndex, Reconciled), IndexError> {
        let dir = dir_of(home);
        {
            let _lock = IndexLock::take(home)?;
            if dir.exists() {
                std::fs::remove_dir_all(&dir)
                    .map_err(|e| IndexError::Io(IoError::at(dir.clone(), e)))?;
            }
        }
        let mut index = RecallIndex::open(home)?;
        let done = index.reconcile(home)?;
        Ok((index, done))
    }

    /// Re-indexes the files whose content changed since the manifest, and
    /// drops the ones that are gone. Another process holding the writer is
    /// not an error: it is doing the same work, and the search goes on with
    /// what is committed.
    pub fn reconcile(&mut self, home: &Home) -> Result<Reconciled, IndexError> {
        // One reconcile at a time; a process that waited finds the work
        // done and the manifest current.
        let _lock = IndexLock::take(home)?;
        let as_of = watched_token(home);
        let manifest = read_manifest(&self.dir);
        let current = source_files(home, &manifest);
        self.update(home, manifest, current, |_| true, as_of)
    }

    /// Whether the index already reflects every file, by the running
    /// supervisor's word (its watcher applied every change it saw, and
    /// `state/sessions.jsonl` is unchanged): then a search skips the walk.
    pub fn is_current(&self, home: &Home) -> bool {
        is_current(home, &self.dir, VERSION)
    }

    /// [`reconcile`](Self::reconcile), unless [`is_current`](Self::is_current).
    pub fn catch_up(&mut self, home: &Home) -> Result<Reconciled, IndexError> {
        if self.is_current(home) {
            return Ok(Reconciled::default());
        }
        self.reconcile(home)
    }

    /// Like [`reconcile`](Self::reconcile), for just these files (relative
    /// paths, as the supervisor's memory watcher saw them change): no walk
    /// of the whole memory. Falls back to a full reconcile when a path is
    /// a directory (moved or removed with its files) or the index is new.
    ///
    /// `as_of`: the supervisor's memory token, read before `paths` were
    /// taken from its watcher — every change up to it is among them (or
    /// was applied before), so once they are, the index is marked current
    /// as of that token.
    pub fn reconcile_paths(
        &mut self,
        home: &Home,
        paths: &BTreeSet<String>,
        as_of: Option<String>,
    ) -> Result<Reconciled, IndexError> {
        let _lock = IndexLock::take(home)?;
        let manifest = read_manifest(&self.dir);
        // A new or rebuilt index knows nothing yet: everything is in scope.
        let known = (manifest.version == VERSION).then(|| stamps_of(home, &manifest, paths));
        match known.flatten() {
            Some(current) => self.update(home, manifest, current, |rel| paths.contains(rel), as_of),
            None => {
                // A walk covers everything as of now.
                let as_of = watched_token(home);
                let current = source_files(home, &manifest);
                self.update(home, manifest, current, |_| true, as_of)
            }
        }
    }

    /// Brings the index to `current` (the stamps of the files in scope):
    /// changed files re-indexed, files in scope that are gone removed; then
    /// marked current as of `as_of` (see [`mark_current`]).
    fn update(
        &mut self,
        home: &Home,
        mut manifest: IndexManifest,
        current: BTreeMap<String, FileStamp>,
        in_scope: impl Fn(&str) -> bool,
        as_of: Option<String>,
    ) -> Result<Reconciled, IndexError> {
        let changed: Vec<(&String, &FileStamp)> = current
            .iter()
            .filter(|(rel, stamp)| manifest.files.get(*rel).map(|m| m.hash) != Some(stamp.hash))
            .collect();
        let gone: Vec<String> = manifest
            .files
            .keys()
            .filter(|rel| in_scope(rel) && !current.contains_key(*rel))
            .cloned()
            .collect();
        let mut done = Reconciled::default();
        // Another process may have committed since this reader opened (it
        // did the work this one waited for): see its commit.
        self.reader.reload().map_err(|e| self.err(e))?;
        if changed.is_empty() && gone.is_empty() && manifest.version == VERSION {
            // Stamps may have moved (a touch, a checkout): remember them so
            // the next run need not read those files again.
            let mut moved = false;
            for (rel, stamp) in &current {
                if manifest.files.get(rel) != Some(stamp) {
                    manifest.files.insert(rel.clone(), *stamp);
                    moved = true;
                }
            }
            if moved {
                let json = serde_json::to_vec(&manifest).expect("manifest serialises");
                atomic::write(&self.dir.join("files.json"), &json)?;
            }
            if let Some(token) = &as_of {
                mark_current(&self.dir, token, &manifest);
            }
            return Ok(done);
        }
        unmark_current(&self.dir);
        // A few files (the usual edit) need one small indexing thread;
        // a full build gets a thread per core.
        let writer = if changed.len() < 64 {
            self.index.writer_with_num_threads(1, 15_000_000)
        } else {
            self.index.writer(50_000_000)
        };
        let writer: IndexWriter = match writer {
            Ok(w) => w,
            Err(tantivy::TantivyError::LockFailure(..)) => {
                tracing::debug!("another process is updating the recall index");
                return Ok(done);
            }
            Err(e) => return Err(self.err(e)),
        };
        let f = self.fields;
        for rel in &gone {
            writer.delete_term(Term::from_field_text(f.file, rel));
            manifest.files.remove(rel);
            done.removed += 1;
        }
        let results = self.index_files(home, &writer, &changed)?;
        for ((rel, stamp), result) in changed.into_iter().zip(results) {
            match result {
                Ok(()) => {
                    manifest.files.insert(rel.clone(), *stamp);
                    done.indexed += 1;
                }
                Err(problem) => {
                    tracing::warn!("{problem}");
                    manifest.files.remove(rel);
                    done.skipped.push(problem.to_string());
                }
            }
        }
        let mut writer = writer;
        writer.commit().map_err(|e| self.err(e))?;
        // Each edit adds a small segment, and tantivy merges segments of a
        // size in groups (log merge policy). The writer lives for one
        // reconcile: a merge cut short by its end would leave segments and
        // warnings behind, so the merges it started are waited for (small
        // ones are quick; large ones are rare).
        writer.wait_merging_threads().map_err(|e| self.err(e))?;
        for (rel, stamp) in &current {
            if manifest.files.get(rel).map(|m| m.hash) == Some(stamp.hash) {
                manifest.files.insert(rel.clone(), *stamp);
            }
        }
        manifest.version = VERSION;
        manifest.commit = crate::repo::Repo::open(home.root())
            .ok()
            .and_then(|r| r.head());
        // When these files were written, on the filesystem's clock (like an
        // mtime): the index is a cache, not part of the agent's history.
        manifest.updated_at = Some(crate::clock::file_time_now().into());
        let json = serde_json::to_vec(&manifest).expect("manifest serialises");
        atomic::write(&self.dir.join("files.json"), &json)?;
        self.reader.reload().map_err(|e| self.err(e))?;
        if let Some(token) = &as_of {
            mark_current(&self.dir, token, &manifest);
        }
        Ok(done)
    }

    /// Replaces the documents of each of `files` with its current units:
    /// Ok, or why the file cannot be indexed. Files are read, split and
    /// analysed on as many threads as there are cores (tantivy's own
    /// threads then only build postings).
    fn index_files(
        &self,
        home: &Home,
        writer: &IndexWriter,
        files: &[(&String, &FileStamp)],
    ) -> Result<Vec<Result<(), Skip>>, IndexError> {
        let f = self.fields;
        let results: Mutex<Vec<Option<Result<(), Skip>>>> = Mutex::new(vec![None; files.len()]);
        let failure: Mutex<Option<tantivy::TantivyError>> = Mutex::new(None);
        let next = AtomicUsize::new(0);
        let work = || {
            let mut normaliser = Normaliser::default();
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(&(rel, _)) = files.get(i) else { break };
                let rel: &str = rel;
                // The delete comes before this file's adds, on this thread.
                writer.delete_term(Term::from_field_text(f.file, rel));
                let result = units(home, rel).map(|units| analyse(units, &mut normaliser));
                let result = match result {
                    Ok(analysed) => {
                        for a in analysed {
                            let added = writer.add_document(doc!(
                                f.path => a.unit.path,
                                f.file => rel,
                                f.start => a.unit.start as u64,
                                f.end => a.unit.end as u64,
                                f.heading => a.unit.heading,
                                f.text => a.unit.text,
                                f.heading_terms => a.heading_terms,
                                f.subject => a.subject_terms,
                                f.body => a.terms,
                                f.context => a.context_terms,
                            ));
                            if let Err(e) = added {
                                *failure.lock().expect("not poisoned") = Some(e);
                                return;
                            }
                        }
                        Ok(())
                    }
                    Err(problem) => Err(problem),
                };
                results.lock().expect("not poisoned")[i] = Some(result);
            }
        };
        let threads = if files.len() < 64 {
            1
        } else {
            std::thread::available_parallelism().map_or(1, |n| n.get().min(4))
        };
        std::thread::scope(|scope| {
            for _ in 1..threads {
                scope.spawn(work);
            }
            work();
        });
        if let Some(e) = failure.into_inner().expect("not poisoned") {
            return Err(self.err(e));
        }
        Ok(results
            .into_inner()
            .expect("not poisoned")
            .into_iter()
            .zip(files)
            .map(|(r, (rel, _))| {
                r.unwrap_or_else(|| {
                    Err(Skip {
                        rel: rel.to_string(),
                        line: None,
                        message: "not indexed".into(),
                    })
                })
            })
            .collect())
    }
}
