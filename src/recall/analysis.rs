//! How recall's text becomes terms: words (runs of letters and digits)
//! shorter than 40 bytes, lowercased, English stop words dropped, then
//! Snowball-stemmed — the same for the index and for queries.
//!
//! Stemming is most of the cost of building the index, and a memory's
//! vocabulary is small next to its length (Zipf), so one filter does
//! lowercase, stop word and stem per distinct word once and remembers the
//! result: a full build spends its time on postings, not on the stemmer.

use rustc_hash::{FxHashMap, FxHashSet};
use std::sync::LazyLock;
use tantivy::tokenizer::{
    SimpleTokenizer, TextAnalyzer, Token, TokenFilter, TokenStream, Tokenizer,
};

/// The name the analyzer is registered under in the index.
pub(super) const TOKENIZER: &str = "hearth_en";
/// Longer "words" are hashes, base64, URLs run together: never queried.
const MAX_WORD_BYTES: usize = 40;
/// Distinct words remembered per analyzer before it starts over.
const MEMO_MAX: usize = 200_000;

pub(super) fn analyzer() -> TextAnalyzer {
    TextAnalyzer::builder(SimpleTokenizer::default())
        .filter(Normalise)
        .build()
}

static STOP: LazyLock<FxHashSet<&'static str>> =
    LazyLock::new(|| STOP_WORDS.iter().copied().collect());

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

#[derive(Clone, Copy)]
struct Normalise;

impl TokenFilter for Normalise {
    type Tokenizer<T: Tokenizer> = NormaliseTokenizer<T>;

    fn transform<T: Tokenizer>(self, inner: T) -> NormaliseTokenizer<T> {
        NormaliseTokenizer {
            inner,
            stemmer: frostem::Stemmer::new(frostem::Algorithm::English),
            memo: FxHashMap::default(),
        }
    }
}

#[derive(Clone)]
struct NormaliseTokenizer<T> {
    inner: T,
    stemmer: frostem::Stemmer,
    /// word as written → its term (None: dropped).
    memo: FxHashMap<String, Option<String>>,
}

impl<T: Tokenizer> Tokenizer for NormaliseTokenizer<T> {
    type TokenStream<'a> = NormaliseStream<'a, T::TokenStream<'a>>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> Self::TokenStream<'a> {
        if self.memo.len() >= MEMO_MAX {
            self.memo.clear();
        }
        NormaliseStream {
            tail: self.inner.token_stream(text),
            stemmer: &self.stemmer,
            memo: &mut self.memo,
        }
    }
}

struct NormaliseStream<'a, S> {
    tail: S,
    stemmer: &'a frostem::Stemmer,
    memo: &'a mut FxHashMap<String, Option<String>>,
}

impl<S: TokenStream> TokenStream for NormaliseStream<'_, S> {
    fn advance(&mut self) -> bool {
        while self.tail.advance() {
            let token = self.tail.token_mut();
            // One lookup for a word seen before (nearly every word).
            if let Some(known) = self.memo.get(token.text.as_str()) {
                match known {
                    Some(term) => {
                        token.text.clear();
                        token.text.push_str(term);
                        return true;
                    }
                    None => continue,
                }
            }
            let value = term(&token.text, self.stemmer);
            let word = std::mem::replace(&mut token.text, value.clone().unwrap_or_default());
            self.memo.insert(word, value.clone());
            if value.is_some() {
                return true;
            }
        }
        false
    }

    fn token(&self) -> &Token {
        self.tail.token()
    }

    fn token_mut(&mut self) -> &mut Token {
        self.tail.token_mut()
    }
}

/// English function words: Lucene's short list leaves out pronouns and
/// question words, and in a question like "what is in your identity?" a
/// frequent "your" then outweighs the one word that matters.
const STOP_WORDS: &[&str] = &[
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

    fn terms(analyzer: &mut TextAnalyzer, text: &str) -> Vec<(String, usize, usize)> {
        let mut stream = analyzer.token_stream(text);
        let mut out = Vec::new();
        while let Some(t) = stream.next() {
            out.push((t.text.clone(), t.offset_from, t.offset_to));
        }
        out
    }

    /// The memo is only a speed-up: the terms are exactly those of
    /// tantivy's own filter chain (so no LoCoMo figure moves).
    #[test]
    fn the_memoised_filter_gives_the_terms_of_tantivys_chain() {
        let mut reference = TextAnalyzer::builder(SimpleTokenizer::default())
            .filter(RemoveLongFilter::limit(MAX_WORD_BYTES))
            .filter(LowerCaser)
            .filter(StopWordFilter::remove(
                STOP_WORDS.iter().map(|w| w.to_string()),
            ))
            .filter(Stemmer::new(Language::English))
            .build();
        let mut ours = analyzer();
        let text = "What did Caroline's PARENTS think about her Running, \
            in 2023? The runners ran; ΣΊΣΥΦΟΣ Größe naïve café x1 \
            aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa running runs";
        for _ in 0..2 {
            // The second pass is answered from the memo.
            assert_eq!(terms(&mut ours, text), terms(&mut reference, text));
        }
        let got: Vec<String> = terms(&mut ours, "Parents RUNNING the")
            .into_iter()
            .map(|t| t.0)
            .collect();
        assert_eq!(got, ["parent", "run"]);
    }
}
