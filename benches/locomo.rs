//! Lexical recall quality on LoCoMo (development subset, protocol in
//! `../shared/bench/locomo/README.md`): each conversation becomes one
//! markdown file per session, one paragraph per turn; every question is a
//! `hearth recall` query over its conversation; a result's `[Dn:m]` ids are
//! matched against the question's evidence. Prints frac/all/any @1/5/10/20
//! per category and the mean characters per result.
//!
//! `cargo bench --bench locomo` (skips when the data is not beside the repo)

#![allow(clippy::disallowed_methods)] // fixtures, not state

mod common;
#[path = "support/locomo_peers.rs"]
mod peers;
#[path = "support/locomo_stats.rs"]
mod stats;

use stats::{erfc, holm};

use std::collections::{BTreeMap, HashSet};
use std::time::Instant;

use hearth::recall::hop::Hop;
use hearth::recall::index::{RecallIndex, Weights};

/// The second hop's best setting on the development set (names from the
/// top 3 blocks, two of them, at a tenth of a question term's weight).
const SECOND_HOP: Hop = Hop {
    terms: 2,
    from: 3,
    weight: 0.1,
    confident: f32::INFINITY,
};
use serde_json::Value;

const KS: [usize; 4] = [1, 5, 10, 20];
const CATEGORIES: [(u64, &str); 5] = [
    (1, "multi-hop"),
    (2, "temporal"),
    (3, "open-domain"),
    (4, "single-hop"),
    (5, "adversarial"),
];

#[derive(Default)]
struct Score {
    questions: usize,
    frac: [f64; 4],
    all: [f64; 4],
    any: [f64; 4],
}

struct Question {
    category: u64,
    text: String,
    gold: HashSet<String>,
}

struct Conversation {
    _dir: tempfile::TempDir,
    /// Where the conversation's markdown is, for ripgrep.
    memory: std::path::PathBuf,
    index: RecallIndex,
    questions: Vec<Question>,
    /// The same blocks hearth indexes, for the peers.
    blocks: Vec<String>,
}

fn ids(text: &str) -> Vec<String> {
    let mut ids = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("[D") {
        let tail = &rest[i + 2..];
        let end = tail.find(']').unwrap_or(0);
        if let Some((a, b)) = tail[..end].split_once(':') {
            if !a.is_empty()
                && a.chars().all(|c| c.is_ascii_digit())
                && b.chars().all(|c| c.is_ascii_digit())
            {
                ids.push(format!("D{a}:{b}"));
            }
        }
        rest = &tail[end..];
    }
    ids
}

fn load(conversation: &Value) -> Conversation {
    let dir = tempfile::tempdir().unwrap();
    let home = hearth::home::init(dir.path(), hearth::clock::Clock::System.now())
        .unwrap()
        .home;
    // Only the conversation is memory here: the templates would add noise.
    std::fs::remove_dir_all(home.memory_dir()).unwrap();
    let conv = &conversation["conversation"];
    let name = conversation["sample_id"].as_str().unwrap_or("conv");
    let mut known: HashSet<String> = HashSet::new();
    let mut blocks = Vec::new();
    for n in 1..100 {
        let Some(turns) = conv.get(format!("session_{n}")).and_then(|t| t.as_array()) else {
            continue;
        };
        let date = conv[format!("session_{n}_date_time")]
            .as_str()
            .unwrap_or("");
        let mut text = format!("# Session {n}, {date}\n");
        for turn in turns {
            let id = turn["dia_id"].as_str().unwrap_or("");
            known.insert(id.to_string());
            text.push_str(&format!(
                "\n[{id}] {}: {}",
                turn["speaker"].as_str().unwrap_or(""),
                turn["text"].as_str().unwrap_or("")
            ));
            if let Some(caption) = turn["blip_caption"].as_str() {
                text.push_str(&format!(" [shares an image: {caption}]"));
            }
            text.push('\n');
        }
        blocks.extend(
            hearth::recall::blocks::split(&text)
                .into_iter()
                .map(|b| b.text),
        );
        let file = home.memory_dir().join(format!("{name}/session_{n:02}.md"));
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, text).unwrap();
    }
    let mut index = RecallIndex::open(&home).unwrap();
    index.reconcile(&home).unwrap();
    let questions = conversation["qa"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|qa| {
            let gold: HashSet<String> = qa["evidence"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|e| e.as_str())
                .flat_map(|e| ids(&format!("[{}]", e.replace("D:", "D").replace(' ', ""))))
                .filter(|id| known.contains(id))
                .collect();
            (!gold.is_empty()).then(|| Question {
                category: qa["category"].as_u64().unwrap_or(0),
                text: qa["question"].as_str().unwrap_or("").to_string(),
                gold,
            })
        })
        .collect();
    Conversation {
        _dir: dir,
        memory: home.memory_dir(),
        index,
        questions,
        blocks,
    }
}

