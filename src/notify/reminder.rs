//! The proposal queue is loud: a proposal that has waited `[notify]
//! proposal_reminder_h` hours is named in a reminder, and again each such
//! period while any waits (once a day by default), with the command that
//! shows it. A queue nobody sees is how changes wait for weeks.

use chrono::{DateTime, Duration, Utc};

use super::{Notice, NoticeState, Severity};
use crate::mailbox::cause::Cause;

/// A proposal as the reminder names it.
#[derive(Debug, Clone, PartialEq)]
pub struct WaitingProposal {
    /// Its number.
    pub n: u64,
    /// Its one line.
    pub title: String,
    /// When it was made.
    pub created: DateTime<Utc>,
}

/// The incident key reminders are filed under.
pub const KEY: &str = "proposal: waiting for you";

/// A reminder, if one is due at `now`: some proposal has waited `every`,
/// and the last reminder (if any) is at least `every` old.
pub fn due(
    home_name: &str,
    waiting: &[WaitingProposal],
    last: Option<DateTime<Utc>>,
    every: Duration,
    now: DateTime<Utc>,
) -> Option<Notice> {
    if every <= Duration::zero() {
        return None;
    }
    let overdue = waiting.iter().any(|w| now - w.created >= every);
    let quiet_enough = last.is_none_or(|l| now - l >= every);
    if !overdue || !quiet_enough {
        return None;
    }
    let lines: Vec<String> = waiting
        .iter()
        .map(|w| {
            format!(
                "  {}  {} (waiting {} h): `hearth proposals show {}`",
                w.n,
                w.title,
                (now - w.created).num_hours(),
                w.n
            )
        })
        .collect();
    Some(Notice::new(
        home_name,
        &Cause::Proposal.to_string(),
        Severity::Info,
        format!(
            "{} proposal{} wait{} for you",
            waiting.len(),
            if waiting.len() == 1 { "" } else { "s" },
            if waiting.len() == 1 { "s" } else { "" }
        ),
        format!(
            "Changes to the agent's memory wait for your decision:\n\n{}\n\n`hearth proposals \
             accept N` or `reject N --reason …`; this reminder comes again while any waits.",
            lines.join("\n")
        ),
        KEY,
        NoticeState::Reminder,
        now,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reminder_once_a_period_while_a_proposal_has_waited_a_period() {
        let t0 = DateTime::from_timestamp(1_800_000_000, 0).unwrap();
        let day = Duration::hours(24);
        let waiting = vec![WaitingProposal {
            n: 3,
            title: "change memory/identity.md".into(),
            created: t0,
        }];
        assert!(due("h", &waiting, None, day, t0 + Duration::hours(23)).is_none());
        let first = due("h", &waiting, None, day, t0 + day).expect("due after a day");
        assert!(
            first.body.contains("hearth proposals show 3"),
            "{}",
            first.body
        );
        assert_eq!(first.title, "1 proposal waits for you");
        let later = t0 + day + Duration::hours(5);
        assert!(
            due("h", &waiting, Some(t0 + day), day, later).is_none(),
            "once a day"
        );
        assert!(due("h", &waiting, Some(t0 + day), day, t0 + day * 2).is_some());
        assert!(
            due("h", &[], None, day, t0 + day * 3).is_none(),
            "none waits"
        );
    }
}
