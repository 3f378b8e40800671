//! `hearth day`: what the agent did since a moment, as a person would read
//! it after a day away — the messages it answered (by their subjects), the
//! files it wrote, what it sent, the asks, proposals, consolidations,
//! flares and spend, with a run of idle ticks folded into one line. Read
//! only, from the ledger, the session log, the outbox and the proposals'
//! book; the folding is a pure function over the ledger's records.

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::exchange::ledger::{Ledger, TickRecord};
use crate::exchange::Spent;
use crate::home::Home;

/// One line of the day.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DayLine {
    /// When it began.
    pub at: DateTime<Utc>,
    /// Who: `tick 12`, `ticks 13–104`, `ask`, `proposal 3`, `flare`.
    pub who: String,
    /// The (first) tick the line is about, for a link: never read back
    /// out of `who`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tick: Option<u64>,
    /// What, in words.
    pub what: String,
}

/// The day at a glance.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Day {
    /// From when.
    pub since: DateTime<Utc>,
    /// Ticks recorded since.
    pub ticks: usize,
    /// Of them, those that answered messages.
    pub answered: usize,
    /// Those that did nothing.
    pub idle: usize,
    /// Those that failed.
    pub failed: usize,
    /// Asks since.
    pub asks: usize,
    /// Dollars spent since, every door (what `spent` adds up).
    pub spend_usd: f64,
    /// Of it, door by door: as `hearth status` counts a day's.
    pub spent: Spent,
    /// In order.
    pub events: Vec<DayLine>,
    /// What could not be read, each naming its file: the day above is
    /// short of what it says.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub problems: Vec<String>,
}

/// The flares posted since `since`, each marked when it is unread.
fn flare_lines(home: &Home, since: DateTime<Utc>, now: DateTime<Utc>) -> Vec<DayLine> {
    let mut lines = Vec::new();
    for flare in crate::mailbox::flares::list(home) {
        let Ok(at) = DateTime::parse_from_rfc3339(&flare.created) else {
            continue;
        };
        let at = at.with_timezone(&Utc);
        if at >= since && at <= now {
            lines.push(DayLine {
                at,
                tick: None,
                who: "flare".into(),
                what: format!(
                    "{}: {}{}",
                    flare.flare,
                    flare.subject,
                    if flare.read { "" } else { " (unread)" }
                ),
            });
        }
    }
    lines
}

/// The jobs' outcomes since `since`: a line each, but for the runs their
/// checks skipped, which are one line per job (an hourly watch is 24 a day).
fn job_lines(
    home: &Home,
    since: DateTime<Utc>,
    now: DateTime<Utc>,
    problems: &mut Vec<String>,
) -> Vec<DayLine> {
    use crate::jobs::ledger::{JobLedger, JobOutcome};
    let ledger = JobLedger::read(&home.path(crate::jobs::ledger::FILE)).unwrap_or_else(|e| {
        problems.push(format!("{}: {e}", crate::jobs::ledger::FILE));
        Default::default()
    });
    let mut lines = Vec::new();
    let mut skipped: std::collections::BTreeMap<&str, (DateTime<Utc>, usize)> = Default::default();
    for run in &ledger.runs {
        let at = run.end.unwrap_or(run.start);
        if at < since || at > now || run.outcome == JobOutcome::Running {
            continue;
        }
        if run.outcome == JobOutcome::Skipped {
            skipped.entry(&run.job).or_insert((run.start, 0)).1 += 1;
            continue;
        }
        let mut said = run.evidence.clone();
        said.extend(run.missing.iter().map(|m| format!("missing {m}")));
        said.extend(run.cause.clone());
        lines.push(DayLine {
            at: run.start,
            tick: None,
            who: format!("job {}", run.job),
            what: match said.is_empty() {
                true => run.outcome.as_str().to_string(),
                false => format!("{}: {}", run.outcome.as_str(), said.join("; ")),
            },
        });
    }
    for (job, (at, n)) in skipped {
        lines.push(DayLine {
            at,
            tick: None,
            who: format!("job {job}"),
            what: format!("skipped {n} time(s): its check found nothing to do"),
        });
    }
    lines
}