struct Run {
    by_category: BTreeMap<u64, Score>,
    overall: Score,
    chars_per_result: f64,
    p50_ms: f64,
    p95_ms: f64,
}

fn evaluate(conversations: &mut [Conversation], weights: Weights) -> Run {
    for conversation in conversations.iter_mut() {
        conversation.index.weights = weights;
    }
    score(conversations, |c, q| {
        c.index
            .search(&q.text, 20)
            .unwrap()
            .into_iter()
            .map(|h| h.text)
            .collect()
    })
}

fn score(
    conversations: &mut [Conversation],
    mut rank: impl FnMut(&Conversation, &Question) -> Vec<String>,
) -> Run {
    let mut by_category: BTreeMap<u64, Score> = BTreeMap::new();
    let mut overall = Score::default();
    let (mut chars, mut results) = (0usize, 0usize);
    let mut times = Vec::new();
    for conversation in conversations.iter() {
        for q in &conversation.questions {
            let start = Instant::now();
            let hits = rank(conversation, q);
            times.push(start.elapsed());
            let ranked: Vec<Vec<String>> = hits.iter().map(|h| ids(h)).collect();
            for hit in hits.iter().take(5) {
                chars += hit.chars().count();
                results += 1;
            }
            let score = by_category.entry(q.category).or_default();
            for target in [score, &mut overall] {
                target.questions += 1;
                for (i, k) in KS.iter().enumerate() {
                    let found: HashSet<&String> = ranked.iter().take(*k).flatten().collect();
                    let hit = q.gold.iter().filter(|g| found.contains(g)).count();
                    target.frac[i] += hit as f64 / q.gold.len() as f64;
                    target.all[i] += f64::from(u8::from(hit == q.gold.len()));
                    target.any[i] += f64::from(u8::from(hit > 0));
                }
            }
        }
    }
    times.sort();
    Run {
        by_category,
        overall,
        chars_per_result: chars as f64 / results.max(1) as f64,
        p50_ms: times[times.len() / 2].as_secs_f64() * 1000.0,
        p95_ms: times[times.len() * 95 / 100].as_secs_f64() * 1000.0,
    }
}

fn pct(s: &Score, v: f64) -> f64 {
    100.0 * v / s.questions.max(1) as f64
}

