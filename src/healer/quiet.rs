//! Quiet failures: ticks that exit 0 yet do not do their job (DESIGN 7). A
//! tick is *quiet* when it exits 0 and either
//! - inbox messages were waiting and nothing addressed them: no `send`, no
//!   memory change, no reply text at all; or
//! - it did exactly what the last tick with inbox messages did (idle ticks
//!   between them do not count): the same tool calls with the same
//!   arguments and the same reply (after normalising case, digits and
//!   spacing), while the inbox waited.
//!
//! - it tried to hand a peer the same message as an earlier round of the
//!   collaboration (DESIGN 14): two agents handing off without progress.
//!
//! Four different `send` replies that each end "Done." are four answers,
//! not a loop: what a tick *did* is its actions and its words together.
//! Idle ticks with an empty inbox are never quiet: saying "nothing to do"
//! again is the right answer then.

use crate::exchange::report::TickReport;
use crate::stamp::fnv1a;

/// The fingerprint of what the tick did, and why it is quiet, if it is.
pub fn assess(last_answer: Option<u64>, report: &TickReport) -> (Option<u64>, Option<String>) {
    let reply = normalise(&report.outcome.reply);
    let mut did = reply.clone();
    for action in &report.outcome.actions {
        did.push('\n');
        did.push_str(action);
    }
    let fingerprint = (!did.is_empty()).then(|| fnv1a(did.as_bytes()));
    if !report.outcome.failures.is_empty() {
        return (fingerprint, None);
    }
    if let Some(handoff_loop) = report.outcome.effects.loops.first() {
        return (fingerprint, Some(handoff_loop.clone()));
    }
    // "Said it did it, and did nothing": a claim its tools do not back.
    let unbacked =
        crate::exchange::claims::unbacked(&report.outcome.reply, &report.outcome.effects);
    if let Some(claim) = unbacked.first() {
        return (
            fingerprint,
            Some(format!(
                "claimed to have {} (\"{}\") without doing it",
                claim.act.said(),
                claim.words
            )),
        );
    }
    if report.inbox_waiting == 0 {
        return (fingerprint, None);
    }
    let addressed = !report.outcome.effects.touched.is_empty()
        || !report.outcome.effects.sent.is_empty()
        || !reply.is_empty();
    let repeated = fingerprint.is_some() && last_answer == fingerprint;
    let reason = if repeated {
        Some("did exactly what the last tick with inbox messages did (same calls, same reply) while the inbox waited".to_string())
    } else if !addressed {
        Some(format!(
            "neither replied nor acted while {} inbox message(s) waited",
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

    fn report(reply: &str, inbox: usize, send: Option<&str>) -> TickReport {
        let mut r = TickReport::new(2, DateTime::from_timestamp(0, 0).unwrap());
        r.outcome.reply = reply.into();
        r.inbox_waiting = inbox;
        if let Some(body) = send {
            r.outcome.effects.sent.push("outbox/x.md".into());
            r.outcome
                .actions
                .push(format!("send {{\"body\":\"{body}\"}}"));
        }
        r
    }

    #[test]
    fn the_same_calls_and_reply_again_while_the_inbox_waits_is_quiet() {
        let (fp, quiet) = assess(None, &report("Done.", 1, Some("I looked into it")));
        assert_eq!(quiet, None);
        let (_, quiet) = assess(fp, &report("Done.", 1, Some("I looked into it")));
        assert!(quiet.unwrap().contains("same calls"));
    }

    #[test]
    fn different_answers_that_end_alike_are_not_quiet() {
        let (fp, _) = assess(None, &report("Done.", 1, Some("The capital is Paris.")));
        let (_, quiet) = assess(fp, &report("Done.", 1, Some("It rained 3 mm.")));
        assert_eq!(quiet, None);
    }

    #[test]
    fn saying_and_doing_nothing_while_the_inbox_waits_is_quiet_but_idling_is_not() {
        let (_, quiet) = assess(None, &report("", 2, None));
        assert!(quiet.unwrap().contains("while 2"));
        let (_, quiet) = assess(None, &report("I will think about it.", 2, None));
        assert_eq!(quiet, None, "a reply addresses the message");
        let (_, quiet) = assess(None, &report("", 0, None));
        assert_eq!(quiet, None);
    }

    #[test]
    fn a_handoff_refused_as_a_repeat_is_quiet_even_with_a_reply() {
        let mut r = report("I handed it back.", 1, None);
        r.outcome
            .effects
            .loops
            .push("handed bob the same message as round 1 of x again".into());
        let (_, quiet) = assess(None, &r);
        assert!(quiet.unwrap().contains("round 1 of x"));
    }
}