/// The ticks since `since`, idle runs folded: each tick that did
/// something (or failed) is a line; consecutive idle ones are one.
/// `subject` names an answered message by its archived path. Ticks in a
/// row that say the same and read nothing — idle, skipped for the same
/// reason, failed with the same cause — fold into one line.
pub fn fold(records: &[TickRecord], subject: &dyn Fn(&str) -> String) -> Vec<DayLine> {
    let mut events: Vec<DayLine> = Vec::new();
    let mut run: Vec<&TickRecord> = Vec::new();
    let mut run_says = String::new();
    let flush = |run: &mut Vec<&TickRecord>, says: &str, events: &mut Vec<DayLine>| {
        if let (Some(first), Some(last)) = (run.first(), run.last()) {
            events.push(DayLine {
                at: first.start,
                tick: Some(first.tick),
                who: if run.len() == 1 {
                    format!("tick {}", first.tick)
                } else {
                    format!("ticks {}–{}", first.tick, last.tick)
                },
                what: if run.len() == 1 {
                    says.to_string()
                } else {
                    format!(
                        "{says} ({} ticks, until {})",
                        run.len(),
                        last.end.format("%H:%M")
                    )
                },
            });
        }
        run.clear();
    };
    for record in records {
        let mut what = says(record);
        if record.inbox.is_empty() && record.outside.is_empty() {
            if what != run_says {
                flush(&mut run, &run_says, &mut events);
                run_says = what;
            }
            run.push(record);
            continue;
        }
        flush(&mut run, &run_says, &mut events);
        if !record.inbox.is_empty() && !record.class.is_failure() {
            let subjects: Vec<String> = record
                .inbox
                .iter()
                .map(|a| format!("“{}”", subject(a)))
                .collect();
            what.push_str(&format!(" — {}", subjects.join(", ")));
        }
        if !record.outside.is_empty() {
            what.push_str(" (outside content)");
        }
        events.push(DayLine {
            at: record.start,
            tick: Some(record.tick),
            who: format!("tick {}", record.tick),
            what,
        });
    }
    flush(&mut run, &run_says, &mut events);
    events
}

/// What one tick did, or why it did not, in a few words.
fn says(record: &TickRecord) -> String {
    let why = || {
        let why = record.note.as_deref().unwrap_or("no cause recorded");
        why.chars().take(160).collect::<String>()
    };
    if record.class.is_failure() {
        return format!("failed ({}): {}", record.class.as_str(), why());
    }
    let did = record.what_it_did();
    if did.is_empty() {
        // Nothing done and no failure: skipped (the budget), say why.
        return format!("{}: {}", record.class.as_str(), why());
    }
    did
}

