//! What the model says it did, checked against what hearth saw it do. The
//! commonest complaint about agents left alone is "it said it did it, and
//! did nothing": a reply that claims a kind of act hearth can observe —
//! writing to memory, sending, handing off, scheduling — when the
//! exchange's tools did no such thing is an unbacked claim. It goes on the
//! ledger, in the commit's subject and `hearth day`, counts as a quiet
//! failure, and the letter to the operator ends with what hearth saw.
//!
//! English first, first person, said as done: "I've saved that to memory",
//! "I wrote it in my journal", "Noted in my memory", "I sent Bob the
//! draft". A sentence that says it was not done, will be done, or might be
//! ("I couldn't save it", "I'll note it", "I can send it if you like") is
//! no claim. Pure functions over the reply's text and the [`Effects`]; no
//! model call.

use crate::tools::Effects;

/// An act a reply claims, of a kind hearth can see.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Act {
    /// Wrote to memory (a note, the journal, identity).
    Wrote,
    /// Sent a letter or a message.
    Sent,
    /// Handed work to a peer.
    HandedOff,
    /// Scheduled something (the agent's own wake-up).
    Scheduled,
}

impl Act {
    /// As a sentence says it: "claimed to have {}".
    pub fn said(self) -> &'static str {
        match self {
            Act::Wrote => "written to memory",
            Act::Sent => "sent a message",
            Act::HandedOff => "handed off",
            Act::Scheduled => "scheduled something",
        }
    }
}

/// One claim the exchange's effects do not back: what, and the words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claim {
    /// The kind of act.
    pub act: Act,
    /// The sentence that claims it, at most 120 characters.
    pub words: String,
}

/// The verbs that claim each act when said as done by "I".
const VERBS: [(Act, &[&str]); 4] = [
    (
        Act::Wrote,
        &[
            "saved",
            "noted",
            "written",
            "wrote",
            "recorded",
            "stored",
            "updated",
            "added",
            "logged",
            "journaled",
            "jotted",
            "memorized",
            "memorised",
            "remembered",
            "documented",
            "made",
        ],
    ),
    (
        Act::Sent,
        &[
            "sent",
            "emailed",
            "messaged",
            "replied",
            "forwarded",
            "notified",
        ],
    ),
    (Act::HandedOff, &["handed", "delegated", "passed"]),
    (Act::Scheduled, &["scheduled", "set"]),
];

/// Words that make a sentence no claim of a done act: negation, the
/// future, a condition, an offer.
const NOT_DONE: [&str; 22] = [
    "not", "n't", "never", "unable", "cannot", "can't", "couldn't", "didn't", "haven't", "won't",
    "will", "i'll", "going", "should", "would", "could", "can", "may", "might", "if", "let",
    "want",
];

/// What the objects of a "set"/"passed"/"added" must be for the claim to
/// be of that kind (a bare "I set the table" is not scheduling).
fn object_fits(act: Act, verb: &str, rest: &[String]) -> bool {
    let near: Vec<&str> = rest.iter().take(6).map(String::as_str).collect();
    let any = |words: &[&str]| near.iter().any(|w| words.contains(w));
    match (act, verb) {
        (Act::Scheduled, "set") => any(&["reminder", "timer", "alarm", "wake-up", "wakeup"]),
        (Act::HandedOff, "passed") => any(&["to", "on"]),
        (Act::HandedOff, "handed") => any(&["off", "over", "to"]),
        // "I've noted your request" is an acknowledgement, not a write.
        // "I made a note of it" writes; "I made my way to the park" does not.
        (Act::Wrote, "made") => any(&["note", "notes", "entry", "record"]),
        (Act::Wrote, "added" | "updated" | "stored" | "saved" | "noted" | "remembered") => any(&[
            "memory", "memories", "note", "notes", "journal", "identity", "file", "it", "this",
            "that", "down",
        ]),
        _ => true,
    }
}

/// The sentences of `reply` that claim an act, in order.
pub fn claims(reply: &str) -> Vec<Claim> {
    let mut found = Vec::new();
    for sentence in sentences(reply) {
        let words = words(&sentence);
        if let Some(act) = claimed(&words).or_else(|| labelled(&sentence)) {
            let shown: String = sentence.trim().chars().take(120).collect();
            found.push(Claim { act, words: shown });
        }
    }
    found
}

