//! The second lexical hop: the names the first stage's best blocks hold
//! that the question did not are searched for again beside the question,
//! so a question whose evidence is split across memories that share an
//! entity but few words with the question ("what did the person Caroline
//! met at the group go on to study?") can find the other half. No model,
//! no weights file: a pure choice of terms over the first stage's hits
//! (this file) and one more BM25 query (`index.rs`).
//!
//! Off by default ([`Hop::OFF`]): on the LoCoMo development set it moved no
//! category beyond noise (best setting, 2 names from the top 3 at weight
//! 0.1: overall frac@5 68.1 → 67.9, multi-hop 30.8 → 31.0, adversarial
//! 76.4 → 75.9) and doubled a warm query's time; following every rare
//! word instead of names (pseudo-relevance feedback) lost 1–3 points in
//! every category. That set's multi-hop questions are lists gathered
//! across sessions ("what activities does Melanie partake in?" — pottery,
//! camping, swimming), not bridges through an entity. `cargo bench --bench
//! locomo` measures it on every run, so a memory where it pays shows it.

use std::collections::HashMap;

/// How the second hop runs. Tuned once on the LoCoMo development set
/// (`cargo bench --bench locomo` prints the grid), never per question.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hop {
    /// Expansion terms added to the question (0: no second hop).
    pub terms: usize,
    /// How many of the first stage's best blocks the terms come from.
    pub from: usize,
    /// Each expansion term's weight against a question term's 1.0.
    pub weight: f32,
    /// The first stage is confident — and the hop skipped — when its best
    /// score is at least this many times its `from`-th best.
    pub confident: f32,
}

impl Hop {
    /// No second hop: the first stage's order.
    pub const OFF: Hop = Hop {
        terms: 0,
        from: 0,
        weight: 0.0,
        confident: f32::INFINITY,
    };
}

/// One first-stage block as the hop sees it: its terms (as indexed) and
/// its score.
pub struct Seen<'a> {
    /// The block's terms, space-separated, as `Normaliser::terms` gives them.
    pub terms: &'a str,
    /// Its first-stage score.
    pub score: f32,
}

/// Whether the first stage is sure enough that a second hop would only
/// stir its order: the best score clears the `from`-th by `confident`×.
pub fn confident(scores: &[f32], hop: &Hop) -> bool {
    let Some(&best) = scores.first() else {
        return true;
    };
    let nth = scores
        .get(hop.from.saturating_sub(1))
        .copied()
        .unwrap_or(0.0);
    nth <= 0.0 || best >= nth * hop.confident
}

/// The names in `text`: capitalised words that do not open a sentence.
pub fn entities(text: &str) -> Vec<&str> {
    let mut names = Vec::new();
    let mut opens = true;
    for word in text.split_whitespace() {
        let bare = word.trim_matches(|c: char| !c.is_alphanumeric());
        if !opens
            && bare.len() >= 2
            && bare.chars().next().is_some_and(char::is_uppercase)
            && bare.chars().skip(1).any(char::is_lowercase)
        {
            names.push(bare);
        }
        opens = word.ends_with(['.', '!', '?', ':', ']']);
    }
    names
}

/// The expansion terms, best first: terms of the first `hop.from` blocks
/// that the question does not hold, scored by how rare they are in the
/// whole index (`idf`) and how high the blocks that hold them rank, never
/// a term in more than half of the first stage's blocks (the speaker names
/// on every turn of a conversation, a word every note repeats).
pub fn expansion(
    question: &[&str],
    seen: &[Seen<'_>],
    hop: &Hop,
    idf: impl Fn(&str) -> f32,
) -> Vec<String> {
    if hop.terms == 0 || seen.is_empty() {
        return Vec::new();
    }
    // Each block's distinct terms, and in how many blocks each term appears.
    let distinct: Vec<Vec<&str>> = seen
        .iter()
        .map(|block| {
            let mut once: Vec<&str> = block.terms.split(' ').filter(|t| !t.is_empty()).collect();
            once.sort_unstable();
            once.dedup();
            once
        })
        .collect();
    let mut spread: HashMap<&str, usize> = HashMap::new();
    for term in distinct.iter().flatten() {
        *spread.entry(term).or_default() += 1;
    }
    let common = seen.len().div_ceil(2).max(2);
    let top = seen[0].score.max(f32::MIN_POSITIVE);
    let mut scored: HashMap<&str, f32> = HashMap::new();
    for (block, once) in seen.iter().zip(&distinct).take(hop.from) {
        let rank_weight = block.score / top;
        for &term in once {
            if question.contains(&term)
                || spread.get(term).copied().unwrap_or(0) > common
                || term.chars().all(|c| c.is_ascii_digit())
            {
                continue;
            }
            *scored.entry(term).or_default() += rank_weight * idf(term);
        }
    }
    let mut ranked: Vec<(&str, f32)> = scored.into_iter().collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(b.0)));
    ranked
        .into_iter()
        .take(hop.terms)
        .map(|(t, _)| t.to_string())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOP: Hop = Hop {
        terms: 2,
        from: 2,
        weight: 0.3,
        confident: 2.0,
    };

    fn seen<'a>(blocks: &[(&'a str, f32)]) -> Vec<Seen<'a>> {
        blocks
            .iter()
            .map(|&(terms, score)| Seen { terms, score })
            .collect()
    }

    #[test]
    fn the_rare_words_beside_the_answer_are_searched_for_not_the_question_or_the_speaker() {
        let blocks = seen(&[
            ("melani support group met jonah", 9.0),
            ("melani jonah studi marin biolog", 6.0),
            ("melani bake bread", 2.0),
            ("melani paint", 1.0),
        ]);
        let idf = |t: &str| match t {
            "jonah" => 3.0,
            "marin" | "biolog" => 2.5,
            _ => 1.0,
        };
        let terms = expansion(&["support", "group"], &blocks, &HOP, idf);
        assert_eq!(terms, ["jonah", "biolog"]);
    }

    #[test]
    fn a_clear_first_stage_skips_the_hop() {
        assert!(confident(&[10.0, 4.0, 3.0], &HOP));
        assert!(!confident(&[10.0, 9.0, 3.0], &HOP));
        assert!(confident(&[], &HOP), "nothing found: nothing to follow");
    }

    #[test]
    fn off_adds_nothing() {
        let blocks = seen(&[("jonah", 1.0)]);
        assert!(expansion(&[], &blocks, &Hop::OFF, |_| 1.0).is_empty());
    }
}
