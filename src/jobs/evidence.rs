//! Whether a run did what its `[expect]` says, judged from what hearth
//! observed — the paths its commit changed, the letters its `send` calls
//! posted, the proposal its writes became — and never from the model's
//! words. A pure function over those plain values.

use super::spec::Expect;

/// What the run's commit and calls show.
#[derive(Debug, Clone, Default)]
pub struct Observed {
    /// Paths the run's commit changed (added or modified), relative to
    /// the home.
    pub changed: Vec<String>,
    /// Outbox letters its `send` calls posted.
    pub sent: Vec<String>,
    /// The proposal its writes became.
    pub proposal: Option<u64>,
}

/// The verdict on a run that exited 0.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Judgment {
    /// Each expectation met, with what showed it.
    Done(Vec<String>),
    /// What was expected and not found (and what was found, if any).
    Unmet {
        /// Each expectation not met.
        missing: Vec<String>,
        /// What the run did show.
        found: Vec<String>,
    },
}

/// Judges `expect` against what was observed. Nothing expected: done,
/// with what the run wrote (memory, outbox) as the record.
pub fn judge(expect: &Expect, observed: &Observed) -> Judgment {
    let mut found = Vec::new();
    let mut missing = Vec::new();
    if let Some(wrote) = &expect.wrote {
        let under = |p: &&String| {
            p.as_str() == wrote.trim_end_matches('/')
                || p.starts_with(&format!("{}/", wrote.trim_end_matches('/')))
        };
        let written: Vec<&String> = observed.changed.iter().filter(under).collect();
        if written.is_empty() {
            missing.push(format!("a file written under {wrote}"));
        }
        found.extend(written.into_iter().map(|p| format!("wrote {p}")));
    }
    if expect.sent {
        // Posted by a call, and in the commit: both seen.
        let sent: Vec<&String> = observed
            .sent
            .iter()
            .filter(|s| observed.changed.contains(s))
            .collect();
        if sent.is_empty() {
            missing.push("a letter to the operator (send)".to_string());
        }
        found.extend(sent.into_iter().map(|p| format!("sent {p}")));
    }
    if expect.proposal {
        match observed.proposal {
            Some(n) => found.push(format!("proposal #{n}")),
            None => missing.push("a proposal".to_string()),
        }
    }
    if expect.is_empty() {
        // What the agent wrote, not hearth's own records of the tick.
        let written = observed
            .changed
            .iter()
            .filter(|p| p.starts_with("memory/") || p.starts_with("outbox/"));
        found.extend(written.map(|p| format!("changed {p}")));
    }
    if missing.is_empty() {
        Judgment::Done(found)
    } else {
        Judgment::Unmet { missing, found }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expect(wrote: Option<&str>, sent: bool, proposal: bool) -> Expect {
        Expect {
            wrote: wrote.map(str::to_string),
            sent,
            proposal,
        }
    }

    #[test]
    fn a_file_under_the_path_is_the_evidence_and_a_sibling_is_not() {
        let e = expect(Some("memory/digests/"), false, false);
        let wrote = Observed {
            changed: vec![
                "state/ticks.jsonl".into(),
                "memory/digests/2026-11-27.md".into(),
            ],
            ..Observed::default()
        };
        assert_eq!(
            judge(&e, &wrote),
            Judgment::Done(vec!["wrote memory/digests/2026-11-27.md".into()])
        );
        let sibling = Observed {
            changed: vec!["memory/digests-old.md".into(), "memory/journal/x.md".into()],
            ..Observed::default()
        };
        assert!(matches!(judge(&e, &sibling), Judgment::Unmet { .. }));
    }

    #[test]
    fn a_letter_counts_only_when_its_commit_has_it_and_each_expectation_is_named() {
        let e = expect(Some("memory/digests/"), true, true);
        let o = Observed {
            changed: vec!["memory/digests/a.md".into()],
            sent: vec!["outbox/x.md".into()],
            proposal: None,
        };
        assert_eq!(
            judge(&e, &o),
            Judgment::Unmet {
                missing: vec![
                    "a letter to the operator (send)".into(),
                    "a proposal".into()
                ],
                found: vec!["wrote memory/digests/a.md".into()],
            }
        );
    }

    #[test]
    fn nothing_expected_is_done_with_what_changed() {
        let o = Observed {
            changed: vec!["state/ticks.jsonl".into(), "memory/notes/x.md".into()],
            ..Observed::default()
        };
        assert_eq!(
            judge(&Expect::default(), &o),
            Judgment::Done(vec!["changed memory/notes/x.md".into()])
        );
    }
}
