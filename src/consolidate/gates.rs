//! The gates a consolidation passes before it is offered: pure functions
//! over the files before and after, who wrote which line, and what the
//! model said of each removal.

use std::collections::{BTreeMap, BTreeSet};

/// What a consolidation exchange left, and what is known of the files.
#[derive(Debug, Clone)]
pub struct Case<'a> {
    /// Every identity-class file as `main` holds it (path → text).
    pub before: &'a BTreeMap<String, String>,
    /// The files the exchange changed (`None`: removed).
    pub after: &'a BTreeMap<String, Option<String>>,
    /// Per file, the lines the operator wrote (by blame).
    pub operator_lines: &'a BTreeMap<String, Vec<String>>,
    /// Per file, what the model said of what it removed there.
    pub notes: &'a BTreeMap<String, Vec<String>>,
    /// `[consolidation] max_removed_pct`.
    pub max_removed_pct: u32,
    /// The identity layer's characters after it, and the warning line.
    pub identity_chars_after: usize,
    /// `[boot]`'s warning threshold, in characters.
    pub warn_chars: usize,
}

/// The gates' decision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Judgement {
    /// The exchange changed nothing: recorded, not offered.
    NothingToChange,
    /// Not offered, for these reasons.
    Refused(Vec<String>),
    /// Offered as a proposal.
    Offer {
        /// Lines removed (moved ones included), of `total`.
        removed: usize,
        /// Non-blank lines of the identity-class files before.
        total: usize,
        /// Every removed line is somewhere after: it only adds or moves.
        additions_only: bool,
    },
}

fn lines(text: &str) -> impl Iterator<Item = &str> {
    text.lines()
        .map(str::trim_end)
        .filter(|l| !l.trim().is_empty())
}

/// The lines of `before` that `after` no longer holds (as many times as
/// they were dropped).
fn dropped<'a>(before: &'a str, after: &str) -> Vec<&'a str> {
    let mut left: BTreeMap<&str, usize> = BTreeMap::new();
    for l in lines(after) {
        *left.entry(l).or_default() += 1;
    }
    let mut out = Vec::new();
    for l in lines(before) {
        match left.get_mut(l) {
            Some(n) if *n > 0 => *n -= 1,
            _ => out.push(l),
        }
    }
    out
}

