//! The tier table both doors render their user turn from (DESIGN 5, 10):
//! a cheap keyword classifier over what was asked (no model call) picks
//! what context goes with it —
//! - *continuation* ("last", "previous", "you said", "secret word"…): the
//!   recent exchanges, so the agent can answer about what it said at the
//!   other door;
//! - *mission* ("mission", "working on", "task", "goal"…): more of them and
//!   the current directive (`memory/directive.md`);
//! - *knowledge*: recall results with their citations.

use serde::Serialize;

/// Which context the user turn carries, by the inbox's words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Tier {
    /// Only the inbox.
    Plain,
    /// The recent turns ("what did you say last time?").
    Continuation,
    /// More turns and the directive ("what are you working on?").
    Mission,
    /// Recall's results with their citations.
    Knowledge,
}

const CONTINUATION: &[&str] = &[
    "last",
    "previous",
    "you said",
    "you provided",
    "you told",
    "you gave",
    "secret word",
    "earlier",
    "before",
    "again",
    "remind me",
];
const MISSION: &[&str] = &[
    "mission",
    "working on",
    "task",
    "goal",
    "directive",
    "objective",
    "priority",
    "plan",
];
const KNOWLEDGE: &[&str] = &[
    "what do you know",
    "do you remember",
    "what did i",
    "tell me about",
    "who is",
    "who was",
    "what is",
    "when did",
    "where did",
    "recall",
    "learn",
];

/// Exchanges always in front of the model at the ask's door (its hot
/// memory; a tick has its own history).
pub const HOT_TURNS: usize = 2;
/// How many recent exchanges the continuation tier carries in all.
pub const CONTINUATION_TURNS: usize = 6;
/// How many recent exchanges the mission tier carries in all.
pub const MISSION_TURNS: usize = 8;

/// The tier for this inbox text: the first of continuation, mission,
/// knowledge whose keywords occur (as whole words), else plain.
pub fn classify(text: &str) -> Tier {
    let text = format!(" {} ", normalise(text));
    let has = |words: &[&str]| words.iter().any(|w| text.contains(&format!(" {w} ")));
    if has(CONTINUATION) {
        Tier::Continuation
    } else if has(MISSION) {
        Tier::Mission
    } else if has(KNOWLEDGE) {
        Tier::Knowledge
    } else {
        Tier::Plain
    }
}

fn normalise(text: &str) -> String {
    let lower: String = text
        .to_lowercase()
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || c == '\'' {
                c
            } else {
                ' '
            }
        })
        .collect();
    lower.split_whitespace().collect::<Vec<_>>().join(" ")
}
