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

const KEPT: Moment = Moment::Settling {
    nothing_kept: false,
};
const NOTHING_KEPT: Moment = Moment::Settling { nothing_kept: true };

fn ended(class: Class, interrupted: bool, outage: bool) -> Moment {
    Moment::Ended {
        class,
        interrupted,
        outage,
    }
}

#[test]
fn the_rule_at_every_moment() {
    let outage = || failure(FailureKind::Model, true);
    let refused = || failure(FailureKind::Model, false);
    let too_long = || failure(FailureKind::Context, false);
    let rows: Vec<(&str, Moment, Option<TickReport>, Option<Why>)> = vec![
        (
            "settling: the model was never reached",
            NOTHING_KEPT,
            Some(report(vec![outage()], false, false)),
            Some(Why::NeverAnswered),
        ),
        (
            "settling: the conversation did not fit",
            NOTHING_KEPT,
            Some(report(vec![too_long()], false, false)),
            Some(Why::NeverAnswered),
        ),
        (
            "settling: the model answered and refused — an answer",
            NOTHING_KEPT,
            Some(report(vec![refused()], false, false)),
            None,
        ),
        (
            "settling: a turn was kept",
            KEPT,
            Some(report(vec![outage()], false, false)),
            None,
        ),
        (
            "settling: it wrote a file before the outage",
            NOTHING_KEPT,
            Some(report(vec![outage()], true, false)),
            None,
        ),
        (
            "settling: it sent a reply before the outage",
            NOTHING_KEPT,
            Some(report(vec![outage()], false, true)),
            None,
        ),
        (
            "settling: nothing failed",
            NOTHING_KEPT,
            Some(report(vec![], false, false)),
            None,
        ),
        ("settling: no report", NOTHING_KEPT, None, None),
        (
            "ended: a crash",
            ended(Class::Crash, false, false),
            None,
            Some(Why::Unfinished),
        ),
        (
            "ended: stopped by a signal",
            ended(Class::Ok, true, false),
            None,
            Some(Why::Unfinished),
        ),
        (
            "ended: the model went away midway",
            ended(Class::ModelLimitation, false, true),
            None,
            Some(Why::Unfinished),
        ),
        (
            "ended: a failure that answered",
            ended(Class::DispatchMiss, false, false),
            None,
            None,
        ),
        ("ended: ok", ended(Class::Ok, false, false), None, None),
        ("healed", Moment::Healed, None, Some(Why::Healed)),
    ];
    for (name, moment, report, expected) in rows {
        assert_eq!(rule(moment, report.as_ref()), expected, "{name}");
    }
}