/// Decides whether the exchange's changes are offered.
pub fn judge(o: &Case<'_>) -> Judgement {
    let changed: Vec<(&String, &Option<String>)> = o
        .after
        .iter()
        .filter(|(path, text)| o.before.get(*path).map(String::as_str) != text.as_deref())
        .collect();
    if changed.is_empty() {
        return Judgement::NothingToChange;
    }
    let mut reasons = Vec::new();
    let mut removed_lines: Vec<(&str, &str)> = Vec::new();
    for (path, text) in &changed {
        let before = o.before.get(*path).map(String::as_str).unwrap_or("");
        let after = text.as_deref().unwrap_or("");
        let gone = dropped(before, after);
        for line in o.operator_lines.get(*path).into_iter().flatten() {
            if line.trim().is_empty() {
                continue;
            }
            if gone.contains(&line.trim_end()) {
                reasons.push(format!(
                    "{path}: the operator's line {:?} would be deleted or changed",
                    line.trim()
                ));
            }
        }
        if !gone.is_empty() && o.notes.get(*path).is_none_or(Vec::is_empty) {
            reasons.push(format!(
                "{path}: {} line(s) removed and no note says where they now live or why they may go",
                gone.len()
            ));
        }
        removed_lines.extend(gone.into_iter().map(|l| (path.as_str(), l)));
    }
    let total: usize = o.before.values().map(|t| lines(t).count()).sum();
    let removed = removed_lines.len();
    if total > 0 && removed * 100 > total * o.max_removed_pct as usize {
        reasons.push(format!(
            "{removed} of {total} lines removed, over [consolidation] max_removed_pct = {}",
            o.max_removed_pct
        ));
    }
    if o.identity_chars_after >= o.warn_chars {
        reasons.push(format!(
            "the identity layer would still be {} characters, at or over the warning line of {}",
            o.identity_chars_after, o.warn_chars
        ));
    }
    if !reasons.is_empty() {
        return Judgement::Refused(reasons);
    }
    // Everything after: the changed files as changed, the rest as before.
    let mut everywhere: BTreeSet<&str> = BTreeSet::new();
    for (path, text) in o.before {
        if !o.after.contains_key(path) {
            everywhere.extend(lines(text));
        }
    }
    for text in o.after.values().flatten() {
        everywhere.extend(lines(text));
    }
    let additions_only = removed_lines.iter().all(|(_, l)| everywhere.contains(l));
    Judgement::Offer {
        removed,
        total,
        additions_only,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(items: &[(&str, &str)]) -> BTreeMap<String, String> {
        items
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn judge_with(
        before: &BTreeMap<String, String>,
        after: &[(&str, Option<&str>)],
        operator: &[(&str, &[&str])],
        notes: &[(&str, &str)],
    ) -> Judgement {
        judge_max(before, after, operator, notes, 80)
    }

    fn judge_max(
        before: &BTreeMap<String, String>,
        after: &[(&str, Option<&str>)],
        operator: &[(&str, &[&str])],
        notes: &[(&str, &str)],
        max_removed_pct: u32,
    ) -> Judgement {
        let after: BTreeMap<String, Option<String>> = after
            .iter()
            .map(|(k, v)| (k.to_string(), v.map(str::to_string)))
            .collect();
        let operator_lines = operator
            .iter()
            .map(|(k, v)| (k.to_string(), v.iter().map(|s| s.to_string()).collect()))
            .collect();
        let notes = notes
            .iter()
            .map(|(k, v)| (k.to_string(), vec![v.to_string()]))
            .collect();
        judge(&Case {
            before,
            after: &after,
            operator_lines: &operator_lines,
            notes: &notes,
            max_removed_pct,
            identity_chars_after: 100,
            warn_chars: 1000,
        })
    }

    const ID: &str = "# Me\nI keep the log.\nI keep the log daily.\nI like tea.\n";

    #[test]
    fn no_change_is_nothing_to_change() {
        let before = map(&[("memory/identity.md", ID)]);
        assert_eq!(
            judge_with(&before, &[], &[], &[]),
            Judgement::NothingToChange
        );
        assert_eq!(
            judge_with(&before, &[("memory/identity.md", Some(ID))], &[], &[]),
            Judgement::NothingToChange
        );
    }

    #[test]
    fn deleting_or_changing_an_operators_line_is_refused() {
        let before = map(&[("memory/identity.md", ID)]);
        let Judgement::Refused(why) = judge_with(
            &before,
            &[(
                "memory/identity.md",
                Some("# Me\nI keep the log daily.\nI like tea.\n"),
            )],
            &[("memory/identity.md", &["I keep the log."])],
            &[("memory/identity.md", "merged into the daily line")],
        ) else {
            panic!("refused");
        };
        assert!(
            why[0].contains("the operator's line \"I keep the log.\""),
            "{why:?}"
        );
    }

    #[test]
    fn a_merge_with_notes_is_offered_and_an_unexplained_removal_is_not() {
        let before = map(&[
            ("memory/core/a.md", "# A\nTea at four.\n"),
            ("memory/core/b.md", "# B\nTea at four, always.\n"),
        ]);
        let merged = [
            ("memory/core/a.md", Some("# A\nTea at four, always.\n")),
            ("memory/core/b.md", None),
        ];
        let offered = judge_with(
            &before,
            &merged,
            &[],
            &[
                ("memory/core/a.md", "merged with b"),
                ("memory/core/b.md", "now in a.md"),
            ],
        );
        assert!(
            matches!(
                offered,
                Judgement::Offer {
                    removed: 3,
                    total: 4,
                    additions_only: false
                }
            ),
            "{offered:?}"
        );
        let Judgement::Refused(why) =
            judge_with(&before, &merged, &[], &[("memory/core/a.md", "x")])
        else {
            panic!("refused");
        };
        assert!(
            why.iter()
                .any(|w| w.starts_with("memory/core/b.md") && w.contains("no note")),
            "{why:?}"
        );
    }

    #[test]
    fn moving_text_is_additions_only_and_too_much_removal_or_size_is_refused() {
        let before = map(&[("memory/identity.md", ID), ("memory/notes/x.md", "# X\n")]);
        let moved = judge_with(
            &before,
            &[
                (
                    "memory/identity.md",
                    Some("# Me\nI keep the log.\nI keep the log daily.\n"),
                ),
                ("memory/notes/x.md", Some("# X\nI like tea.\n")),
            ],
            &[],
            &[("memory/identity.md", "moved to notes/x.md")],
        );
        assert!(
            matches!(
                moved,
                Judgement::Offer {
                    additions_only: true,
                    ..
                }
            ),
            "{moved:?}"
        );
        let gutted = judge_max(
            &before,
            &[("memory/identity.md", Some("# Me\n"))],
            &[],
            &[("memory/identity.md", "gone")],
            50,
        );
        assert!(
            matches!(gutted, Judgement::Refused(ref why) if why[0].contains("max_removed_pct")),
            "{gutted:?}"
        );
    }
}
