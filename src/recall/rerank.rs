//! One model call to rerank recall's lexical candidates (DESIGN 9). The
//! model gets the query and the numbered candidates and answers JSON: the
//! ids it finds relevant, best first, with a one-line note each — or none,
//! which is a legal answer ("nothing relevant"). Its answer is validated
//! (unknown ids dropped, duplicates removed). A failed call or garbage gets
//! one retry — the bounded recovery attempt of DESIGN 7 — with half the
//! candidates (fewer if they do not fit `[recovery] extra_tokens`), started
//! only within `[recovery] wall_s`; after that the lexical order stands, and
//! says so.

use std::time::{Duration, Instant};

use serde_json::Value;

use super::index::Hit;
use crate::config::Config;
use crate::conversation::{self, Block, Message, Role};
use crate::model::{self, Provider, Request, SystemBlock, Usage};

/// How the results came to be in their order.
#[derive(Debug, Clone, PartialEq)]
pub enum Ranked {
    /// Candidate indices chosen by the model, best first, with its notes.
    Reranked(Vec<(usize, String)>),
    /// The model looked and found nothing relevant.
    NothingRelevant,
    /// The lexical order stands, for this reason.
    Lexical(String),
}

const SYSTEM: &str = "You rank search results from a personal memory. Given a question and \
numbered candidate passages, answer with JSON only: {\"results\": [{\"id\": N, \"note\": \
\"why it is relevant, in one short line\"}]}, most relevant first, at most the number asked \
for. Include only passages that help answer the question. If none do, answer \
{\"results\": []}.";

/// The `[rerank]` model's configuration: `[model]` with `[rerank]`'s
/// provider and model where set, a timeout of `[recovery] wall_s`, and no
/// retries of its own (the rerank has its own single retry).
pub fn rerank_config(config: &Config) -> crate::config::ModelConfig {
    let mut m = config.model.clone();
    if let Some(provider) = config.rerank.provider {
        m.provider = provider;
    }
    if !config.rerank.model.is_empty() {
        m.model = config.rerank.model.clone();
    }
    m.timeout_s = config.recovery.wall_s.max(1);
    m.max_retries = 0;
    m.max_tokens = MAX_REPLY_TOKENS;
    // A ranking needs no extended thinking, and pays for none.
    m.thinking_tokens = 0;
    m
}

/// The answer's size for the first call; the retry's is what `k` notes need.
const MAX_REPLY_TOKENS: u32 = 1024;

/// What the retry may spend: `[recovery] wall_s` and `extra_tokens`.
#[derive(Debug, Clone, Copy)]
pub struct RerankBudget {
    /// How long the retry may take, all told.
    pub wall: Duration,
    /// How many more tokens it may send.
    pub extra_tokens: u64,
}

