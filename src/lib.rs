//! hearth keeps one LLM agent alive, one tick at a time, in a git repository
//! of plain files (the *home*). The library does the work; `src/main.rs` and
//! `src/cli/` are the only places that talk to the terminal or read the
//! environment, so every piece here can be driven from a test with a path and
//! a clock.
//!
//! One module per part of `DESIGN.md`:
//! - [`home`]: the home's layout, discovery, `init`, and its locks;
//! - [`config`]: `hearth.toml`, typed, with unknown keys refused;
//! - [`repo`]: every git operation (git2 stays inside this module);
//! - [`mailbox`]: inbox, outbox and flares;
//! - [`model`]: the provider seam and the offline provider;
//! - [`tools`]: the built-in tools and the path sandbox;
//! - [`tick`]: one tick, its exit classes and its ledger;
//! - [`supervisor`]: the long-running loop around ticks, systemd, status.

pub mod atomic;
pub mod boot;
pub mod budget;
pub mod clock;
pub mod config;
pub mod conversation;
pub mod healer;
pub mod home;
pub mod mailbox;
pub mod memory;
pub mod model;
pub mod recall;
pub mod repo;
pub mod stamp;
pub mod supervisor;
pub mod tick;
pub mod tools;
