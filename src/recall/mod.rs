//! Recall (DESIGN 9): what the memory holds, found by BM25 over markdown
//! blocks and conversation turns, cited as `path:start-end@commit`.

mod analysis;
pub mod blocks;
pub mod index;
mod manifest;
pub mod rerank;
mod units;
mod update;

use crate::home::Home;
use index::{IndexError, RecallIndex};

/// The index, brought up to date with the files on disk first: what the
/// tick's inbox recall and the agent's `recall` tool search, so both see the
/// agent's and the operator's latest edits even with no supervisor watching.
pub fn fresh_index(home: &Home) -> Result<RecallIndex, IndexError> {
    let mut index = RecallIndex::open(home)?;
    index.reconcile(home)?;
    Ok(index)
}
