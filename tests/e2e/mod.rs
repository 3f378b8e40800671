//! End-to-end tests: the `hearth` binary as a user runs it, in a sealed
//! environment (its own home, no HEARTH_* from outside), against real git,
//! real child processes and signals, and a model API on 127.0.0.1.

mod boot;
mod cli;
pub(crate) mod collab;
mod consolidation;
mod context_fit;
mod defects;
mod disk;
mod edges;
mod endurance;
mod faults;
mod healer;
mod injection;
mod jobs;
mod laundering;
mod mail;
pub mod mcp;
mod metrics;
mod notify;
mod providers;
mod push;
mod recall;
mod reliability;
mod run;
mod secrets;
mod soak;
mod systemd;
mod trials;
mod truths;
mod units;
mod web;