/// Why a rerank's answer could not be used; the caller keeps the lexical
/// order and says this.
#[derive(Debug, thiserror::Error)]
pub enum NoRerank {
    /// The call failed.
    #[error(transparent)]
    Call(#[from] crate::model::ModelError),
    /// The model said nothing.
    #[error("the answer was empty")]
    Empty,
    /// A `results` list whose ids are none of the candidates'.
    #[error("no valid ids in the answer")]
    NoValidIds,
    /// Something like JSON that does not parse, and no candidate cited.
    #[error("the answer is not JSON: {0}")]
    NotJson(String),
    /// A JSON object without the list the prompt asks for.
    #[error("the answer has no \"results\" list")]
    NoResults,
    /// Neither JSON nor a candidate named in prose.
    #[error("no JSON object and no candidate named in the answer")]
    NothingNamed,
}

/// Reranks `candidates` for `query`, keeping at most `k`; what the calls
/// used is added to `used` (each call's, the retry's too: all are billed).
pub fn rerank(
    provider: &mut dyn Provider,
    query: &str,
    candidates: &[Hit],
    k: usize,
    recovery: RerankBudget,
    used: &mut Usage,
) -> Ranked {
    if candidates.is_empty() {
        return Ranked::NothingRelevant;
    }
    let started = Instant::now();
    let problem = match ask(provider, query, candidates, k, MAX_REPLY_TOKENS, used) {
        Ok(ranked) => return ranked,
        Err(problem) => problem,
    };
    tracing::warn!("rerank: {problem}");
    if started.elapsed() >= recovery.wall {
        return Ranked::Lexical(format!(
            "the rerank failed ({problem}) and [recovery] wall_s was spent"
        ));
    }
    // The recovery attempt: half the candidates, as many as fit the budget.
    let reply_tokens = (40 * k as u32 + 40).min(MAX_REPLY_TOKENS);
    let budget = recovery.extra_tokens.saturating_sub(reply_tokens as u64);
    let mut shown = (candidates.len() / 2).max(1);
    while shown > 0 && request_tokens(query, &candidates[..shown], k) > budget {
        shown -= 1;
    }
    if shown == 0 {
        return Ranked::Lexical(format!(
            "the rerank failed ({problem}) and a retry does not fit [recovery] extra_tokens"
        ));
    }
    match ask(provider, query, &candidates[..shown], k, reply_tokens, used) {
        Ok(ranked) => ranked,
        Err(again) => {
            tracing::warn!("rerank retry: {again}");
            Ranked::Lexical(format!("the rerank failed: {again}"))
        }
    }
}

/// The user turn: the question and the numbered candidates.
fn prompt(query: &str, candidates: &[Hit], k: usize) -> String {
    let mut prompt = format!("Question: {query}\n\nReturn at most {k} ids.\n\nCandidates:\n");
    for (i, hit) in candidates.iter().enumerate() {
        let text: String = hit.text.chars().take(800).collect();
        prompt.push_str(&format!("\n[{}] ({})\n{}\n", i + 1, hit.path, text));
    }
    prompt
}

/// What a call with these candidates sends, in (estimated) tokens.
fn request_tokens(query: &str, candidates: &[Hit], k: usize) -> u64 {
    conversation::estimate_tokens(SYSTEM)
        + conversation::estimate_tokens(&prompt(query, candidates, k))
}

fn ask(
    provider: &mut dyn Provider,
    query: &str,
    candidates: &[Hit],
    k: usize,
    max_tokens: u32,
    used: &mut Usage,
) -> Result<Ranked, NoRerank> {
    let prompt = prompt(query, candidates, k);
    let system = [SystemBlock::hearths("rerank", SYSTEM)];
    let messages = [Message {
        outside: crate::outside::Outside::none(),
        role: Role::User,
        content: vec![Block::Text { text: prompt }],
    }];
    let request = Request {
        system: &system,
        messages: &messages,
        tools: &[],
        max_tokens,
        facts: None,
        cache: None,
        cache_key: None,
    };
    let reply = provider.complete(&request, &mut |_| {})?;
    used.add(reply.usage);
    let text: String = conversation::texts(&reply.content).collect();
    parse(&text, candidates.len(), k)
}

/// Reads the model's answer: ids in range, each once, at most `k`. The
/// JSON the prompt asks for (in a code fence or after a sentence, its
/// `results` as objects or bare numbers, or `ids`) first; failing that, the
/// shapes small local models answer in: the candidates cited as `[3]` or
/// "candidate 3" in prose or a numbered list, or a bare list `3, 1`. An
/// empty answer, or one that names no candidate, is an error: the caller
/// keeps the lexical order and says why.
pub fn parse(text: &str, count: usize, k: usize) -> Result<Ranked, NoRerank> {
    let text = text.trim();
    if text.is_empty() {
        return Err(NoRerank::Empty);
    }
    let json = match (text.find('{'), text.rfind('}')) {
        (Some(start), Some(end)) if end > start => {
            Some(serde_json::from_str::<Value>(&text[start..=end]))
        }
        _ => None,
    };
    let listed = match &json {
        Some(Ok(value)) => value["results"].as_array().or(value["ids"].as_array()),
        _ => None,
    };
    if let Some(items) = listed {
        let items = items.iter().map(|item| {
            let id = item.as_u64().or(item["id"].as_u64());
            let note = item["note"].as_str().unwrap_or("");
            (id, note)
        });
        return match choose(items, count, k) {
            chosen if !chosen.is_empty() => Ok(Ranked::Reranked(chosen)),
            _ if listed.is_some_and(|l| l.is_empty()) => Ok(Ranked::NothingRelevant),
            _ => Err(NoRerank::NoValidIds),
        };
    }
    // "None of [1]-[3] is relevant" cites candidates it rejects.
    let lower = text.to_lowercase();
    if ["none", "nothing", "no relevant", "no candidate"]
        .iter()
        .any(|no| lower.starts_with(no))
    {
        return Ok(Ranked::NothingRelevant);
    }
    let cited = choose(
        cited_ids(text).into_iter().map(|id| (Some(id), "")),
        count,
        k,
    );
    if !cited.is_empty() {
        return Ok(Ranked::Reranked(cited));
    }
    Err(match json {
        Some(Err(e)) => NoRerank::NotJson(e.to_string()),
        Some(Ok(_)) => NoRerank::NoResults,
        None => NoRerank::NothingNamed,
    })
}

/// Valid ids (1-based, in range, each once, at most `k`), 0-based, with
/// their notes cleaned.
fn choose<'a>(
    items: impl Iterator<Item = (Option<u64>, &'a str)>,
    count: usize,
    k: usize,
) -> Vec<(usize, String)> {
    let mut chosen: Vec<(usize, String)> = Vec::new();
    for (id, note) in items {
        let Some(id) = id.map(|i| i as usize) else {
            continue;
        };
        if id == 0 || id > count || chosen.iter().any(|(c, _)| *c == id - 1) {
            continue;
        }
        let note: String = note.chars().filter(|c| !c.is_control()).take(200).collect();
        chosen.push((id - 1, note));
        if chosen.len() == k {
            break;
        }
    }
    chosen
}

/// The candidates an answer names, in order: `[3]`, "candidate 3", or the
/// whole answer a bare list of numbers (`3, 1, 2`).
fn cited_ids(text: &str) -> Vec<u64> {
    let bare = text
        .chars()
        .all(|c| c.is_ascii_digit() || c == ',' || c.is_whitespace());
    if bare {
        return text
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter_map(|n| n.parse().ok())
            .collect();
    }
    let lower = text.to_lowercase();
    let mut found: Vec<(usize, u64)> = Vec::new();
    for (at, _) in lower.match_indices('[') {
        let digits: String = lower[at + 1..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        if !digits.is_empty() && lower[at + 1 + digits.len()..].starts_with(']') {
            found.extend(digits.parse().ok().map(|n| (at, n)));
        }
    }
    for (at, word) in lower.match_indices("candidate") {
        let rest = lower[at + word.len()..].trim_start_matches([' ', '#']);
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        found.extend(digits.parse().ok().map(|n| (at, n)));
    }
    found.sort();
    found.into_iter().map(|(_, n)| n).collect()
}

/// Reranks with the `[rerank]` model, or says why the lexical order
/// stands (offline provider, missing key, `--no-rerank`).
pub fn with_config(
    config: &Config,
    api_key: Option<&str>,
    query: &str,
    candidates: &[Hit],
    k: usize,
) -> (Ranked, Option<RerankCost>) {
    let m = rerank_config(config);
    if m.provider == crate::config::ProviderKind::Offline {
        return (
            Ranked::Lexical("no rerank model is configured (offline)".into()),
            None,
        );
    }
    let mut provider = match model::provider_for(&m, api_key) {
        Ok(p) => p,
        Err(e) => return (Ranked::Lexical(e.to_string()), None),
    };
    let recovery = RerankBudget {
        wall: Duration::from_secs(config.recovery.wall_s.max(1)),
        extra_tokens: config.recovery.extra_tokens,
    };
    let mut used = Usage::default();
    let ranked = rerank(provider.as_mut(), query, candidates, k, recovery, &mut used);
    let cost = RerankCost {
        model: m.model.clone(),
        input_tokens: used.input_sent(),
        output_tokens: used.output_tokens,
        cost_usd: used.cost_usd(config.price_of(&m).as_ref()),
    };
    (ranked, Some(cost))
}

/// What a rerank's calls used and cost: for the call ledger
/// (`state/calls.jsonl`) and the day's budget.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RerankCost {
    /// The model called.
    pub model: String,
    /// Input tokens, however priced.
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Dollars, at the model's price.
    pub cost_usd: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The parse, its failure as the user reads it.
    fn parsed(text: &str, count: usize, k: usize) -> Result<Ranked, String> {
        parse(text, count, k).map_err(|e| e.to_string())
    }

    #[test]
    fn answers_are_validated() {
        assert_eq!(
            parsed(
                r#"Sure: {"results": [{"id": 2, "note": "names it"}, {"id": 2}, {"id": 9}, {"id": 1}]}"#,
                3,
                5
            ),
            Ok(Ranked::Reranked(vec![
                (1, "names it".into()),
                (0, String::new())
            ]))
        );
        assert_eq!(
            parsed(r#"{"results": []}"#, 3, 5),
            Ok(Ranked::NothingRelevant)
        );
        assert!(parsed("I think 2", 3, 5).is_err());
        assert!(parsed(r#"{"results": [{"id": 7}]}"#, 3, 5).is_err());
        assert_eq!(
            parsed(r#"{"results": [{"id": 1}, {"id": 2}, {"id": 3}]}"#, 3, 2),
            Ok(Ranked::Reranked(vec![
                (0, String::new()),
                (1, String::new())
            ]))
        );
    }

    #[test]
    fn the_shapes_small_models_answer_in_are_read() {
        let ids = |text: &str| -> Vec<usize> {
            match parsed(text, 4, 3) {
                Ok(Ranked::Reranked(chosen)) => chosen.into_iter().map(|(i, _)| i + 1).collect(),
                other => panic!("{text:?}: {other:?}"),
            }
        };
        let fenced = "Here you go:\n```json\n{\"results\": [{\"id\": 3, \"note\": \"x\"}]}\n```";
        assert_eq!(ids(fenced), vec![3]);
        assert_eq!(ids(r#"{"results": [2, 4]}"#), vec![2, 4], "bare numbers");
        assert_eq!(ids(r#"{"ids": [4, 1]}"#), vec![4, 1]);
        let numbered = "1. [2] the heron eats fish\n2. [1] the heron waits\n3. [2] again";
        assert_eq!(ids(numbered), vec![2, 1], "a numbered list of citations");
        let prose = "The answer is in candidate 3, and Candidate #1 says more.";
        assert_eq!(ids(prose), vec![3, 1]);
        assert_eq!(ids("The best is [4]; [9] does not exist."), vec![4]);
        assert_eq!(ids("3, 1, 2, 4"), vec![3, 1, 2], "a bare list, cut to k");
        assert_eq!(
            parsed("   ", 4, 3),
            Err("the answer was empty".into()),
            "an empty answer is said, and the lexical order stands"
        );
        assert_eq!(
            parsed("None of [1]-[3] answers it.", 4, 3),
            Ok(Ranked::NothingRelevant),
            "an answer that begins by rejecting them all"
        );
        assert_eq!(
            parsed("Nothing relevant.", 4, 3),
            Ok(Ranked::NothingRelevant)
        );
        assert!(parsed("I cannot tell, sorry.", 4, 3).is_err());
        assert!(parsed("{not json at all}", 4, 3)
            .unwrap_err()
            .contains("not JSON"));
    }
}