/// What happened in `home` from `since` to `now`.
pub fn day(home: &Home, since: DateTime<Utc>, now: DateTime<Utc>) -> Day {
    let mut problems = Vec::new();
    let records: Vec<TickRecord> = Ledger::since(&home.ticks_path(), since).unwrap_or_else(|e| {
        problems.push(format!(
            "{}: {e} — the ticks are left out",
            home.relative(&home.ticks_path())
        ));
        Vec::new()
    });
    let subject = |archived: &str| {
        std::fs::read_to_string(home.path(archived))
            .map(|text| crate::mailbox::inbox::subject_of(&text))
            .unwrap_or_else(|_| archived.to_string())
    };
    let mut events = fold(&records, &subject);
    let lines = super::status::sessions_since(home, since, &mut problems);
    let mut asks = 0;
    for line in lines
        .iter()
        .filter(|l| l.kind == "question" && l.time >= since)
    {
        asks += 1;
        let question: String = line
            .asked
            .lines()
            .next()
            .unwrap_or("")
            .chars()
            .take(80)
            .collect();
        events.push(DayLine {
            at: line.time,
            tick: None,
            who: "ask".into(),
            what: format!("“{question}”"),
        });
    }
    let proposals = crate::proposals::list(home).unwrap_or_else(|e| {
        problems.push(format!("{e} — the proposals are left out"));
        Vec::new()
    });
    for p in proposals {
        if p.created >= since {
            events.push(DayLine {
                at: p.created,
                tick: None,
                who: format!("proposal {}", p.n),
                what: format!("made by {}: {} ({})", p.by, p.title, p.status.as_str()),
            });
        }
        if let Some(decided) = p.decided.filter(|d| *d >= since) {
            events.push(DayLine {
                at: decided,
                tick: None,
                who: format!("proposal {}", p.n),
                what: format!("{}: {}", p.status.as_str(), p.title),
            });
        }
    }
    events.extend(flare_lines(home, since, now));
    events.extend(job_lines(home, since, now, &mut problems));
    events.sort_by_key(|e| e.at);
    let spent = Spent::since(records.iter().map(|r| r.cost_usd), &lines, home, since);
    Day {
        since,
        ticks: records.len(),
        answered: records
            .iter()
            .filter(|r| !r.inbox.is_empty() && !r.class.is_failure())
            .count(),
        idle: records.iter().filter(|r| r.what_it_did() == "idle").count(),
        failed: records.iter().filter(|r| r.class.is_failure()).count(),
        asks,
        spend_usd: spent.total(),
        spent,
        events,
        problems,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exchange::class::Class;

    fn tick(n: u64, class: Class, inbox: &[&str], wrote: &[&str]) -> TickRecord {
        let t = DateTime::from_timestamp(1_790_000_000 + n as i64 * 900, 0).unwrap();
        TickRecord {
            tick: n,
            start: t,
            end: t,
            exit: class.exit_code(),
            class,
            inbox: inbox.iter().map(|s| s.to_string()).collect(),
            wrote: wrote.iter().map(|s| s.to_string()).collect(),
            ..serde_json::from_value(serde_json::json!({
                "tick": n, "start": t, "end": t, "exit": 0, "class": "ok"
            }))
            .unwrap()
        }
    }

    #[test]
    fn failures_with_one_cause_and_skipped_ticks_fold_like_idle_ones() {
        let failed = |n: u64, note: &str| TickRecord {
            note: Some(note.into()),
            ..tick(n, Class::ModelLimitation, &[], &[])
        };
        let records = [
            failed(1, "HTTP 401: invalid x-api-key"),
            failed(2, "HTTP 401: invalid x-api-key"),
            failed(3, "HTTP 401: invalid x-api-key"),
            failed(4, "HTTP 529: overloaded"),
            TickRecord {
                note: Some("the daily budget is spent".into()),
                ..tick(5, Class::Skipped, &[], &[])
            },
            TickRecord {
                note: Some("the daily budget is spent".into()),
                ..tick(6, Class::Skipped, &[], &[])
            },
        ];
        let lines: Vec<String> = fold(&records, &|_| String::new())
            .iter()
            .map(|e| format!("{}: {}", e.who, e.what))
            .collect();
        assert_eq!(
            lines,
            [
                "ticks 1–3: failed (model-limitation): HTTP 401: invalid x-api-key (3 ticks, until 14:58)",
                "tick 4: failed (model-limitation): HTTP 529: overloaded",
                "ticks 5–6: skipped: the daily budget is spent (2 ticks, until 15:43)",
            ]
        );
    }

    #[test]
    fn idle_runs_fold_into_one_line_and_the_rest_say_what_they_did() {
        let records = [
            tick(1, Class::Ok, &[], &[]),
            tick(2, Class::Ok, &[], &[]),
            TickRecord {
                sent: vec!["outbox/20261124T090000Z-reply.md".into()],
                ..tick(
                    3,
                    Class::Ok,
                    &["state/inbox-archive/a.md"],
                    &["memory/notes/x.md"],
                )
            },
            tick(4, Class::Ok, &[], &[]),
            tick(5, Class::Ok, &[], &[]),
            tick(6, Class::Ok, &[], &[]),
            tick(7, Class::Crash, &[], &[]),
        ];
        let events = fold(&records, &|_| "Tide tables".into());
        let lines: Vec<String> = events
            .iter()
            .map(|e| format!("{}: {}", e.who, e.what))
            .collect();
        assert_eq!(
            lines,
            [
                "ticks 1–2: idle (2 ticks, until 14:43)",
                "tick 3: answered 1 message, wrote memory/notes/x.md — “Tide tables”",
                "ticks 4–6: idle (3 ticks, until 15:43)",
                "tick 7: failed (crash): no cause recorded",
            ]
        );
        let linked: Vec<Option<u64>> = events.iter().map(|e| e.tick).collect();
        assert_eq!(
            linked,
            [Some(1), Some(3), Some(4), Some(7)],
            "a run links its first tick"
        );
    }
}
