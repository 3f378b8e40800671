//! Boot: who the agent is, every tick (DESIGN 4).
//!
//! The system prompt is two blocks, in this order:
//! 1. `memory/prompt.md`, in full (the operator's architectural layer);
//! 2. the identity layer: `memory/identity.md` in full, then every
//!    identity-class core memory in full (each capped at
//!    `[boot] memory_cap_chars` with a visible marker), then every other core
//!    memory as one line, title and path; and a warning line at the foot when
//!    the layer reaches 80% of `[boot] identity_budget_chars`.
//!
//! Identity-class means a tag in `[boot] identity_tags`, compared
//! case-insensitively. An identity memory that does not fit the budget is
//! listed by title and becomes a *required read*: the brake makes the agent
//! read it before it may write. Nothing here holds a time or a counter, so
//! both blocks are byte-stable while their files do not change, and
//! providers can cache them.

pub mod drift;
pub mod snapshot;

use serde::Serialize;

use crate::config::BootConfig;
use crate::conversation::estimate_tokens;
use crate::home::Home;
use crate::memory::{self, Memory, MemoryProblem};
use crate::model::SystemBlock;

/// The warning line appears at this share of the identity budget.
pub const WARN_AT: f64 = 0.8;

/// The assembled boot context and what assembling it found.
#[derive(Debug, Clone)]
pub struct Boot {
    /// The system blocks: the prompt, then the identity layer.
    pub system: Vec<SystemBlock>,
    /// Memories the agent must read before writing (brake): identity
    /// memories pushed out by the budget, and `must_read: true` memories.
    pub required_reads: Vec<String>,
    /// Files that could not be fully used (front matter, unreadable).
    pub problems: Vec<MemoryProblem>,
    /// How the identity layer was rendered.
    pub layer: LayerReport,
    /// Core memories as parsed, for the audit.
    pub core: Vec<Memory>,
}

/// How the identity layer was rendered.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct LayerReport {
    /// Identity memories rendered in full (truncated ones included).
    pub full: Vec<String>,
    /// Of those, the ones cut at `memory_cap_chars`.
    pub truncated: Vec<String>,
    /// Identity memories rendered as titles because the budget was spent.
    pub over_budget: Vec<String>,
    /// Every core memory rendered as a title line (over-budget included).
    pub titles: Vec<String>,
    /// Characters of the identity layer block.
    pub identity_chars: usize,
    /// `[boot] identity_budget_chars`.
    pub budget_chars: usize,
    /// Estimated tokens of all system blocks.
    pub tokens: u64,
    /// Whether the foot warning was added.
    pub warning: bool,
}

pub use crate::home::layout::rel::{IDENTITY, PROMPT};

/// Assembles the system blocks for `home`.
pub fn boot(home: &Home, config: &BootConfig) -> Boot {
    let mut problems = Vec::new();
    let prompt = read_layer(home, PROMPT, &mut problems);
    let identity = read_layer(home, IDENTITY, &mut problems);
    // A running supervisor keeps the claims current from its watcher: then
    // only the core files are read, and the rest of memory is not walked.
    let (core, must_read_elsewhere, core_problems) = match memory::watched::vouched(home) {
        Some(view) => view.claims.load(home),
        None => memory::scan(home),
    };
    problems.extend(core_problems);
    let mut layer = LayerReport {
        budget_chars: config.identity_budget_chars,
        ..LayerReport::default()
    };
    let mut text = identity.trim_end().to_string();
    let mut required_reads = Vec::new();
    let placed = place(&core, config, chars(&text), &mut layer, &mut required_reads);
    for rel in must_read_elsewhere {
        if !required_reads.contains(&rel) {
            required_reads.push(rel);
        }
    }
    if !placed.sections.is_empty() {
        text.push_str("\n\n# Core memories\n");
        for section in &placed.sections {
            text.push('\n');
            text.push_str(section);
        }
    }
    if !placed.title_lines.is_empty() {
        text.push_str("\n\n# Core memories by title (read them with the `read` tool)\n\n");
        text.push_str(&placed.title_lines.join("\n"));
    }
    text.push('\n');
    layer.identity_chars = chars(&text);
    let budget = config.identity_budget_chars.max(1);
    if layer.identity_chars as f64 >= WARN_AT * budget as f64 {
        layer.warning = true;
        text.push_str(&format!(
            "\nWarning: the identity layer uses {} of {} characters ({}%); run `hearth audit` to see what loads in full.\n",
            layer.identity_chars,
            config.identity_budget_chars,
            layer.identity_chars * 100 / budget
        ));
    }
    // Marked unjudged: the door's judge (`provenance::identity::judge_system`)
    // clears what it proves the operator's.
    let system = vec![
        SystemBlock::unjudged(PROMPT, prompt),
        SystemBlock::unjudged(IDENTITY, text),
    ];
    layer.tokens = system.iter().map(|b| estimate_tokens(&b.text)).sum();
    Boot {
        system,
        required_reads,
        problems,
        layer,
        core,
    }
}

