//! MCP both ways, with real peers: `hearth mcp` driven by the official
//! Python SDK's stdio client (here), and MCP servers (`mcp-server-time`
//! from PyPI, and `broken.py`'s) as operator tools in a tick
//! (`providers::mcp_tools`).
//! `scripts/mcp-venv` installs the peers (`.ci/run` calls it).

#![allow(clippy::disallowed_methods)] // fixtures, not state

mod server;

use std::path::PathBuf;

/// The venv holding the real peers, or `None` when it is not installed
/// (CI installs it: there, its absence fails the test).
pub(crate) fn venv() -> Option<PathBuf> {
    let dir = std::env::var_os("HEARTH_MCP_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/mcp-venv"));
    if dir.join("bin/python").exists() {
        return Some(dir);
    }
    if std::env::var_os("CI").is_some() {
        panic!(
            "the MCP peers are not installed at {}: run scripts/mcp-venv",
            dir.display()
        );
    }
    eprintln!("the MCP peers are not installed (scripts/mcp-venv): this test does not run");
    None
}
