//! hearth keeps one LLM agent alive, one tick at a time, in a git repository
//! of plain files (the *home*). The library does the work; `src/main.rs` and
//! `src/cli/` are the only places that talk to the terminal, read the
//! environment or ask the system for the time, so every piece here can be
//! driven from a test with a path and a clock.
//!
//! Data flows home → boot → context → model → tools → commit, and every
//! module imports only from the layers below it. The layers, and what each
//! module owns, are in one table: `docs/architecture.md` (which
//! `scripts/layers.py` reads and checks the imports against); the binary's
//! `cli` sits on top of them all.

pub mod ask;
pub mod atomic;
pub mod boot;
pub mod bounded;
pub mod brake;
pub mod budget;
pub mod clock;
pub mod collab;
pub mod config;
pub mod consolidate;
pub mod conversation;
pub mod door;
pub mod exchange;
pub mod healer;
pub mod home;
pub mod intake;
pub mod io_hint;
pub mod jail;
pub mod jobs;
pub mod json_file;
pub mod mail;
pub mod mailbox;
pub mod mcp;
pub mod memory;
pub mod model;
pub mod notify;
pub mod outside;
pub mod process;
pub mod proposals;
pub mod provenance;
pub mod recall;
pub mod repo;
pub mod run_state;
pub mod stamp;
pub mod supervisor;
pub mod tick;
pub mod tools;
pub mod view;
pub mod web;