/// The act a sentence claims as done by "I" (or as a bare "Noted in my
/// memory" / "Saved to memory"), if any.
fn claimed(words: &[String]) -> Option<Act> {
    let subject = words
        .iter()
        .position(|w| matches!(w.as_str(), "i" | "i've" | "i'd"))
        .map(|i| i + 1);
    // "Saved to memory." "Noted in my journal." A sentence that starts
    // with the verb, about memory, claims it as done too.
    let starts = words.first().is_some_and(|w| {
        matches!(
            w.as_str(),
            "saved" | "noted" | "recorded" | "logged" | "stored"
        )
    }) && words
        .iter()
        .any(|w| matches!(w.as_str(), "memory" | "journal" | "notes"));
    let from = match (subject, starts) {
        (_, true) => 0,
        (Some(from), _) => from,
        (None, false) => return None,
    };
    if words[..from].iter().any(|w| NOT_DONE.contains(&w.as_str())) {
        return None;
    }
    // The verb comes within a few words: "I have just now saved…".
    for (i, word) in words.iter().enumerate().skip(from).take(4) {
        if NOT_DONE.contains(&word.as_str()) {
            return None;
        }
        for (act, verbs) in VERBS {
            if verbs.contains(&word.as_str()) && object_fits(act, word, &words[i + 1..]) {
                return Some(act);
            }
        }
    }
    None
}

/// A line that reports a write as a label: "Saved: the gate code" (a
/// form small models use for "I saved it").
fn labelled(sentence: &str) -> Option<Act> {
    let (head, rest) = sentence.trim().split_once(':')?;
    let head = head.trim().to_lowercase();
    let saved = matches!(
        head.as_str(),
        "saved" | "noted" | "recorded" | "logged" | "stored"
    );
    (saved && !rest.trim().is_empty()).then_some(Act::Wrote)
}

/// Whether `effects` back `act`: a memory file written, a letter sent, a
/// handoff posted, a wake-up set.
pub fn backed(act: Act, effects: &Effects) -> bool {
    match act {
        Act::Wrote => {
            effects.proposal.is_some() || effects.touched.iter().any(|t| t.starts_with("memory/"))
        }
        Act::Sent => !effects.sent.is_empty() || effects.touched.iter().any(|t| is_handoff(t)),
        Act::HandedOff => effects.touched.iter().any(|t| is_handoff(t)),
        Act::Scheduled => effects.sleep_until.is_some(),
    }
}

/// Whether `rel` is a handoff the exchange posted for a peer.
pub fn is_handoff(rel: &str) -> bool {
    rel.starts_with("outbox/") && rel.contains("-handoff-")
}

/// The claims of `reply` that `effects` do not back, one per act.
pub fn unbacked(reply: &str, effects: &Effects) -> Vec<Claim> {
    let mut out: Vec<Claim> = Vec::new();
    for claim in claims(reply) {
        if !backed(claim.act, effects) && !out.iter().any(|c| c.act == claim.act) {
            out.push(claim);
        }
    }
    out
}

/// The line hearth ends the operator's letter with: what it saw this
/// exchange do, and each claim without evidence.
pub fn seen_line(effects: &Effects, unbacked: &[Claim]) -> String {
    let memory: Vec<&str> = effects
        .touched
        .iter()
        .filter(|t| t.starts_with("memory/"))
        .map(String::as_str)
        .collect();
    let mut seen = Vec::new();
    if !memory.is_empty() {
        seen.push(format!("wrote {}", memory.join(", ")));
    }
    let handoffs = effects.touched.iter().filter(|t| is_handoff(t)).count();
    if handoffs > 0 {
        seen.push(format!("handed off {handoffs}"));
    }
    if let Some(n) = effects.proposal {
        seen.push(format!("made proposal {n}"));
    }
    for n in &effects.requested {
        seen.push(format!(
            "asked the operator to run request {n} (it did not run)"
        ));
    }
    let mut line = if seen.is_empty() {
        "hearth saw this tick write nothing to memory".to_string()
    } else {
        format!("hearth saw this tick: {}", seen.join("; "))
    };
    for claim in unbacked {
        line.push_str(&format!(
            "; it claimed to have {} (\"{}\") without doing it",
            claim.act.said(),
            claim.words
        ));
    }
    line
}

