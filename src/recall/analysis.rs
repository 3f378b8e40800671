//! How recall's text becomes terms: words (runs of letters and digits)
//! shorter than 40 bytes, lowercased, English stop words dropped, then
//! Snowball-stemmed — the same for the index and for queries.
//!
//! hearth computes the terms itself, once per block, and hands tantivy
//! space-separated terms (split by its whitespace tokenizer): a block's
//! terms then serve its own body and, as context, both its neighbours
//! without being analysed three times. A memory's vocabulary is small next
//! to its length (Zipf), so each distinct word is lowercased, checked and
//! stemmed once and remembered.

use rustc_hash::{FxHashMap, FxHashSet};
use std::sync::LazyLock;
use tantivy::tokenizer::{
    SimpleTokenizer, TextAnalyzer, TokenStream, Tokenizer, WhitespaceTokenizer,
};

/// The name the terms' tokenizer is registered under in the index.
pub(super) const TOKENIZER: &str = "hearth_terms";
/// Longer "words" are hashes, base64, URLs run together: never queried.
const MAX_WORD_BYTES: usize = 40;
/// Distinct words remembered before the memo starts over.
const MEMO_MAX: usize = 200_000;

/// What tantivy does with hearth's terms: split them at spaces.
pub(super) fn terms_tokenizer() -> TextAnalyzer {
    TextAnalyzer::from(WhitespaceTokenizer::default())
}

static STOP: LazyLock<FxHashSet<&'static str>> =
    LazyLock::new(|| STOP_WORDS.iter().copied().collect());

/// Turns text into terms, remembering each word it has seen. One per
/// thread: it is cheap to make and not shared.
pub(super) struct Normaliser {
    words: SimpleTokenizer,
    stemmer: frostem::Stemmer,
    /// word as written → its term (None: dropped).
    memo: FxHashMap<String, Option<String>>,
}

impl Default for Normaliser {
    fn default() -> Self {
        Normaliser {
            words: SimpleTokenizer::default(),
            stemmer: frostem::Stemmer::new(frostem::Algorithm::English),
            memo: FxHashMap::default(),
        }
    }
}

impl Normaliser {
    /// The terms of `text`, separated by single spaces.
    pub(super) fn terms(&mut self, text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        self.push_terms(text, &mut out);
        out
    }

    /// Appends the terms of `text` to `out` (space-separated).
    pub(super) fn push_terms(&mut self, text: &str, out: &mut String) {
        if self.memo.len() >= MEMO_MAX {
            self.memo.clear();
        }
        let mut stream = self.words.token_stream(text);
        while stream.advance() {
            let word = stream.token().text.as_str();
            // One lookup for a word seen before (nearly every word).
            let term = match self.memo.get(word) {
                Some(known) => known.as_deref(),
                None => {
                    let value = term(word, &self.stemmer);
                    self.memo
                        .entry(word.to_string())
                        .or_insert(value)
                        .as_deref()
                }
            };
            if let Some(term) = term {
                if !out.is_empty() {
                    out.push(' ');
                }
                out.push_str(term);
            }
        }
    }
}

/// The term a word becomes, or None when it is dropped.
fn term(word: &str, stemmer: &frostem::Stemmer) -> Option<String> {
    if word.len() >= MAX_WORD_BYTES {
        return None;
    }
    let lower = if word.is_ascii() {
        word.to_ascii_lowercase()
    } else {
        // Char by char, as tantivy's LowerCaser (no final-sigma rule).
        word.chars().flat_map(char::to_lowercase).collect()
    };
    if STOP.contains(lower.as_str()) {
        return None;
    }
    Some(stemmer.stem(&lower).into_owned())
}

/// English function words: Lucene's short list leaves out pronouns and
/// question words, and in a question like "what is in your identity?" a
/// frequent "your" then outweighs the one word that matters.
const STOP_WORDS: &[&str] = &[
    // What is left of contractions and possessives split at the apostrophe
    // (Caroline's, don't, I'll, we're, I've, I'm, I'd).
    "s",
    "t",
    "ll",
    "re",
    "ve",
    "m",
    "d",
    "a",
    "about",
    "above",
    "after",
    "again",
    "against",
    "all",
    "am",
    "an",
    "and",
    "any",
    "are",
    "as",
    "at",
    "be",
    "because",
    "been",
    "before",
    "being",
    "below",
    "between",
    "both",
    "but",
    "by",
    "can",
    "could",
    "did",
    "do",
    "does",
    "doing",
    "down",
    "during",
    "each",
    "few",
    "for",
    "from",
    "further",
    "had",
    "has",
    "have",
    "having",
    "he",
    "her",
    "here",
    "hers",
    "herself",
    "him",
    "himself",
    "his",
    "how",
    "i",
    "if",
    "in",
    "into",
    "is",
    "it",
    "its",
    "itself",
    "just",
    "me",
    "more",
    "most",
    "my",
    "myself",
    "no",
    "nor",
    "not",
    "now",
    "of",
    "off",
    "on",
    "once",
    "only",
    "or",
    "other",
    "our",
    "ours",
    "ourselves",
    "out",
    "over",
    "own",
    "same",
    "she",
    "should",
    "so",
    "some",
    "such",
    "than",
    "that",
    "the",
    "their",
    "theirs",
    "them",
    "themselves",
    "then",
    "there",
    "these",
    "they",
    "this",
    "those",
    "through",
    "to",
    "too",
    "under",
    "until",
    "up",
    "very",
    "was",
    "we",
    "were",
    "what",
    "when",
    "where",
    "which",
    "while",
    "who",
    "whom",
    "why",
    "will",
    "with",
    "would",
    "you",
    "your",
    "yours",
    "yourself",
    "yourselves",
];

#[cfg(test)]
mod tests {
    use super::*;
    use tantivy::tokenizer::{Language, LowerCaser, RemoveLongFilter, Stemmer, StopWordFilter};

    /// The terms are exactly those of tantivy's own filter chain with the
    /// same stop words (the memo is only a speed-up).
    #[test]
    fn terms_are_those_of_tantivys_chain() {
        let mut reference = TextAnalyzer::builder(SimpleTokenizer::default())
            .filter(RemoveLongFilter::limit(MAX_WORD_BYTES))
            .filter(LowerCaser)
            .filter(StopWordFilter::remove(
                STOP_WORDS.iter().map(|w| w.to_string()),
            ))
            .filter(Stemmer::new(Language::English))
            .build();
        let text = "What did Caroline's PARENTS think about her Running, \
            in 2023? The runners ran; ΣΊΣΥΦΟΣ Größe naïve café x1 \
            aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa running runs";
        let mut expected = Vec::new();
        let mut stream = reference.token_stream(text);
        while let Some(t) = stream.next() {
            expected.push(t.text.clone());
        }
        let mut ours = Normaliser::default();
        for _ in 0..2 {
            // The second pass is answered from the memo.
            assert_eq!(ours.terms(text), expected.join(" "));
        }
        assert_eq!(ours.terms("Parents RUNNING the"), "parent run");
        assert_eq!(ours.terms("the of and"), "");
    }
}