fn main() {
    let Some(data) = common::locomo() else {
        return;
    };
    common::ensure_tool("sqlite3", "sqlite3");
    common::ensure_tool("rg", "ripgrep");
    let start = Instant::now();
    let mut conversations: Vec<Conversation> = data.iter().map(load).collect();
    let build = start.elapsed().as_secs_f64();

    if let Ok(grid) = std::env::var("HOP_GRID") {
        hop_grid(&mut conversations, &grid);
        return;
    }
    println!("weights grid (overall frac@5 / frac@20):");
    for heading in [0.5, 1.0, 1.5] {
        for context in [0.0, 0.3, 0.5, 0.7, 1.0] {
            let run = evaluate(
                &mut conversations,
                Weights {
                    heading,
                    context,
                    ..Weights::default()
                },
            );
            println!(
                "  heading {heading:<4} context {context:<4}  {:>5.1} / {:>5.1}",
                pct(&run.overall, run.overall.frac[1]),
                pct(&run.overall, run.overall.frac[3])
            );
        }
    }

    println!(
        "\nsubject weight, every question alike (frac@5 / frac@20, overall and per category):"
    );
    for subject in [0.0, 0.5, 0.8, 1.0, 2.0, 4.0] {
        let run = evaluate(
            &mut conversations,
            Weights {
                subject,
                list_subject: subject,
                ..Weights::default()
            },
        );
        println!("{}", grid_line(&format!("subject {subject}"), &run));
    }
    println!("\nsubject weight for questions that ask for a list (the others 0.8):");
    for list_subject in [0.8, 2.0, 3.0, 4.0, 6.0] {
        let run = evaluate(
            &mut conversations,
            Weights {
                list_subject,
                ..Weights::default()
            },
        );
        println!(
            "{}",
            grid_line(&format!("list subject {list_subject}"), &run)
        );
    }

    let run = evaluate(&mut conversations, Weights::default());
    println!(
        "\nLoCoMo dev ({} conversations, {} questions), hearth lexical recall, default weights {:?}",
        data.len(),
        run.overall.questions,
        Weights::default()
    );
    println!(
        "{:<12} {:>5}  {:>24}  {:>24}  {:>24}",
        "category", "n", "frac@1/5/10/20", "all@1/5/10/20", "any@1/5/10/20"
    );
    print_table(&run);
    println!(
        "files written and indexed in {build:.2} s; warm query p50 {:.3} ms, p95 {:.3} ms",
        run.p50_ms, run.p95_ms
    );
    print_peer(
        &run,
        &format!("hearth with the second hop ({SECOND_HOP:?}; off by default)"),
        "hop",
        Some(evaluate(
            &mut conversations,
            Weights {
                hop: SECOND_HOP,
                ..Weights::default()
            },
        )),
        "",
    );
    print_peer(
        &run,
        "plain BM25 (hearth's fields; no subject, no file coherence)",
        "BM25",
        Some(evaluate(
            &mut conversations,
            Weights {
                subject: 0.0,
                list_subject: 0.0,
                coherence: 1.0,
                ..Weights::default()
            },
        )),
        "",
    );
    print_peer(
        &run,
        "hearth with one subject weight for every question (0.8; lists not told apart)",
        "one subject",
        Some(evaluate(
            &mut conversations,
            Weights {
                list_subject: 0.8,
                ..Weights::default()
            },
        )),
        "",
    );
    print_peer(
        &run,
        "SQLite FTS5 (porter, bm25) over the same blocks",
        "FTS5",
        peers::fts5(&mut conversations),
        "sqlite3 is not installed (apt-get install sqlite3)",
    );
    print_peer(
        &run,
        "ripgrep (content words, lines ranked by distinct words matched)",
        "ripgrep",
        peers::ripgrep(&mut conversations),
        "rg is not installed (apt-get install ripgrep)",
    );
}

/// Tuning: `HOP_GRID="subject,terms,from,weight,confident[,list] …"` runs
/// each setting (the subject weight, the second hop's [`Hop`], and the
/// subject weight for list questions, the first if left out) and prints
/// one line each, instead of the whole report.
///
/// [`Hop`]: hearth::recall::hop::Hop
fn hop_grid(conversations: &mut [Conversation], grid: &str) {
    for setting in grid.split_whitespace() {
        let v: Vec<f32> = setting.split(',').map(|x| x.parse().unwrap()).collect();
        let weights = Weights {
            subject: v[0],
            hop: Hop {
                terms: v[1] as usize,
                from: v[2] as usize,
                weight: v[3],
                confident: v[4],
            },
            list_subject: v.get(5).copied().unwrap_or(v[0]),
            ..Weights::default()
        };
        let run = evaluate(conversations, weights);
        println!("{}", grid_line(setting, &run));
    }
}