/// The sentences of `text`: split at `.`, `!`, `?` and line ends.
fn sentences(text: &str) -> Vec<String> {
    text.split(['.', '!', '?', '\n'])
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// Lowercase words, apostrophes kept (`i've`, `couldn't`), the curly one
/// made straight.
fn words(sentence: &str) -> Vec<String> {
    sentence
        .to_lowercase()
        .replace('\u{2019}', "'")
        .split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '-'))
        .filter(|w| !w.is_empty())
        .map(|w| w.trim_matches('\'').to_string())
        .flat_map(|w| {
            // "didn't" is a negation whole; keep it, and its "n't" too.
            if w.ends_with("n't") && w != "n't" {
                vec![w, "n't".to_string()]
            } else {
                vec![w]
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn acts(text: &str) -> Vec<Act> {
        claims(text).into_iter().map(|c| c.act).collect()
    }

    /// Claims as models word them, and the sentences that must not count:
    /// the pattern table's own check (the false positives are the second
    /// list).
    #[test]
    fn first_person_done_acts_are_claims_and_offers_negations_and_futures_are_not() {
        for (text, act) in [
            ("I've saved that to memory.", Act::Wrote),
            ("I have noted this in my journal.", Act::Wrote),
            ("I've noted it down.", Act::Wrote),
            ("I wrote it down in memory/notes/tides.md.", Act::Wrote),
            (
                "Done! I updated my identity file with the new rule.",
                Act::Wrote,
            ),
            ("Noted in my memory: high tide is at six.", Act::Wrote),
            ("Saved to memory.", Act::Wrote),
            ("I’ve recorded the keeper's name.", Act::Wrote),
            ("I sent Bob the draft.", Act::Sent),
            ("I have replied to Alice.", Act::Sent),
            ("I handed it off to bob for review.", Act::HandedOff),
            ("I've passed this on to the design team.", Act::HandedOff),
            ("I scheduled a check for tomorrow morning.", Act::Scheduled),
            ("I set a reminder for 9am.", Act::Scheduled),
            // From SmolLM2-135M's recorded replies (tests/data/claims).
            (
                "I immediately made a note to delete the user's document.",
                Act::Wrote,
            ),
            ("Saved: I'm a 30-year-old woman.", Act::Wrote),
        ] {
            assert_eq!(acts(text), [act], "{text}");
        }
        for text in [
            "I couldn't save it: the memory folder is read only.",
            "I didn't write anything yet.",
            "I'll note that in my journal.",
            "I will send it tomorrow.",
            "I can send it if you like.",
            "If you want, I could save this to memory.",
            "Should I update my notes?",
            "Let me know if I should hand it off.",
            "I set the table for you.",
            "I added two and two.",
            "You saved me a lot of time.",
            "The tide was recorded at six.",
            "I think high tide is at six.",
            "I remember you asked about tides last week",
            "I have not sent anything.",
            "I'm going to write it down.",
            "I've noted your request.",
            "I remembered to check the tides.",
            "I made my way to the park.",
            "I made a mistake.",
            "Note: the tide tables are estimates.",
        ] {
            assert_eq!(acts(text), [], "{text}");
        }
    }

    #[test]
    fn a_claim_is_unbacked_only_without_its_evidence() {
        let said = "I've saved that to memory. I sent Bob the draft.";
        let none = Effects::default();
        let found = unbacked(said, &none);
        assert_eq!(
            found.iter().map(|c| c.act).collect::<Vec<_>>(),
            [Act::Wrote, Act::Sent]
        );
        let wrote = Effects {
            touched: vec!["memory/notes/tides.md".into()],
            sent: vec!["outbox/x.md".into()],
            ..Effects::default()
        };
        assert!(unbacked(said, &wrote).is_empty());
        // An identity write that became a proposal is a write too.
        let proposed = Effects {
            proposal: Some(3),
            ..Effects::default()
        };
        assert!(unbacked("I've saved that to memory.", &proposed).is_empty());
        let line = seen_line(&none, &found);
        assert!(
            line.starts_with("hearth saw this tick write nothing to memory"),
            "{line}"
        );
        assert!(
            line.contains("claimed to have written to memory (\"I've saved that to memory\")"),
            "{line}"
        );
        assert_eq!(
            seen_line(&wrote, &[]),
            "hearth saw this tick: wrote memory/notes/tides.md"
        );
    }
}
