//! The recall index: tantivy (BM25) over memory blocks and conversation
//! archive turns, in `.hearth/index/` — a rebuildable cache. A manifest of
//! file hashes next to it says what the index reflects, so a recall run
//! with no supervisor first re-indexes exactly the files whose content
//! changed. A missing or corrupt index is rebuilt, never an error.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::Serialize;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use tantivy::collector::TopDocs;
use tantivy::query::QueryParser;
use tantivy::schema::{
    Field, IndexRecordOption, Schema, TextFieldIndexing, TextOptions, Value, INDEXED, STORED,
    STRING,
};
use tantivy::{doc, Index, IndexReader, IndexWriter, TantivyDocument, Term};

use super::analysis::{terms_tokenizer, Normaliser, TOKENIZER};
use super::manifest::{read_manifest, source_files, stamps_of, FileStamp, IndexLock};
use super::units::{analyse, units};
use crate::atomic;
use crate::home::Home;

/// Field weights against the body's 1.0. Tuned globally on the LoCoMo
/// development set (`cargo bench --bench locomo` prints the grid), never
/// per question.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Weights {
    pub heading: f32,
    pub context: f32,
}

impl Default for Weights {
    fn default() -> Self {
        // From the grid on LoCoMo dev (frac@5 / frac@20): body only 51.7 /
        // 68.7; heading 1.0 + context 0.7 61.6 / 77.3. Heading 1.5 was
        // marginally higher (62.0) but leans on session-date headings.
        Weights {
            heading: 1.0,
            context: 0.7,
        }
    }
}
/// Bump when the schema or analysis changes: the index is then rebuilt.
const VERSION: u32 = 7;

#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    #[error("the recall index in {}: {message}", dir.display())]
    Tantivy { dir: PathBuf, message: String },
    #[error(transparent)]
    Write(#[from] atomic::WriteError),
}

/// One search result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Hit {
    /// `memory/x.md` or `state/archive/x.json#turn-N`.
    pub path: String,
    pub start: u64,
    pub end: u64,
    pub heading: String,
    pub text: String,
    pub score: f32,
}

impl Hit {
    /// Where the block is, as the model sees it: `path:start-end`, or
    /// `state/archive/x.json#turn-N` for a conversation turn.
    pub fn place(&self) -> String {
        if self.path.contains('#') {
            self.path.clone()
        } else {
            format!("{}:{}-{}", self.path, self.start, self.end)
        }
    }
}

/// What a reconcile did.
#[derive(Debug, Default, Clone, PartialEq, Serialize)]
pub struct Reconciled {
    pub indexed: usize,
    pub removed: usize,
    /// Files that could not be indexed, with why (file skipped, others go on).
    pub skipped: Vec<String>,
}

/// What `hearth index` reports.
#[derive(Debug, Clone, Serialize)]
pub struct IndexStats {
    pub dir: PathBuf,
    /// Files indexed (skipped ones are not counted).
    pub files: usize,
    /// Blocks and conversation turns.
    pub blocks: u64,
    /// Size on disk, the manifest included.
    pub bytes: u64,
    /// HEAD when the index last changed.
    pub commit: Option<String>,
    pub updated_at: Option<chrono::DateTime<chrono::Utc>>,
}

#[derive(Clone, Copy)]
struct Fields {
    path: Field,
    file: Field,
    start: Field,
    end: Field,
    /// The heading and the block as written (stored, not searched).
    heading: Field,
    text: Field,
    /// The terms searched: heading, block, and the blocks before and after.
    heading_terms: Field,
    body: Field,
    context: Field,
}

pub struct RecallIndex {
    pub weights: Weights,
    dir: PathBuf,
    index: Index,
    reader: IndexReader,
    fields: Fields,
}

