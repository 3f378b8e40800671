//! Recall (DESIGN 9): what the memory holds, found by BM25 over markdown
//! blocks and conversation turns, cited as `path:start-end@commit`.

mod analysis;
pub mod answer;
pub mod blocks;
pub mod index;
mod manifest;
pub mod rerank;
mod units;
mod update;

use std::path::PathBuf;

use crate::atomic;
use crate::home::Home;
use index::RecallIndex;
pub use update::Reconciled;

/// What can go wrong with the recall index, for every part of it.
#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the recall index in {}: {message}", dir.display())]
    Tantivy { dir: PathBuf, message: String },
    #[error("the recall index in {} has format version {found}; this hearth writes {expected}", dir.display())]
    Version {
        dir: PathBuf,
        found: u32,
        expected: u32,
    },
    #[error(transparent)]
    Write(#[from] atomic::WriteError),
}

/// The index, brought up to date with the files on disk first: what the
/// tick's inbox recall and the agent's `recall` tool search, so both see the
/// agent's and the operator's latest edits even with no supervisor watching.
pub fn fresh_index(home: &Home) -> Result<RecallIndex, IndexError> {
    let mut index = RecallIndex::open(home)?;
    index.reconcile(home)?;
    Ok(index)
}
