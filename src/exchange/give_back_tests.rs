use super::*;
use crate::exchange::class::Failure;

fn failure(kind: FailureKind, outage: bool) -> Failure {
    Failure {
        kind,
        detail: "a test".into(),
        outage,
        fix: None,
    }
}

fn report(failures: Vec<Failure>, touched: bool, sent: bool) -> TickReport {
    let started = chrono::DateTime::parse_from_rfc3339("2026-11-24T09:00:00Z")
        .unwrap()
        .into();
    let mut report = TickReport::new(7, started);
    report.outcome.failures = failures;
    report.consumed = vec![("inbox/a.md".into(), "state/inbox-archive/a.md".into())];
    if touched {
        report
            .outcome
            .effects
            .touched
            .push("memory/notes.md".into());
    }
    if sent {
        report.outcome.effects.sent.push("outbox/reply.md".into());
    }
    report
}

fn ended(class: Class, interrupted: bool, outage: bool) -> Option<Reason> {
    rule(Moment::Ended {
        class,
        interrupted,
        outage,
    })
}

fn settling(report: &TickReport, nothing_kept: bool) -> Option<Reason> {
    rule(Moment::Settling {
        report,
        nothing_kept,
    })
}

#[test]
fn the_rule_at_every_moment() {
    let outage = || failure(FailureKind::Model, true);
    let refused = || failure(FailureKind::Model, false);
    let too_long = || failure(FailureKind::Context, false);
    let never = Some(Reason::NeverAnswered);
    let rows: Vec<(&str, Option<Reason>, Option<Reason>)> = vec![
        (
            "settling: the model was never reached",
            settling(&report(vec![outage()], false, false), true),
            never,
        ),
        (
            "settling: the conversation did not fit",
            settling(&report(vec![too_long()], false, false), true),
            never,
        ),
        (
            "settling: the model answered and refused — an answer",
            settling(&report(vec![refused()], false, false), true),
            None,
        ),
        (
            "settling: a turn was kept",
            settling(&report(vec![outage()], false, false), false),
            None,
        ),
        (
            "settling: it wrote a file before the outage",
            settling(&report(vec![outage()], true, false), true),
            None,
        ),
        (
            "settling: it sent a reply before the outage",
            settling(&report(vec![outage()], false, true), true),
            None,
        ),
        (
            "settling: nothing failed",
            settling(&report(vec![], false, false), true),
            None,
        ),
        (
            "ended: a crash",
            ended(Class::Crash, false, false),
            Some(Reason::Unfinished),
        ),
        (
            "ended: stopped by a signal",
            ended(Class::Ok, true, false),
            Some(Reason::Unfinished),
        ),
        (
            "ended: the model went away midway",
            ended(Class::ModelLimitation, false, true),
            Some(Reason::Unfinished),
        ),
        (
            "ended: a failure that answered",
            ended(Class::DispatchMiss, false, false),
            None,
        ),
        ("ended: ok", ended(Class::Ok, false, false), None),
        (
            "healed: still archived",
            rule(Moment::Healed { archived: true }),
            Some(Reason::Healed),
        ),
        (
            "healed: given back or moved already",
            rule(Moment::Healed { archived: false }),
            None,
        ),
        (
            "panic: still archived",
            rule(Moment::Panicked { archived: true }),
            Some(Reason::Panicked),
        ),
        (
            "panic: gone from the archive",
            rule(Moment::Panicked { archived: false }),
            None,
        ),
    ];
    for (name, decided, expected) in rows {
        assert_eq!(decided, expected, "{name}");
    }
}