/// One of the two layer files, lossily decoded; a missing one is empty, an
/// unreadable or undecodable one is named among `problems`.
fn read_layer(home: &Home, rel: &str, problems: &mut Vec<MemoryProblem>) -> String {
    let problem = |message: String| MemoryProblem {
        path: rel.into(),
        line: 1,
        message,
    };
    match std::fs::read(home.root().join(rel)) {
        Ok(bytes) => {
            if std::str::from_utf8(&bytes).is_err() {
                problems.push(problem(
                    "not valid UTF-8; undecodable bytes shown as U+FFFD".into(),
                ));
            }
            String::from_utf8_lossy(&bytes).into_owned()
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => {
            problems.push(problem(format!("cannot be read: {e}")));
            String::new()
        }
    }
}

/// Where the core memories go in the identity layer.
struct Placed {
    /// Those loaded in full, rendered.
    sections: Vec<String>,
    /// Those listed by title, one line each.
    title_lines: Vec<String>,
}

/// Places each core memory: an identity memory in full while the budget
/// (`used` characters so far) allows, else by title as a required read;
/// any other by title. What was placed where goes on `layer`.
fn place(
    core: &[Memory],
    config: &BootConfig,
    mut used: usize,
    layer: &mut LayerReport,
    required_reads: &mut Vec<String>,
) -> Placed {
    let mut placed = Placed {
        sections: Vec::new(),
        title_lines: Vec::new(),
    };
    for memory in core {
        if memory.is_identity(&config.identity_tags) {
            let (section, truncated) = render_full(memory, config.memory_cap_chars);
            if used + chars(&section) > config.identity_budget_chars {
                layer.over_budget.push(memory.rel.clone());
                layer.titles.push(memory.rel.clone());
                placed.title_lines.push(format!(
                    "- {} — {} (required read: it did not fit the identity budget)",
                    memory.title, memory.rel
                ));
                required_reads.push(memory.rel.clone());
                continue;
            }
            used += chars(&section);
            placed.sections.push(section);
            layer.full.push(memory.rel.clone());
            if truncated {
                layer.truncated.push(memory.rel.clone());
            }
        } else {
            layer.titles.push(memory.rel.clone());
            let note = match &memory.problem {
                Some(p) => format!(" (its front matter is broken at line {})", p.line),
                None => String::new(),
            };
            placed
                .title_lines
                .push(format!("- {} — {}{note}", memory.title, memory.rel));
        }
        if memory.must_read && !required_reads.contains(&memory.rel) {
            required_reads.push(memory.rel.clone());
        }
    }
    placed
}

/// A memory in full: a heading with its title and path, then its body, cut
/// at `cap` characters with a marker that says where the rest is.
fn render_full(memory: &Memory, cap: usize) -> (String, bool) {
    let body = memory.body.trim();
    let total = chars(body);
    let mut section = format!("## {} — {}\n\n", memory.title, memory.rel);
    if total <= cap {
        section.push_str(body);
        section.push('\n');
        return (section, false);
    }
    section.extend(body.chars().take(cap));
    section.push_str(&format!(
        "\n[… truncated: {} has {total} characters and only the first {cap} are shown; read the rest with the `read` tool]\n",
        memory.rel
    ));
    (section, true)
}

fn chars(s: &str) -> usize {
    s.chars().count()
}
