//! `hearth audit`: is the identity still loading cleanly?
//!
//! Drift is a core memory that looks meant for the identity layer but lands
//! in the title layer: a tag that nearly matches an identity tag
//! (`kit-identity`, `facet:identiy`, `identity-core`), a broken front
//! matter, or an identity memory cut by the cap or pushed out by the budget.
//! This is the failure hearth exists to make visible: the agent reads a
//! title, misses the rule, and nothing says so.

use serde::Serialize;

use super::{boot, LayerReport};
use crate::config::BootConfig;
use crate::home::Home;
use crate::memory::{Memory, MemoryProblem};

/// What kind of drift.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum DriftKind {
    /// A tag that nearly matches an identity tag.
    NearMiss,
    /// Front matter that does not parse, so its tags were not read.
    Malformed,
    /// An identity memory cut at `memory_cap_chars`.
    Truncated,
    /// An identity memory rendered as a title: the budget was spent.
    OverBudget,
    /// The identity file or the prompt is gone, or a core memory the last
    /// commit has is gone from the disk: every tick runs without it.
    Missing,
}

/// One memory drifting out of the identity layer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Drift {
    /// The memory, relative to the home.
    pub path: String,
    /// What kind of drift.
    pub kind: DriftKind,
    /// What exactly, and the fix.
    pub detail: String,
}

/// What `hearth audit` reports.
#[derive(Debug, Clone, Serialize)]
pub struct Audit {
    /// Identity memories rendered in full.
    pub rendered_full: usize,
    /// Identity memories rendered as titles only.
    pub rendered_as_titles: usize,
    /// Identity memories cut at `memory_cap_chars`.
    pub truncated: usize,
    /// Estimated tokens of the system prompt.
    pub estimated_tokens: u64,
    /// Characters of the identity layer.
    pub identity_chars: usize,
    /// `[boot] identity_budget_chars`.
    pub budget_chars: usize,
    /// How much of the budget the layer uses.
    pub budget_percent: f64,
    /// Memories the brake will require reading.
    pub required_reads: Vec<String>,
    /// Every drift found.
    pub drift: Vec<Drift>,
    /// Files that could not be fully used.
    pub problems: Vec<MemoryProblem>,
    /// How the layer was rendered.
    pub layer: LayerReport,
}

/// Audits the identity layer of `home` as the next tick would load it.
pub fn audit(home: &Home, config: &BootConfig) -> Audit {
    let boot = boot(home, config);
    let layer = boot.layer;
    let mut drift = Vec::new();
    for memory in &boot.core {
        if let Some(problem) = &memory.problem {
            drift.push(Drift {
                path: memory.rel.clone(),
                kind: DriftKind::Malformed,
                detail: format!(
                    "line {}: {}; its tags were not read, so it loads as a title",
                    problem.line, problem.message
                ),
            });
            continue;
        }
        if layer.titles.contains(&memory.rel) && !layer.over_budget.contains(&memory.rel) {
            if let Some((tag, near)) = near_miss(memory, &config.identity_tags) {
                drift.push(Drift {
                    path: memory.rel.clone(),
                    kind: DriftKind::NearMiss,
                    detail: format!(
                        "tag `{tag}` looks like `{near}` but is not an identity tag, so it loads as a title \
                         (fix the tag, or add it to [boot] identity_tags)"
                    ),
                });
            }
        }
    }
    for rel in &layer.truncated {
        drift.push(Drift {
            path: rel.clone(),
            kind: DriftKind::Truncated,
            detail: format!(
                "cut at [boot] memory_cap_chars = {}; the rest is not in the prompt",
                config.memory_cap_chars
            ),
        });
    }
    for rel in &layer.over_budget {
        drift.push(Drift {
            path: rel.clone(),
            kind: DriftKind::OverBudget,
            detail: format!(
                "did not fit [boot] identity_budget_chars = {}; rendered as a title and made a required read",
                config.identity_budget_chars
            ),
        });
    }
    drift.extend(missing(home));
    drift.sort_by(|a, b| a.path.cmp(&b.path));
    Audit {
        rendered_full: layer.full.len(),
        rendered_as_titles: layer.titles.len(),
        truncated: layer.truncated.len(),
        estimated_tokens: layer.tokens,
        identity_chars: layer.identity_chars,
        budget_chars: layer.budget_chars,
        budget_percent: if layer.budget_chars == 0 {
            0.0
        } else {
            (layer.identity_chars as f64 * 1000.0 / layer.budget_chars as f64).round() / 10.0
        },
        required_reads: boot.required_reads,
        drift,
        problems: boot.problems,
        layer,
    }
}

