//! The healer's rules as a table (issue 29): streak, outage, interrupted,
//! disk full, forgiveness, window, panic. Each row is a run of ticks fed
//! to [`observe`] from a given state, and what must come of it.

use chrono::{DateTime, Duration, Utc};

use super::{observe, Verdict};
use crate::config::HealerConfig;
use crate::exchange::class::Class;
use crate::exchange::ledger::TickRecord;
use crate::healer::state::HealerState;

fn at(hours: i64) -> DateTime<Utc> {
    DateTime::from_timestamp(1_800_000_000, 0).unwrap() + Duration::hours(hours)
}

/// How a tick ended, as the ledger says.
#[derive(Clone, Copy)]
enum T {
    Ok,
    Crash,
    Limit,
    Outage,
    Interrupted,
    DiskFull,
}

fn record(n: u64, t: T) -> TickRecord {
    let mut r: TickRecord = serde_json::from_str(
        r#"{"tick":1,"start":"2026-01-01T00:00:00Z","end":"2026-01-01T00:00:00Z","exit":0,"class":"ok"}"#,
    )
    .unwrap();
    r.tick = n;
    r.inbox = vec![format!("state/inbox-archive/{n}.md")];
    r.class = match t {
        T::Ok => Class::Ok,
        T::Limit => Class::ModelLimitation,
        _ => Class::Crash,
    };
    r.outage = matches!(t, T::Outage);
    r.interrupted = matches!(t, T::Interrupted);
    r.disk_full = matches!(t, T::DiskFull);
    r
}

struct Row {
    rule: &'static str,
    /// Heals already made, hours before the run (at hour 0).
    heals_ago_h: &'static [i64],
    ticks: &'static [T],
    /// The verdict on the last tick.
    last: Verdict,
    streak: usize,
    heals_left: usize,
    outages: u32,
}

/// `[healer] streak = 3, max_heals = 2, window_h = 24`.
const ROWS: &[Row] = &[
    Row {
        rule: "a streak of failures short of the limit waits",
        heals_ago_h: &[],
        ticks: &[T::Crash, T::Limit],
        last: Verdict::Fine,
        streak: 2,
        heals_left: 0,
        outages: 0,
    },
    Row {
        rule: "the streak-th failure in a row heals",
        heals_ago_h: &[],
        ticks: &[T::Crash, T::Limit, T::Crash],
        last: Verdict::Heal,
        streak: 3,
        heals_left: 0,
        outages: 0,
    },
    Row {
        rule: "a success between failures starts the streak again",
        heals_ago_h: &[],
        ticks: &[T::Crash, T::Crash, T::Ok, T::Crash, T::Crash],
        last: Verdict::Fine,
        streak: 2,
        heals_left: 0,
        outages: 0,
    },
    Row {
        rule: "an outage is neither counted nor a reset: the API's fault",
        heals_ago_h: &[],
        ticks: &[T::Crash, T::Crash, T::Outage, T::Outage],
        last: Verdict::Fine,
        streak: 2,
        heals_left: 0,
        outages: 2,
    },
    Row {
        rule: "a counted tick after an outage ends the outage count",
        heals_ago_h: &[],
        ticks: &[T::Outage, T::Outage, T::Crash],
        last: Verdict::Fine,
        streak: 1,
        heals_left: 0,
        outages: 0,
    },
    Row {
        rule: "a tick cut short by a stop says nothing about the agent",
        heals_ago_h: &[],
        ticks: &[T::Crash, T::Crash, T::Interrupted, T::Interrupted],
        last: Verdict::Fine,
        streak: 2,
        heals_left: 0,
        outages: 0,
    },
    Row {
        rule: "nor does a tick that failed for want of room on the disk",
        heals_ago_h: &[],
        ticks: &[T::Crash, T::DiskFull, T::Crash, T::DiskFull],
        last: Verdict::Fine,
        streak: 2,
        heals_left: 0,
        outages: 0,
    },
    Row {
        rule: "max_heals heals within the window, and a streak again: panic",
        heals_ago_h: &[-5, -2],
        ticks: &[T::Crash, T::Crash, T::Crash],
        last: Verdict::Panic,
        streak: 3,
        heals_left: 2,
        outages: 0,
    },
    Row {
        rule: "heals older than the window do not count toward the panic",
        heals_ago_h: &[-30, -2],
        ticks: &[T::Crash, T::Crash, T::Crash],
        last: Verdict::Heal,
        streak: 3,
        heals_left: 2,
        outages: 0,
    },
    Row {
        rule: "sustained success (twice the streak) forgives past heals",
        heals_ago_h: &[-5, -2],
        ticks: &[T::Ok, T::Ok, T::Ok, T::Ok, T::Ok, T::Ok],
        last: Verdict::Fine,
        streak: 0,
        heals_left: 0,
        outages: 0,
    },
    Row {
        rule: "success short of that forgives nothing: the next streak panics",
        heals_ago_h: &[-5, -2],
        ticks: &[
            T::Ok,
            T::Ok,
            T::Ok,
            T::Ok,
            T::Ok,
            T::Crash,
            T::Crash,
            T::Crash,
        ],
        last: Verdict::Panic,
        streak: 3,
        heals_left: 2,
        outages: 0,
    },
    Row {
        rule: "forgiven, the next streak heals again",
        heals_ago_h: &[-5, -2],
        ticks: &[
            T::Ok,
            T::Ok,
            T::Ok,
            T::Ok,
            T::Ok,
            T::Ok,
            T::Crash,
            T::Crash,
            T::Crash,
        ],
        last: Verdict::Heal,
        streak: 3,
        heals_left: 0,
        outages: 0,
    },
];

#[test]
fn the_healers_rules() {
    let config = HealerConfig {
        streak: 3,
        max_heals: 2,
        window_h: 24,
        ..HealerConfig::default()
    };
    for row in ROWS {
        let mut state = HealerState {
            heals: row.heals_ago_h.iter().map(|h| at(*h)).collect(),
            ..HealerState::default()
        };
        let mut last = None;
        for (i, t) in row.ticks.iter().enumerate() {
            last = Some(observe(
                &mut state,
                &record(i as u64 + 1, *t),
                &config,
                at(0),
            ));
        }
        assert_eq!(last, Some(row.last), "{}: the verdict", row.rule);
        assert_eq!(state.streak.len(), row.streak, "{}: the streak", row.rule);
        assert_eq!(
            state.heals.len(),
            row.heals_left,
            "{}: heals kept",
            row.rule
        );
        assert_eq!(state.outages, row.outages, "{}: outages", row.rule);
        assert_eq!(
            state.last_tick,
            Some(row.ticks.len() as u64),
            "{}: every tick is seen",
            row.rule
        );
    }
}

#[test]
fn the_streak_keeps_what_each_failed_tick_read_for_the_heal_to_give_back() {
    let config = HealerConfig {
        streak: 2,
        ..HealerConfig::default()
    };
    let mut state = HealerState::default();
    observe(&mut state, &record(1, T::Crash), &config, at(0));
    let verdict = observe(&mut state, &record(2, T::Limit), &config, at(0));
    assert_eq!(verdict, Verdict::Heal);
    let read: Vec<&str> = state
        .streak
        .iter()
        .flat_map(|f| f.inbox.iter().map(String::as_str))
        .collect();
    assert_eq!(
        read,
        ["state/inbox-archive/1.md", "state/inbox-archive/2.md"]
    );
    assert_eq!(state.streak[1].class, Class::ModelLimitation);
}
