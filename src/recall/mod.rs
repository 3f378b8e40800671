//! Recall (DESIGN 9): what the memory holds, found by BM25 over markdown
//! blocks and conversation turns, cited as `path:start-end@commit`.

pub mod blocks;
pub mod index;
mod manifest;
pub mod rerank;
mod stop_words;
mod units;
