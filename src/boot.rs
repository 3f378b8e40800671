//! Boot: who the agent is, every tick. Assembles the system prompt from the
//! architectural layer (`memory/prompt.md`) and the identity layer
//! (`memory/identity.md`, then the core memories), in that order.
//!
//! The blocks hold no timestamps or counters, so they are byte-stable from
//! tick to tick while their files do not change, and providers can cache
//! them. Tag-aware rendering of core memories (identity-class in full,
//! the rest as titles) and the identity budget are DESIGN 4's next step;
//! for now every core memory is listed as one line, title and path.

use crate::home::Home;
use crate::model::SystemBlock;

/// The system blocks, and warnings about files that could not be loaded
/// (a missing prompt is worth a log line, not a failed tick).
pub fn system_blocks(home: &Home) -> (Vec<SystemBlock>, Vec<String>) {
    let mut blocks = Vec::new();
    let mut warnings = Vec::new();
    for rel in ["memory/prompt.md", "memory/identity.md"] {
        match std::fs::read(home.root().join(rel)) {
            Ok(bytes) => blocks.push(SystemBlock {
                source: rel.into(),
                text: String::from_utf8_lossy(&bytes).into_owned(),
            }),
            Err(e) => warnings.push(format!("{rel} was not loaded: {e}")),
        }
    }
    let core = core_memories(home);
    if !core.is_empty() {
        let mut text = String::from("Core memories (read them with the `read` tool):\n");
        for (title, rel) in core {
            text.push_str(&format!("- {title} ({rel})\n"));
        }
        blocks.push(SystemBlock {
            source: "memory/core/".into(),
            text,
        });
    }
    (blocks, warnings)
}

/// (title, path) of every `.md` under `memory/core/`, sorted by path.
fn core_memories(home: &Home) -> Vec<(String, String)> {
    let dir = home.memory_dir().join("core");
    let mut found: Vec<(String, String)> = walkdir::WalkDir::new(&dir)
        .sort_by_file_name()
        .into_iter()
        .flatten()
        .filter(|e| e.file_type().is_file() && e.path().extension().is_some_and(|x| x == "md"))
        .map(|e| {
            let text = std::fs::read(e.path())
                .map(|b| String::from_utf8_lossy(&b).into_owned())
                .unwrap_or_default();
            let title = text
                .lines()
                .find_map(|l| l.strip_prefix("# "))
                .map(|t| t.trim().to_string())
                .unwrap_or_else(|| {
                    e.path()
                        .file_stem()
                        .map(|s| s.to_string_lossy().into_owned())
                        .unwrap_or_default()
                });
            (title, home.relative(e.path()))
        })
        .collect();
    found.sort_by(|a, b| a.1.cmp(&b.1));
    found
}
