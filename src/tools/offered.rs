//! The tools a door offers, resolved once for its exchange: the built-ins,
//! the operator's manifests that parse, each trusted MCP server's tools in
//! its manifest's place (the server running for the exchange's calls), the
//! trust book that decides what runs, and what could not be offered.

use std::collections::BTreeMap;

use super::operator::{self, ManifestProblem, OperatorTool};
use super::trust::Trust;
use super::{builtins, mcp, specs, writes, Peering, BUILTINS};
use crate::home::Home;
use crate::model::ToolSpec;

/// The tools of one exchange.
#[derive(Default)]
pub struct Offered {
    /// The operator's tools that parse (`tools/*.toml`), each trusted MCP
    /// server's tools in its manifest's place.
    pub operator: Vec<OperatorTool>,
    /// What the operator trusted to run.
    pub trust: Trust,
    /// The MCP servers started to list their tools, kept for the calls.
    pub mcp: mcp::Servers,
    /// The manifests that do not parse, by file and line, and the MCP
    /// servers that did not start or answer.
    pub problems: Vec<ManifestProblem>,
}

impl Offered {
    /// Loads the operator's tools and starts their trusted MCP servers
    /// (with the variables their manifests name from `environment`).
    pub fn load(home: &Home, environment: &BTreeMap<String, String>) -> Offered {
        let (loaded, mut problems) = operator::load(home, &BUILTINS);
        let trust = Trust::load(home);
        let connected = mcp::connect(loaded, &trust, environment, home.root());
        problems.extend(connected.problems);
        Offered {
            operator: connected.tools,
            trust,
            mcp: connected.servers,
            problems,
        }
    }

    /// What the model is told it may call: every tool (`handoff` when
    /// `peering` has peers), or only those that do not write.
    pub fn specs(&self, peering: &Peering, read_only: bool) -> Vec<ToolSpec> {
        let mut specs = specs(&self.operator, Some(peering));
        if read_only {
            specs.retain(|s| !writes(&self.operator, &s.name));
        }
        specs
    }
}

/// What a consolidation may call: the file tools, whose writes go to its
/// draft, and `removed` (`tools::staging`).
pub fn staging_specs() -> Vec<ToolSpec> {
    let mut specs: Vec<ToolSpec> = builtins::specs()
        .into_iter()
        .filter(|s| ["read", "write", "edit", "append"].contains(&s.name.as_str()))
        .collect();
    specs.push(super::staging::removed_spec());
    specs
}
