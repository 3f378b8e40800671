//! Does the request fit the model's context window (`[model]
//! context_tokens`)? Decided before the model is called, from the estimated
//! tokens of each part of the request, so a prompt of millions of tokens is
//! a context-insufficiency named by its part, not a bill (DESIGN 7).
//!
//! The one recovery is reduced context: the oldest history goes to the
//! archive (recallable, nothing lost) until the rest fits. Only the history
//! can give way; the prompt, the identity layer and the inbox are what the
//! tick is for.

use std::collections::BTreeMap;

/// What the request needs to fit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fit {
    /// It fits as it is.
    Fits,
    /// It fits if the history keeps at most this many tokens.
    TrimHistory {
        /// Tokens the history may keep.
        keep: u64,
    },
    /// It cannot fit: this part, without any history, is too large.
    TooLarge {
        /// The largest part (`prompt`, `identity`, `inbox`…).
        part: String,
        /// Its estimated tokens.
        tokens: u64,
        /// Everything but the history, estimated.
        total: u64,
        /// What there is room for (the window less the answer's limit).
        room: u64,
    },
}

/// Decides from `parts` (estimated tokens by part of the request, with
/// `history` among them), the window and the answer's limit.
pub fn fit(parts: &BTreeMap<String, u64>, window: u64, max_tokens: u32) -> Fit {
    let room = window.saturating_sub(u64::from(max_tokens));
    let total: u64 = parts.values().sum();
    if total <= room {
        return Fit::Fits;
    }
    let history = parts.get("history").copied().unwrap_or(0);
    let rest = total - history;
    if rest <= room {
        return Fit::TrimHistory { keep: room - rest };
    }
    let (part, tokens) = parts
        .iter()
        .filter(|(name, _)| name.as_str() != "history")
        .max_by_key(|(_, tokens)| **tokens)
        .map(|(name, tokens)| (name.clone(), *tokens))
        .unwrap_or_default();
    Fit::TooLarge {
        part,
        tokens,
        total: rest,
        room,
    }
}

/// What the operator can do about `part` being too large.
pub fn remedy(part: &str) -> &'static str {
    match part {
        "prompt" => "shorten memory/prompt.md",
        "identity" => {
            "shorten the identity memories, or lower [boot] identity_budget_chars \
             (`hearth audit` lists them)"
        }
        "inbox" => "split the waiting inbox messages into smaller ones",
        "tools" => {
            "serve the model with a larger context window (llama.cpp: --ctx-size), or declare \
             fewer operator tools in tools/"
        }
        _ => "raise [model] context_tokens if the model allows more, or shorten the memory",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(items: &[(&str, u64)]) -> BTreeMap<String, u64> {
        items.iter().map(|(k, v)| (k.to_string(), *v)).collect()
    }

    #[test]
    fn only_the_history_gives_way_and_a_part_too_large_is_named() {
        let small = parts(&[("prompt", 1_000), ("history", 50_000), ("inbox", 100)]);
        assert_eq!(fit(&small, 200_000, 4096), Fit::Fits);
        let long = parts(&[("prompt", 1_000), ("history", 250_000), ("inbox", 100)]);
        assert_eq!(
            fit(&long, 200_000, 4096),
            Fit::TrimHistory {
                keep: 200_000 - 4096 - 1_100
            }
        );
        let huge = parts(&[("prompt", 2_500_000), ("history", 10), ("identity", 500)]);
        match fit(&huge, 200_000, 4096) {
            Fit::TooLarge { part, tokens, .. } => {
                assert_eq!((part.as_str(), tokens), ("prompt", 2_500_000))
            }
            other => panic!("{other:?}"),
        }
    }
}
