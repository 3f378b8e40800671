//! Recall (DESIGN 9): what the memory holds, found by BM25 over markdown
//! blocks and conversation turns, cited as `path:start-end@commit`.

mod analysis;
pub mod answer;
pub mod blocks;
pub mod hop;
pub mod index;
mod manifest;
pub mod rerank;
pub mod shape;
mod units;
mod update;

use std::path::PathBuf;

use crate::atomic;
use crate::home::Home;
use crate::io_hint::IoError;
use index::RecallIndex;
pub use update::Reconciled;

/// What can go wrong with the recall index, for every part of it.
#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    /// A file of the index could not be read or written.
    #[error(transparent)]
    Io(#[from] IoError),
    /// tantivy failed.
    #[error("the recall index in {}: {message}", dir.display())]
    Tantivy {
        /// The index's directory.
        dir: PathBuf,
        /// tantivy's account.
        message: String,
    },
    /// The index was built by another version of hearth.
    #[error("the recall index in {} has format version {found}; this hearth writes {expected}", dir.display())]
    Version {
        /// The index's directory.
        dir: PathBuf,
        /// The version it has.
        found: u32,
        /// The version this hearth writes.
        expected: u32,
    },
    /// The manifest could not be written.
    #[error(transparent)]
    Write(#[from] atomic::WriteError),
}

impl IndexError {
    /// What to do about it: the index is a cache under `.hearth/`, so it is
    /// either rebuilt, or — when this user may not write there (an MCP
    /// client started as someone else) — searched as the home's user.
    pub fn hint(&self) -> String {
        let denied = match self {
            IndexError::Io(e) => e.denied(),
            IndexError::Write(e) => e.source.kind() == std::io::ErrorKind::PermissionDenied,
            _ => false,
        };
        if denied {
            "recall keeps its index in the home's .hearth/, which this user may not write: \
             run it as the user that owns the home (for hearth mcp, register it with that user)"
                .into()
        } else {
            "the index is only a cache: remove .hearth/index/ and run `hearth index` again".into()
        }
    }
}

/// The index, brought up to date with the files on disk first: what the
/// tick's inbox recall and the agent's `recall` tool search, so both see the
/// agent's and the operator's latest edits even with no supervisor watching.
pub fn fresh_index(home: &Home) -> Result<RecallIndex, IndexError> {
    let mut index = RecallIndex::open(home)?;
    index.catch_up(home)?;
    Ok(index)
}

#[cfg(test)]
mod hint_tests {
    use super::*;

    #[test]
    fn a_user_who_may_not_write_the_index_is_told_whose_it_is() {
        let denied = IndexError::Io(IoError::at(
            PathBuf::from("/home/x/.hearth/index.lock"),
            std::io::Error::from(std::io::ErrorKind::PermissionDenied),
        ));
        assert!(
            denied.hint().contains("the user that owns the home"),
            "{}",
            denied.hint()
        );
        let broken = IndexError::Tantivy {
            dir: PathBuf::from("/home/x/.hearth/index"),
            message: "corrupt".into(),
        };
        assert!(broken.hint().contains("only a cache"));
    }
}
