//! Recall (DESIGN 9): markdown blocks from the memory, found by BM25.
pub mod blocks;
