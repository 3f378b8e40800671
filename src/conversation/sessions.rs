//! `state/sessions.jsonl`: what was said through either door, one versioned
//! JSON line per event, append-only (DESIGN 10). An `ask` writes its
//! question *before* the model is called (write-ahead: a crash or Ctrl-C
//! keeps it) and its answer when the stream ends (marked incomplete when it
//! was cut); a tick that read inbox messages or said something appends what
//! it was asked and what it said, `send` bodies included. So the agent's
//! hot memory is the same whichever door the operator used.

use std::collections::BTreeMap;

use chrono::{DateTime, SecondsFormat, Utc};
use serde::{Deserialize, Serialize};

use crate::atomic;
use crate::home::layout::rel;
use crate::home::Home;

/// The format of a line.
pub const VERSION: u32 = 1;

/// One event.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Line {
    /// [`VERSION`].
    pub v: u32,
    /// The ask's id (a question and its answer share it), or `tick-N`.
    pub id: String,
    /// When.
    pub time: DateTime<Utc>,
    /// `question`, `answer` or `tick`.
    pub kind: String,
    /// What the operator asked (a question; a tick's inbox, joined).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub asked: String,
    /// What the agent said (an answer; a tick's reply and sends).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub said: String,
    /// The tier the question was given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tier: Option<String>,
    /// Estimated tokens by part of the request.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tokens: BTreeMap<String, u64>,
    /// An answer: whether it arrived whole.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub complete: Option<bool>,
    /// An answer: the provider's usage (input, output).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<(u64, u64)>,
    /// An answer: what it cost (counts toward `[budget] daily_usd`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cost_usd: f64,
    /// An answer: the provider that gave it (`offline` answers only echo
    /// recall, and are not indexed for it).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub provider: String,
    /// An answer: what cut the ask short (a signal, a kill), when something
    /// did; its writes are in a commit `ask (interrupted): …`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interrupted: Option<String>,
    /// Where the outside words in it came from (`provenance` chains): a
    /// question asked with piped mail, an answer or a tick given outside
    /// content. A door that shows this line as hot memory is tainted by
    /// it, so doors assembling a clean turn leave marked lines out.
    #[serde(default, skip_serializing_if = "crate::outside::Outside::is_empty")]
    pub outside: crate::outside::Outside,
    /// A tick: the inbox messages it read, each where it is archived and
    /// who it was from, so the thread (`/talk`) shows each as it was
    /// written, from whom.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub read: Vec<ReadMessage>,
    /// A tick: the letters it posted to `outbox/` (the agent's replies).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub letters: Vec<String>,
}

/// An inbox message a tick read, as its session line keeps it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReadMessage {
    /// Where it was (`inbox/…`).
    pub rel: String,
    /// Where it is archived (`state/inbox-archive/…`).
    pub archived: String,
    /// Who it was from when not the operator (`from mallory@example.org`,
    /// `sender not judged`): outside words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outside: Option<String>,
}

fn is_zero(n: &f64) -> bool {
    *n == 0.0
}

/// One exchange: what was asked, and what was said back, by either door.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionExchange {
    /// When it was asked.
    pub time: DateTime<Utc>,
    /// `ask` or `tick N`.
    pub door: String,
    /// The question or the inbox.
    pub asked: String,
    /// The answer, the reply and what was sent; empty if none was stored.
    pub said: String,
    /// The answer was cut off, or never came (a crash mid-answer).
    pub incomplete: bool,
    /// An answer line was stored (so an empty answer was cut off and
    /// dropped, not interrupted by a crash).
    pub answered: bool,
    /// Where the outside words of its lines came from (`Line::outside`).
    pub outside: crate::outside::Outside,
}

/// Appends `line`.
pub fn append(home: &Home, line: &Line) -> Result<(), atomic::WriteError> {
    let text = serde_json::to_string(line).expect("a session line serialises");
    atomic::append_line(&home.path(rel::SESSIONS), &text)
}

/// Every line that parses (a line half-written by a crash is skipped).
pub fn read(home: &Home) -> Vec<Line> {
    read_checked(home).0
}

/// Every line that parses, and `(line number, why)` for each that does
/// not, so `hearth status` can name them (a torn last line after a crash,
/// or a hand edit gone wrong).
pub fn read_checked(home: &Home) -> (Vec<Line>, Vec<(usize, String)>) {
    let text = std::fs::read(home.path(rel::SESSIONS))
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default();
    let mut lines = Vec::new();
    let mut skipped = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str(line) {
            Ok(l) => lines.push(l),
            Err(e) => skipped.push((i + 1, e.to_string())),
        }
    }
    (lines, skipped)
}

