//! One answer to "what does the memory hold about this?" (DESIGN 9): the
//! lexical candidates, the rerank (or the lexical order and why it stands),
//! who wrote each block (`Repo::newest_origin`), and its citation
//! `path:start-end@commit`. `hearth recall`, the agent's `recall` tool and
//! `hearth ask` all answer through here, so they rank, cite and print alike.

use serde::Serialize;

use super::index::Hit;
use super::rerank::{self, Ranked};
use super::IndexError;
use crate::config::Config;
use crate::home::Home;
use crate::repo::Repo;

/// How much of a block an answer shows.
pub const EXCERPT_CHARS: usize = 300;

/// What to ask.
pub struct RecallQuestion<'a> {
    /// The words to look for.
    pub query: &'a str,
    /// How many results, at most.
    pub k: usize,
    /// How many lexical candidates the rerank chooses from.
    pub candidates: usize,
    /// Whether a model reranks.
    pub rerank: Rerank<'a>,
    /// Look at every file even when a running supervisor's watcher vouches
    /// for the index: for an asker that may have written a memory a moment
    /// ago, before the watcher could see it (the agent's own tools).
    pub walk: bool,
}

/// Whether a model reranks the candidates.
pub enum Rerank<'a> {
    /// No: the lexical order stands, for this reason.
    Skip(&'a str),
    /// With the `[rerank]` model of `config` (if it is not offline).
    Model {
        /// The configuration (`[rerank]`, `[model]`, `[recovery]`).
        config: &'a Config,
        /// The rerank provider's key, when it needs one.
        api_key: Option<&'a str>,
    },
}

/// What the memory holds about a question.
#[derive(Debug, Clone, Serialize)]
pub struct Answer {
    /// The question.
    pub query: String,
    /// `reranked` or `lexical`.
    pub order: &'static str,
    /// Why the lexical order stands, when it does.
    pub lexical_because: Option<String>,
    /// The blocks, best first.
    pub results: Vec<Found>,
    /// Files the index could not read this time (named, not fatal).
    #[serde(skip)]
    pub skipped: Vec<String>,
    /// What the rerank's model calls cost, when one was made: the caller
    /// puts it on the call ledger.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rerank_cost: Option<rerank::RerankCost>,
}

/// One block of the answer.
#[derive(Debug, Clone, Serialize)]
pub struct Found {
    /// 1 for the best.
    pub rank: usize,
    /// The file (or archive turn), relative to the home.
    pub path: String,
    /// First line, 1-based.
    pub start: u64,
    /// Last line, inclusive.
    pub end: u64,
    /// The commit that last changed these lines, `uncommitted`, or
    /// `unknown` (the history cannot be read).
    pub commit: String,
    /// `path:start-end@commit`.
    pub citation: String,
    /// `tick N`, `operator`, `hearth`, `uncommitted` or `unknown`.
    pub by: String,
    /// The nearest heading above the block.
    pub heading: String,
    /// The block's text, cut at [`EXCERPT_CHARS`].
    pub excerpt: String,
    /// Its BM25 score.
    pub score: f32,
    /// The reranker's one line on why it is relevant.
    pub note: String,
}

/// Answers `question` from the home's memory, the index brought up to date
/// first.
pub fn answer(home: &Home, question: &RecallQuestion<'_>) -> Result<Answer, IndexError> {
    let k = question.k.max(1);
    let mut index = super::index::RecallIndex::open(home)?;
    let reconciled = if question.walk {
        index.reconcile(home)?
    } else {
        index.catch_up(home)?
    };
    let hits = index.search(question.query, question.candidates.max(k))?;
    let (ranked, rerank_cost) = match question.rerank {
        Rerank::Skip(why) => (Ranked::Lexical(why.into()), None),
        Rerank::Model { config, api_key } => {
            rerank::with_config(config, api_key, question.query, &hits, k)
        }
    };
    let (chosen, order, lexical_because): (Vec<(Hit, String)>, _, _) = match ranked {
        Ranked::Reranked(chosen) => (
            chosen
                .into_iter()
                .map(|(i, note)| (hits[i].clone(), note))
                .collect(),
            "reranked",
            None,
        ),
        Ranked::NothingRelevant => (Vec::new(), "reranked", None),
        Ranked::Lexical(reason) => (
            hits.into_iter()
                .take(k)
                .map(|h| (h, String::new()))
                .collect(),
            "lexical",
            Some(reason),
        ),
    };
    let repo = Repo::open(home.root()).ok();
    let results = chosen
        .into_iter()
        .enumerate()
        .map(|(i, (hit, note))| found(repo.as_ref(), i + 1, hit, note))
        .collect();
    Ok(Answer {
        query: question.query.to_string(),
        order,
        lexical_because,
        results,
        skipped: reconciled.skipped,
        rerank_cost,
    })
}

