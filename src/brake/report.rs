//! `hearth brake report`: what the brake did, by file and by day, and the
//! one-line verdict an operator needs before switching `warn` to `enforce`.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::log::BrakeLine;
use super::{ALWAYS_ALLOWED, WRITING};

/// Counts of one file or day.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    /// Writing calls let through after the reads.
    pub allowed: usize,
    /// Calls refused (`enforce`).
    pub denied: usize,
    /// Calls `enforce` would have refused (`warn`).
    pub would_deny: usize,
    /// Calls let through by the operator's override.
    pub overridden: usize,
}

/// The report.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Report {
    /// Since when it counts.
    pub since: Option<DateTime<Utc>>,
    /// All decisions.
    pub total: Counts,
    /// By file waited for.
    pub by_file: BTreeMap<String, Counts>,
    /// By UTC day.
    pub by_day: BTreeMap<String, Counts>,
    /// Ticks with at least one denial or would-denial.
    pub ticks_refused: usize,
    /// Refusals that fell on a tool the brake must always allow: must be 0.
    pub refused_allowed_tools: usize,
    /// Overrides the operator granted.
    pub overrides_granted: usize,
    /// The one line for the operator.
    pub verdict: String,
}

/// Builds the report from the log's lines at or after `since`; `missing`
/// are the required files that do not exist now (no read can satisfy the
/// brake for them: enforcing would refuse every write).
pub fn report(lines: &[BrakeLine], since: Option<DateTime<Utc>>, missing: &[String]) -> Report {
    let mut r = Report {
        since,
        ..Report::default()
    };
    let mut ticks = BTreeSet::new();
    for line in lines.iter().filter(|l| since.is_none_or(|s| l.time >= s)) {
        if line.decision == "override-granted" {
            r.overrides_granted += 1;
            continue;
        }
        let bump = |c: &mut Counts| match line.decision.as_str() {
            "allow" => c.allowed += 1,
            "deny" => c.denied += 1,
            "would-deny" => c.would_deny += 1,
            "override" => c.overridden += 1,
            _ => {}
        };
        bump(&mut r.total);
        bump(
            r.by_day
                .entry(line.time.format("%Y-%m-%d").to_string())
                .or_default(),
        );
        for w in &line.waiting {
            bump(r.by_file.entry(w.path.clone()).or_default());
        }
        if matches!(line.decision.as_str(), "deny" | "would-deny") {
            if let Some(t) = line.tick {
                ticks.insert(t);
            }
            let tool = line.tool.as_str();
            if ALWAYS_ALLOWED.contains(&tool) || !(WRITING.contains(&tool) || tool.contains(':')) {
                // Only writing built-ins and writing operator tools
                // (logged as `tool:NAME`) may ever be refused.
                r.refused_allowed_tools += 1;
            }
        }
    }
    r.ticks_refused = ticks.len();
    r.verdict = if !missing.is_empty() {
        format!(
            "do not enforce: {} {} required and missing, so no read can satisfy the brake and \
             every write would be refused; create {} or take {} out of [brake] must_read (or \
             `must_read: true`)",
            missing.join(", "),
            if missing.len() == 1 { "is" } else { "are" },
            if missing.len() == 1 { "it" } else { "them" },
            if missing.len() == 1 { "it" } else { "them" },
        )
    } else if r.refused_allowed_tools > 0 {
        format!(
            "do not enforce: {} refusal(s) fell on tools the brake must allow — a bug to report",
            r.refused_allowed_tools
        )
    } else if r.total.would_deny + r.total.denied + r.total.allowed == 0 {
        "nothing to judge yet: no writing call is on the log".to_string()
    } else if r.total.would_deny + r.total.denied == 0 {
        format!(
            "safe to enforce: {} writing call(s), none before the required reads",
            r.total.allowed
        )
    } else {
        format!(
            "enforcing would have refused {} call(s) in {} tick(s), and the agent would have had \
             to read first ({}); no refusal fell on a tool the brake must allow",
            r.total.would_deny + r.total.denied,
            r.ticks_refused,
            r.by_file
                .iter()
                .filter(|(_, c)| c.would_deny + c.denied > 0)
                .map(|(f, _)| f.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    r
}

#[cfg(test)]
mod tests {
    use super::super::Waiting;
    use super::*;

    fn line(tick: u64, tool: &str, decision: &str) -> BrakeLine {
        BrakeLine {
            v: 1,
            time: DateTime::from_timestamp(1_800_000_000 + tick as i64 * 900, 0).unwrap(),
            tick: Some(tick),
            tool: tool.into(),
            target: "memory/a.md".into(),
            decision: decision.into(),
            waiting: vec![Waiting {
                path: "memory/rules.md".into(),
                missing: false,
            }],
            reason: None,
        }
    }

    #[test]
    fn the_verdict_counts_ticks_and_files_and_never_blames_allowed_tools() {
        let lines = vec![
            line(1, "write", "would-deny"),
            line(1, "append", "would-deny"),
            line(2, "write", "allow"),
            line(3, "tool:weather-log", "would-deny"),
        ];
        let r = report(&lines, None, &[]);
        assert_eq!(r.total.would_deny, 3);
        assert_eq!(r.ticks_refused, 2);
        assert_eq!(r.refused_allowed_tools, 0);
        assert_eq!(r.by_file["memory/rules.md"].would_deny, 3);
        assert!(
            r.verdict.contains("3 call(s) in 2 tick(s)"),
            "{}",
            r.verdict
        );

        let bad = report(&[line(4, "read", "deny")], None, &[]);
        assert!(bad.verdict.starts_with("do not enforce"));
    }

    #[test]
    fn a_required_file_that_does_not_exist_is_never_safe_to_enforce() {
        // Every write so far came after the reads; but the file is gone
        // now, and no read can satisfy the brake for it.
        let lines = vec![line(1, "write", "allow")];
        let r = report(&lines, None, &["memory/rules.md".to_string()]);
        assert!(r.verdict.starts_with("do not enforce"), "{}", r.verdict);
        assert!(r
            .verdict
            .contains("memory/rules.md is required and missing"));
        assert!(report(&lines, None, &[])
            .verdict
            .starts_with("safe to enforce"));
        assert!(report(&[], None, &[])
            .verdict
            .starts_with("nothing to judge yet"));
    }
}