/// The start of `now`'s UTC day.
pub fn day_start(now: DateTime<Utc>) -> DateTime<Utc> {
    now.date_naive()
        .and_hms_opt(0, 0, 0)
        .map_or(now, |start| start.and_utc())
}

/// What the asks answered after `since` cost.
pub fn asked_spend_since(lines: &[Line], since: DateTime<Utc>) -> f64 {
    lines
        .iter()
        .filter(|l| l.kind == "answer" && l.time > since)
        .fold(0.0, |spent, l| spent + l.cost_usd)
}

/// What asks cost on `now`'s UTC day (they count toward `[budget]
/// daily_usd` like ticks; the supervisor's `budget.json` holds the ticks').
pub fn asked_spend(lines: &[Line], now: DateTime<Utc>) -> f64 {
    let day = now.date_naive();
    lines
        .iter()
        .filter(|l| l.kind == "answer" && l.time.date_naive() == day)
        .fold(0.0, |spent, l| spent + l.cost_usd)
}

/// The exchanges, oldest first: each question with its answer (if one was
/// stored), and each tick.
pub fn exchanges(lines: &[Line]) -> Vec<SessionExchange> {
    let answers: BTreeMap<&str, &Line> = lines
        .iter()
        .filter(|l| l.kind == "answer")
        .map(|l| (l.id.as_str(), l))
        .collect();
    lines
        .iter()
        .filter_map(|l| match l.kind.as_str() {
            "question" => {
                let answer = answers.get(l.id.as_str());
                let mut outside = l.outside.clone();
                if let Some(answer) = answer {
                    outside.add_from(&answer.outside);
                }
                Some(SessionExchange {
                    time: l.time,
                    door: "ask".into(),
                    asked: l.asked.clone(),
                    said: answer.map(|a| a.said.clone()).unwrap_or_default(),
                    incomplete: answer.is_none_or(|a| a.complete == Some(false)),
                    answered: answer.is_some(),
                    outside,
                })
            }
            "tick" => Some(SessionExchange {
                time: l.time,
                door: l.id.replace('-', " "),
                asked: l.asked.clone(),
                said: l.said.clone(),
                incomplete: false,
                answered: true,
                outside: l.outside.clone(),
            }),
            _ => None,
        })
        .collect()
}

/// How much of one side of an exchange is quoted.
const QUOTE_CHARS: usize = 1200;

/// `exchanges` as the model reads them, oldest first.
pub fn render(exchanges: &[SessionExchange]) -> String {
    let quote = |s: &str| {
        let mut q: String = s.trim().chars().take(QUOTE_CHARS).collect();
        if s.trim().chars().count() > QUOTE_CHARS {
            q.push('…');
        }
        q
    };
    let mut out = String::new();
    for x in exchanges {
        let time = x.time.to_rfc3339_opts(SecondsFormat::Secs, true);
        out.push_str(&format!(
            "[{time}, {}]\noperator: {}\n",
            x.door,
            quote(&x.asked)
        ));
        let said = if x.said.trim().is_empty() && x.answered {
            "(no answer was kept: it was cut off before it was whole)".to_string()
        } else if x.said.trim().is_empty() {
            "(no answer was stored: it was interrupted)".to_string()
        } else if x.incomplete {
            format!("{} [cut off: incomplete]", quote(&x.said))
        } else {
            quote(&x.said)
        };
        out.push_str(&format!("agent: {said}\n\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(id: &str, kind: &str, asked: &str, said: &str, minute: i64) -> Line {
        Line {
            v: VERSION,
            id: id.into(),
            time: DateTime::from_timestamp(1_800_000_000 + minute * 60, 0).unwrap(),
            kind: kind.into(),
            asked: asked.into(),
            said: said.into(),
            ..Line::default()
        }
    }

    #[test]
    fn questions_pair_with_their_answers_and_ticks_stand_alone() {
        let mut answer = line("a1", "answer", "", "PERIHELION", 1);
        answer.complete = Some(true);
        let lines = vec![
            line("a1", "question", "give me a secret word", "", 0),
            answer,
            line("tick-4", "tick", "hello", "sent: hi there", 2),
            line("a2", "question", "and now?", "", 3),
        ];
        let x = exchanges(&lines);
        assert_eq!(x.len(), 3);
        assert_eq!((x[0].said.as_str(), x[0].incomplete), ("PERIHELION", false));
        assert_eq!(x[1].door, "tick 4");
        assert!(x[2].incomplete, "a question with no answer stored");
        let text = render(&x);
        assert!(text.contains("agent: PERIHELION"));
        assert!(text.contains("(no answer was stored: it was interrupted)"));
    }
}
