//! hearth's tests above the unit tests (which live beside the code), in one
//! binary so the suite links once:
//! - [`scenario`]: the library (`hearth::…`) driven on a temp git home — a
//!   tick, a heal, a recall — without spawning the binary;
//! - [`e2e`]: the binary, as a user runs it.

#![allow(clippy::disallowed_methods)] // fixtures are written plainly, not state

mod common;
mod e2e;
mod scenario;