/// The identity file and the prompt when they are gone, and each core
/// memory the last commit has that the disk does not.
fn missing(home: &Home) -> Vec<Drift> {
    use crate::home::layout::rel;
    let repo = crate::repo::Repo::open(home.root()).ok();
    let committed: Vec<String> = repo
        .as_ref()
        .map(|r| r.committed_names_under(&format!("{}/core", rel::MEMORY)))
        .unwrap_or_default();
    let mut gone: Vec<Drift> = [rel::IDENTITY, rel::PROMPT]
        .into_iter()
        .filter(|own| !home.path(own).exists())
        .map(|own| Drift {
            path: own.to_string(),
            kind: DriftKind::Missing,
            detail: "is gone: every tick runs without it; restore it (`git checkout HEAD -- \
                     PATH`, or from an earlier commit: `git log --diff-filter=D -- PATH`)"
                .replace("PATH", own),
        })
        .collect();
    gone.extend(
        committed
            .into_iter()
            .filter(|core| home.path(core).symlink_metadata().is_err())
            .map(|core| Drift {
                detail: format!(
                    "is in the last commit but gone from the disk: the next tick runs without \
                     it; restore it (`git checkout HEAD -- {core}`) or remove it on purpose \
                     (`git rm {core}`)"
                ),
                path: core,
                kind: DriftKind::Missing,
            }),
    );
    gone
}

/// The first tag of `memory` that nearly matches an identity tag, with the
/// tag it resembles.
pub fn near_miss(memory: &Memory, identity_tags: &[String]) -> Option<(String, String)> {
    memory
        .tags
        .iter()
        .find_map(|tag| resembled(tag, identity_tags).map(|id| (tag.clone(), id.clone())))
}

/// The identity tag `tag` resembles without being any identity tag.
fn resembled<'a>(tag: &str, identity_tags: &'a [String]) -> Option<&'a String> {
    let tag = tag.to_lowercase();
    if identity_tags.iter().any(|id| id.to_lowercase() == tag) {
        return None;
    }
    identity_tags
        .iter()
        .filter(|id| is_near(&tag, &id.to_lowercase()))
        .min_by_key(|id| levenshtein(&tag, &id.to_lowercase()))
}

/// `tag` resembles `id` without being it: it contains `id`'s key word
/// (`kit-identity`, `identity-core`), or a word of it is within two edits of
/// that key word (`facet:identiy`).
fn is_near(tag: &str, id: &str) -> bool {
    if tag == id {
        return false;
    }
    let word = id.rsplit([':', '-', '_', '/']).next().unwrap_or(id);
    if word.len() < 4 {
        return levenshtein(tag, id) <= 1;
    }
    let stem: String = word.chars().take(word.chars().count() - 1).collect();
    tag.contains(word)
        || levenshtein(tag, id) <= 2
        || tag.split([':', '-', '_', '/', ' ']).any(|part| {
            part.len() >= 4 && (levenshtein(part, word) <= 2 || part.starts_with(&stem))
        })
}

fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            let next = (row[j + 1] + 1).min(row[j] + 1).min(prev + cost);
            prev = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids() -> Vec<String> {
        vec!["identity".into(), "facet:identity".into()]
    }

    #[test]
    fn near_misses_are_caught_and_exact_tags_are_not() {
        for tag in [
            "kit-identity",
            "facet:identiy",
            "identity-core",
            "Facet:Identities",
            "ident1ty",
        ] {
            assert!(resembled(tag, &ids()).is_some(), "{tag}");
        }
        for tag in [
            "identity",
            "Facet:Identity",
            "music",
            "facet:ideas",
            "notes",
        ] {
            assert!(resembled(tag, &ids()).is_none(), "{tag}");
        }
    }

    #[test]
    fn the_closest_identity_tag_is_named() {
        assert_eq!(
            resembled("facet:identiy", &ids()).unwrap(),
            "facet:identity"
        );
        assert_eq!(resembled("kit-identity", &ids()).unwrap(), "identity");
    }

    #[test]
    fn levenshtein_counts_edits() {
        assert_eq!(levenshtein("identiy", "identity"), 1);
        assert_eq!(levenshtein("", "abc"), 3);
        assert_eq!(levenshtein("kitten", "sitting"), 3);
    }
}
