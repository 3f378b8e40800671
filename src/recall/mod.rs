//! Recall (DESIGN 9): what the memory holds, found by BM25 over markdown
//! blocks and conversation turns, cited as `path:start-end@commit`.

pub mod blocks;
pub mod index;
pub mod rerank;
