//! Quiet failures: ticks that exit 0 yet do nothing useful. A tick is
//! *quiet* when the operator was waiting (inbox messages were given to it)
//! and it either repeated its previous reply word for word (after
//! normalising case, digits and spacing) or changed nothing at all. Idle
//! ticks with an empty inbox are never quiet: saying "nothing to do" again
//! is the right answer then.

use crate::stamp::fnv1a;
use crate::tick::ledger::TickRecord;
use crate::tick::report::TickReport;

/// The fingerprint of `reply`, and why the tick is quiet, if it is.
pub fn assess(previous: Option<&TickRecord>, report: &TickReport) -> (Option<u64>, Option<String>) {
    let normal = normalise(&report.reply);
    let fingerprint = (!normal.is_empty()).then(|| fnv1a(normal.as_bytes()));
    if report.inbox_waiting == 0 || !report.failures.is_empty() {
        return (fingerprint, None);
    }
    let changed_nothing = report.effects.touched.is_empty() && report.effects.sent.is_empty();
    let repeated =
        fingerprint.is_some() && previous.and_then(|p| p.reply_fingerprint) == fingerprint;
    let reason = if repeated {
        Some("repeated the previous reply while the inbox waited".to_string())
    } else if changed_nothing {
        Some(format!(
            "changed nothing while {} inbox message(s) waited",
            report.inbox_waiting
        ))
    } else {
        None
    };
    (fingerprint, reason)
}

fn normalise(text: &str) -> String {
    text.to_lowercase()
        .chars()
        .filter(|c| !c.is_ascii_digit())
        .collect::<String>()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::DateTime;

    fn report(reply: &str, inbox: usize, sent: bool) -> TickReport {
        let mut r = TickReport::new(2, DateTime::from_timestamp(0, 0).unwrap());
        r.reply = reply.into();
        r.inbox_waiting = inbox;
        if sent {
            r.effects.sent.push("outbox/x.md".into());
        }
        r
    }

    #[test]
    fn a_repeated_reply_while_the_inbox_waits_is_quiet() {
        let first = report("I will look into it (tick 4).", 1, true);
        let (fp, quiet) = assess(None, &first);
        assert_eq!(quiet, None);
        let record = TickRecord {
            reply_fingerprint: fp,
            ..serde_json::from_str(r#"{"tick":4,"start":"2026-01-01T00:00:00Z","end":"2026-01-01T00:00:00Z","exit":0,"class":"ok"}"#).unwrap()
        };
        let again = report("I will  look into it (tick 5).", 1, true);
        let (_, quiet) = assess(Some(&record), &again);
        assert!(quiet.unwrap().contains("repeated"));
    }

    #[test]
    fn doing_nothing_while_the_inbox_waits_is_quiet_but_idling_is_not() {
        let (_, quiet) = assess(None, &report("hmm", 2, false));
        assert!(quiet.unwrap().contains("changed nothing while 2"));
        let (_, quiet) = assess(None, &report("nothing to do", 0, false));
        assert_eq!(quiet, None);
    }
}