/// Overall and per-category frac@5 / frac@20 of one setting, on one line.
fn grid_line(setting: &str, run: &Run) -> String {
    let mut line = format!(
        "  {setting:<22} all {:>5.1}/{:>5.1}",
        pct(&run.overall, run.overall.frac[1]),
        pct(&run.overall, run.overall.frac[3])
    );
    for (id, name) in CATEGORIES {
        if let Some(s) = run.by_category.get(&id) {
            line += &format!(
                "  {} {:>5.1}/{:>5.1}",
                &name[..5],
                pct(s, s.frac[1]),
                pct(s, s.frac[3])
            );
        }
    }
    line + &format!("  p50 {:.3} ms", run.p50_ms)
}

/// The per-category rows and the mean characters per result of one run.
fn print_table(run: &Run) {
    let row = |name: &str, s: &Score| {
        let fmt = |v: &[f64; 4]| {
            v.iter()
                .map(|x| format!("{:>6.1}", pct(s, *x)))
                .collect::<Vec<_>>()
                .join("")
        };
        println!(
            "{:<12} {:>5}  {}  {}  {}",
            name,
            s.questions,
            fmt(&s.frac),
            fmt(&s.all),
            fmt(&s.any)
        );
    };
    for (id, name) in CATEGORIES {
        if let Some(s) = run.by_category.get(&id) {
            row(name, s);
        }
    }
    row("all", &run.overall);
    println!(
        "mean characters per result (top 5): {:.0}",
        run.chars_per_result
    );
}

/// A peer's table and hearth's ratios over it, or why it was skipped.
fn print_peer(hearth: &Run, title: &str, short: &str, peer: Option<Run>, missing: &str) {
    let Some(peer) = peer else {
        println!("\n{short} peer skipped: {missing}");
        return;
    };
    println!("\n{title}:");
    print_table(&peer);
    println!(
        "ratio hearth/{short}: frac@5 {:.2}x, frac@20 {:.2}x",
        hearth.overall.frac[1] / peer.overall.frac[1],
        hearth.overall.frac[3] / peer.overall.frac[3]
    );
    print_significance(hearth, &peer, short);
}

/// Per category, whether hearth and `peer` differ on any@5 (a question
/// answered by at least one evidence turn in the top 5, a proportion): a
/// two-proportion z-test, two-sided, with Holm–Bonferroni across the
/// categories — how a change is claimed per category, not only overall.
/// (The questions are the same on both sides, so the test is
/// conservative; McNemar's would use the pairing.)
fn print_significance(a: &Run, b: &Run, short: &str) {
    let mut rows = Vec::new();
    for (id, name) in CATEGORIES {
        let (Some(x), Some(y)) = (a.by_category.get(&id), b.by_category.get(&id)) else {
            continue;
        };
        let n = x.questions as f64;
        let (p1, p2) = (x.any[1] / n, y.any[1] / n);
        let pooled = (p1 + p2) / 2.0;
        let se = (pooled * (1.0 - pooled) * 2.0 / n).sqrt();
        let z = if se > 0.0 { (p1 - p2) / se } else { 0.0 };
        let p = erfc(z.abs() / std::f64::consts::SQRT_2);
        rows.push((name, x.questions, p1, p2, z, p));
    }
    let adjusted = holm(&rows.iter().map(|r| r.5).collect::<Vec<_>>());
    println!(
        "any@5, hearth vs {short}: two-proportion z-test, Holm–Bonferroni over the categories"
    );
    println!(
        "{:<12} {:>5} {:>8} {:>8} {:>7} {:>9} {:>9}",
        "category", "n", "hearth", short, "z", "p", "p (Holm)"
    );
    for ((name, n, p1, p2, z, p), holm) in rows.iter().zip(adjusted) {
        let mark = if holm < 0.05 { " *" } else { "" };
        println!(
            "{name:<12} {n:>5} {:>7.1}% {:>7.1}% {z:>7.2} {p:>9.4} {holm:>9.4}{mark}",
            100.0 * p1,
            100.0 * p2
        );
    }
}
