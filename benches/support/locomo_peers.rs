//! The peers a user would otherwise reach for, over the same LoCoMo
//! blocks: SQLite FTS5 and ripgrep.

use std::collections::{BTreeMap, HashSet};

use super::{score, Conversation, Run};

/// SQLite FTS5 (porter stemming, bm25 order) over the same blocks, one
/// `sqlite3` process per conversation; the top 20 block texts per question.
pub(crate) fn fts5(conversations: &mut [Conversation]) -> Option<Run> {
    let mut answers: Vec<Vec<Vec<String>>> = Vec::new();
    for c in conversations.iter() {
        let mut sql =
            String::from("CREATE VIRTUAL TABLE b USING fts5(body, tokenize='porter unicode61');\n");
        for (i, block) in c.blocks.iter().enumerate() {
            sql.push_str(&format!(
                "INSERT INTO b(rowid, body) VALUES ({}, '{}');\n",
                i + 1,
                block.replace('\'', "''")
            ));
        }
        for (n, q) in c.questions.iter().enumerate() {
            let words: Vec<String> = q
                .text
                .split(|ch: char| !ch.is_alphanumeric())
                .filter(|w| !w.is_empty())
                .map(|w| format!("\"{}\"", w.to_lowercase()))
                .collect();
            sql.push_str(&format!("SELECT 'Q{n}';\n"));
            if !words.is_empty() {
                sql.push_str(&format!(
                    "SELECT rowid FROM b WHERE b MATCH '{}' ORDER BY bm25(b) LIMIT 20;\n",
                    words.join(" OR ").replace('\'', "''")
                ));
            }
        }
        let mut child = std::process::Command::new("sqlite3")
            .arg(":memory:")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .ok()?;
        use std::io::Write;
        child.stdin.take()?.write_all(sql.as_bytes()).ok()?;
        let out = child.wait_with_output().ok()?;
        let mut per_question: Vec<Vec<String>> = vec![Vec::new(); c.questions.len()];
        let mut current = None;
        for line in String::from_utf8_lossy(&out.stdout).lines() {
            if let Some(n) = line.strip_prefix('Q').and_then(|n| n.parse::<usize>().ok()) {
                current = Some(n);
            } else if let (Some(n), Ok(row)) = (current, line.trim().parse::<usize>()) {
                per_question[n].push(c.blocks[row - 1].clone());
            }
        }
        answers.push(per_question);
    }
    let mut which = 0usize;
    let mut seen = 0usize;
    Some(score(conversations, |c, _q| {
        let _ = c;
        if seen == answers[which].len() {
            which += 1;
            seen = 0;
        }
        seen += 1;
        answers[which][seen - 1].clone()
    }))
}

/// Words a person would not bother to grep for.
const GREP_SKIPS: &[&str] = &[
    "what", "when", "where", "which", "who", "whom", "whose", "why", "how", "does", "did", "have",
    "has", "had", "with", "that", "this", "from", "they", "their", "them", "about", "would",
    "could", "should", "been", "were", "into", "your", "some", "there",
];

/// ripgrep as a person uses it: the question's content words (four
/// letters or more), case-insensitive whole words over the conversation's
/// files; lines ranked by how many distinct words they match, then by how
/// many matches, then by position. Every turn is one line, so a line is a
/// block.
pub(crate) fn ripgrep(conversations: &mut [Conversation]) -> Option<Run> {
    std::process::Command::new("rg")
        .arg("--version")
        .output()
        .ok()?;
    Some(score(conversations, |c, q| {
        let words: Vec<String> = q
            .text
            .split(|ch: char| !ch.is_alphanumeric())
            .map(str::to_lowercase)
            .filter(|w| w.len() >= 4 && !GREP_SKIPS.contains(&w.as_str()))
            .collect();
        if words.is_empty() {
            return Vec::new();
        }
        let mut cmd = std::process::Command::new("rg");
        cmd.args([
            "-i",
            "-w",
            "-o",
            "-n",
            "--no-heading",
            "--with-filename",
            "--sort",
            "path",
        ]);
        for w in &words {
            cmd.args(["-e", w]);
        }
        let out = cmd.arg(&c.memory).output().unwrap();
        // (file, line) -> (distinct words, matches, order of appearance)
        let mut lines: BTreeMap<(String, usize), (HashSet<String>, usize, usize)> = BTreeMap::new();
        for (order, line) in String::from_utf8_lossy(&out.stdout).lines().enumerate() {
            let mut parts = line.rsplitn(3, ':');
            let (Some(word), Some(number), Some(file)) = (parts.next(), parts.next(), parts.next())
            else {
                continue;
            };
            let Ok(number) = number.parse::<usize>() else {
                continue;
            };
            let entry = lines
                .entry((file.to_string(), number))
                .or_insert_with(|| (HashSet::new(), 0, order));
            entry.0.insert(word.to_lowercase());
            entry.1 += 1;
        }
        let mut ranked: Vec<_> = lines.into_iter().collect();
        ranked.sort_by(|a, b| (b.1 .0.len(), b.1 .1, a.1 .2).cmp(&(a.1 .0.len(), a.1 .1, b.1 .2)));
        ranked
            .into_iter()
            .take(20)
            .map(|((file, number), _)| {
                std::fs::read_to_string(&file)
                    .ok()
                    .and_then(|t| t.lines().nth(number - 1).map(str::to_string))
                    .unwrap_or_default()
            })
            .collect()
    }))
}
