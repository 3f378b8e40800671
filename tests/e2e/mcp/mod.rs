//! MCP both ways, with real peers: `hearth mcp` driven by the official
//! Python SDK's stdio client (here), and MCP servers (`mcp-server-time`
//! from PyPI, and `broken.py`'s) as operator tools in a tick
//! (`providers::mcp_tools`).
//! `scripts/mcp-venv` installs the peers (`.ci/run` calls it).

#![allow(clippy::disallowed_methods)] // fixtures, not state

mod http;
mod server;

use std::path::PathBuf;

/// The venv holding the real peers, installed on first use by
/// `scripts/mcp-venv` (from PyPI, once; `.ci/run` installs it first). A
/// test that needs them runs them or fails saying how to install them:
/// it never passes unrun.
pub(crate) fn venv() -> PathBuf {
    static INSTALLED: std::sync::OnceLock<Result<PathBuf, String>> = std::sync::OnceLock::new();
    let installed = INSTALLED.get_or_init(|| {
        let dir = std::env::var_os("HEARTH_MCP_VENV")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/mcp-venv"));
        let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scripts/mcp-venv");
        let out = std::process::Command::new(&script)
            .env("HEARTH_MCP_VENV", &dir)
            .output()
            .map_err(|e| format!("{} could not run: {e}", script.display()))?;
        if !out.status.success() || !dir.join("bin/python").exists() {
            return Err(format!(
                "{} failed: {}{}",
                script.display(),
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        Ok(dir)
    });
    match installed {
        Ok(dir) => dir.clone(),
        Err(why) => panic!(
            "the real MCP peers (tests/e2e/mcp/requirements.txt) are not installed and could not \
             be: {why}\nfix: install python3 with venv and pip (Debian: apt-get install \
             python3-venv), make PyPI reachable, then run scripts/mcp-venv"
        ),
    }
}