fn schema() -> (Schema, Fields) {
    let mut builder = Schema::builder();
    // hearth's own terms, split at spaces; queries are bags of words
    // (syntax is stripped), so no phrase search, so no positions.
    let terms = TextOptions::default().set_indexing_options(
        TextFieldIndexing::default()
            .set_tokenizer(TOKENIZER)
            .set_index_option(IndexRecordOption::WithFreqs),
    );
    let fields = Fields {
        path: builder.add_text_field("path", STRING | STORED),
        file: builder.add_text_field("file", STRING),
        start: builder.add_u64_field("start", INDEXED | STORED),
        end: builder.add_u64_field("end", STORED),
        heading: builder.add_text_field("heading", STORED),
        text: builder.add_text_field("text", STORED),
        heading_terms: builder.add_text_field("heading_terms", terms.clone()),
        body: builder.add_text_field("body", terms.clone()),
        context: builder.add_text_field("context", terms),
    };
    (builder.build(), fields)
}

impl RecallIndex {
    /// Opens `.hearth/index/`, creating or rebuilding it when it is missing,
    /// of another version, or unreadable.
    pub fn open(home: &Home) -> Result<RecallIndex, IndexError> {
        let dir = home.runtime_dir().join("index");
        // Creating or rebuilding the index must not race another process
        // doing the same (several `recall`s at once, or the supervisor).
        let _lock = IndexLock::take(home)?;
        match Self::open_dir(&dir) {
            Ok(index) => Ok(index),
            Err(e) => {
                if dir.exists() {
                    tracing::warn!("{e}; rebuilding the recall index");
                    let _ = std::fs::remove_dir_all(&dir);
                }
                Self::open_dir(&dir)
            }
        }
    }

    /// Throws the index away and builds it again from the files.
    pub fn rebuild(home: &Home) -> Result<(RecallIndex, Reconciled), IndexError> {
        let dir = home.runtime_dir().join("index");
        {
            let _lock = IndexLock::take(home)?;
            if dir.exists() {
                std::fs::remove_dir_all(&dir).map_err(|e| IndexError::Tantivy {
                    dir: dir.clone(),
                    message: format!("cannot remove it: {e}"),
                })?;
            }
        }
        let mut index = Self::open(home)?;
        let done = index.reconcile(home)?;
        Ok((index, done))
    }

    /// What the index holds, for `hearth index`.
    pub fn stats(&self) -> IndexStats {
        let manifest = read_manifest(&self.dir);
        let bytes = walkdir::WalkDir::new(&self.dir)
            .into_iter()
            .flatten()
            .filter(|e| e.file_type().is_file())
            .filter_map(|e| e.metadata().ok())
            .map(|m| m.len())
            .sum();
        IndexStats {
            dir: self.dir.clone(),
            files: manifest.files.len(),
            blocks: self.reader.searcher().num_docs(),
            bytes,
            commit: manifest.commit,
            updated_at: manifest.updated_at,
        }
    }

    fn open_dir(dir: &Path) -> Result<RecallIndex, IndexError> {
        let err = |e: tantivy::TantivyError| IndexError::Tantivy {
            dir: dir.to_path_buf(),
            message: e.to_string(),
        };
        let (schema, fields) = schema();
        let manifest = read_manifest(dir);
        let index = if dir.join("meta.json").exists() {
            if manifest.version != VERSION {
                return Err(IndexError::Tantivy {
                    dir: dir.to_path_buf(),
                    message: format!(
                        "version {} (this hearth writes {VERSION})",
                        manifest.version
                    ),
                });
            }
            Index::open_in_dir(dir).map_err(err)?
        } else {
            std::fs::create_dir_all(dir).map_err(|e| IndexError::Tantivy {
                dir: dir.to_path_buf(),
                message: e.to_string(),
            })?;
            Index::create_in_dir(dir, schema).map_err(err)?
        };
        index.tokenizers().register(TOKENIZER, terms_tokenizer());
        // Reloaded by hand after each commit: tantivy's file watcher would
        // race other processes' commits and log errors.
        let reader = index
            .reader_builder()
            .reload_policy(tantivy::ReloadPolicy::Manual)
            .try_into()
            .map_err(err)?;
        Ok(RecallIndex {
            weights: Weights::default(),
            dir: dir.to_path_buf(),
            index,
            reader,
            fields,
        })
    }

    fn err(&self, e: impl std::fmt::Display) -> IndexError {
        IndexError::Tantivy {
            dir: self.dir.clone(),
            message: e.to_string(),
        }
    }