fn found(repo: Option<&Repo>, rank: usize, hit: Hit, note: String) -> Found {
    let file = hit.path.split('#').next().unwrap_or(&hit.path);
    // `unknown` when the history cannot say (a shallow clone, a lost
    // object): not "uncommitted", which it was not seen to be. A home with
    // no repository has committed nothing.
    let provenance = repo.map(|r| r.newest_origin(file, hit.start as usize, hit.end as usize));
    let (by, commit) = match provenance {
        Some(Ok(Some(p))) => {
            let by = match p.tick {
                Some(tick) => format!("tick {tick}"),
                None if p.author == "hearth" => "hearth".into(),
                None => "operator".into(),
            };
            (by, p.commit)
        }
        Some(Ok(None)) | None => ("uncommitted".to_string(), "uncommitted".to_string()),
        Some(Err(_)) => ("unknown".to_string(), "unknown".to_string()),
    };
    Found {
        rank,
        citation: citation(&hit.path, hit.start, hit.end, &commit),
        excerpt: excerpt(&hit.text),
        path: hit.path,
        start: hit.start,
        end: hit.end,
        commit,
        by,
        heading: hit.heading,
        score: hit.score,
        note,
    }
}

impl Answer {
    /// The answer as people and the agent read it.
    pub fn render(&self) -> String {
        if self.results.is_empty() {
            return format!("nothing relevant in memory for {:?}\n", self.query);
        }
        let marker = if self.order == "lexical" {
            "(lexical) "
        } else {
            ""
        };
        let mut out = format!(
            "{marker}{} result(s) for {:?}\n",
            self.results.len(),
            self.query
        );
        for found in &self.results {
            out.push_str(&format!(
                "{}. {}  by {}\n",
                found.rank, found.citation, found.by
            ));
            if !found.note.is_empty() {
                out.push_str(&format!("   relevant: {}\n", found.note));
            }
            for line in found.excerpt.lines() {
                out.push_str(&format!("   {line}\n"));
            }
        }
        out
    }
}

/// `path:start-end@commit`; a conversation turn is `path#turn-N@commit`.
pub fn citation(path: &str, start: u64, end: u64, commit: &str) -> String {
    if path.contains('#') {
        format!("{path}@{commit}")
    } else if start == end {
        format!("{path}:{start}@{commit}")
    } else {
        format!("{path}:{start}-{end}@{commit}")
    }
}

/// At most [`EXCERPT_CHARS`] characters of the block.
fn excerpt(text: &str) -> String {
    let mut out: String = text.chars().take(EXCERPT_CHARS).collect();
    if text.chars().count() > EXCERPT_CHARS {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn citations_name_lines_or_turns_and_the_commit() {
        assert_eq!(
            citation("memory/a.md", 3, 4, "abc1234"),
            "memory/a.md:3-4@abc1234"
        );
        assert_eq!(
            citation("memory/a.md", 3, 3, "abc1234"),
            "memory/a.md:3@abc1234"
        );
        assert_eq!(
            citation("state/archive/m.json#turn-2", 0, 0, "uncommitted"),
            "state/archive/m.json#turn-2@uncommitted"
        );
        let long = "x".repeat(EXCERPT_CHARS + 5);
        assert_eq!(excerpt(&long).chars().count(), EXCERPT_CHARS + 1);
    }
}
