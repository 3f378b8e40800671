//! The read room: what an operator reads about a home, computed once and
//! rendered by every surface. [`status`] (with its verdict), the [`day`],
//! and the [`metrics`] are read models over the home's files and what the
//! supervisor publishes (`crate::run_state`); each is plain data the CLI
//! prints as text or JSON, the MCP door answers with, and Prometheus
//! scrapes ([`metrics`]'s text). [`status_text`] is the one text
//! rendering of the status, so the CLI and the MCP door say the same.
//!
//! Nothing here writes but the metrics' textfile and the status memo of
//! peers' handoffs; nothing here needs a running supervisor.

pub mod day;
pub mod incidents;
pub mod memory;
pub mod metrics;
pub mod spend;
pub mod status;
pub mod status_text;
pub mod talk;
pub mod tick;