    /// Re-indexes the files whose content changed since the manifest, and
    /// drops the ones that are gone. Another process holding the writer is
    /// not an error: it is doing the same work, and the search goes on with
    /// what is committed.
    pub fn reconcile(&mut self, home: &Home) -> Result<Reconciled, IndexError> {
        // One reconcile at a time; a process that waited finds the work
        // done and the manifest current.
        let _lock = IndexLock::take(home)?;
        let manifest = read_manifest(&self.dir);
        let current = source_files(home, &manifest);
        self.update(home, manifest, current, |_| true)
    }

    /// Like [`reconcile`](Self::reconcile), for just these files (relative
    /// paths, as the supervisor's memory watcher saw them change): no walk
    /// of the whole memory. Falls back to a full reconcile when a path is
    /// a directory (moved or removed with its files) or the index is new.
    pub fn reconcile_paths(
        &mut self,
        home: &Home,
        paths: &BTreeSet<String>,
    ) -> Result<Reconciled, IndexError> {
        let _lock = IndexLock::take(home)?;
        let manifest = read_manifest(&self.dir);
        // A new or rebuilt index knows nothing yet: everything is in scope.
        let known = (manifest.version == VERSION).then(|| stamps_of(home, &manifest, paths));
        match known.flatten() {
            Some(current) => self.update(home, manifest, current, |rel| paths.contains(rel)),
            None => {
                let current = source_files(home, &manifest);
                self.update(home, manifest, current, |_| true)
            }
        }
    }

    /// Brings the index to `current` (the stamps of the files in scope):
    /// changed files re-indexed, files in scope that are gone removed.
    fn update(
        &mut self,
        home: &Home,
        mut manifest: super::manifest::Manifest,
        current: BTreeMap<String, FileStamp>,
        in_scope: impl Fn(&str) -> bool,
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
            return Ok(done);
        }
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
                    done.skipped.push(problem);
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
        manifest.updated_at = Some(chrono::Utc::now());
        let json = serde_json::to_vec(&manifest).expect("manifest serialises");
        atomic::write(&self.dir.join("files.json"), &json)?;
        self.reader.reload().map_err(|e| self.err(e))?;
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
    ) -> Result<Vec<Result<(), String>>, IndexError> {
        let f = self.fields;
        let results: Mutex<Vec<Option<Result<(), String>>>> = Mutex::new(vec![None; files.len()]);
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
            .map(|r| r.unwrap_or_else(|| Err("not indexed".into())))
            .collect())
    }

    /// The `limit` best blocks for `query` by BM25 over the block, its
    /// heading and its neighbours, weighted by [`Weights`]. Any text is a
    /// query: it is reduced to terms like the blocks are, so no word of it
    /// is query syntax.
    pub fn search(&self, query: &str, limit: usize) -> Result<Vec<Hit>, IndexError> {
        let f = self.fields;
        let mut parser =
            QueryParser::for_index(&self.index, vec![f.body, f.heading_terms, f.context]);
        parser.set_field_boost(f.heading_terms, self.weights.heading);
        parser.set_field_boost(f.context, self.weights.context);
        let terms = Normaliser::default().terms(query);
        let (query, _) = parser.parse_query_lenient(&terms);
        let searcher = self.reader.searcher();
        let top = searcher
            .search(&query, &TopDocs::with_limit(limit.max(1)).order_by_score())
            .map_err(|e| self.err(e))?;
        let mut hits = Vec::new();
        for (score, address) in top {
            let doc: TantivyDocument = searcher.doc(address).map_err(|e| self.err(e))?;
            let text = |field| {
                doc.get_first(field)
                    .and_then(|v| v.as_str())
                    .unwrap_or("")
                    .to_string()
            };
            let number = |field| doc.get_first(field).and_then(|v| v.as_u64()).unwrap_or(0);
            hits.push(Hit {
                path: text(f.path),
                start: number(f.start),
                end: number(f.end),
                heading: text(f.heading),
                text: text(f.text),
                score,
            });
        }
        Ok(hits)
    }
}
