//! Outages speak (DESIGN 7): ticks that fail because the model API was
//! unreachable, rate-limited or overloaded are not the agent's fault, so
//! the healer does not count them; but an operator must hear of one that
//! lasts. After `[healer] outage_flare_min` one `outage` flare says since
//! when and the last error; when the API answers again, one line says so.
//! Decided here over plain values; the supervisor sends what is decided.

use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};

use crate::exchange::class::Class;
use crate::exchange::ledger::TickRecord;

/// An outage in progress, kept in `state/healer.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Outage {
    /// When the first tick of it started.
    pub since: DateTime<Utc>,
    /// The last error, as the tick recorded it.
    pub last_error: String,
    /// Ticks it has failed.
    pub ticks: u32,
    /// Whether the `outage` flare was sent.
    #[serde(default)]
    pub flared: bool,
}

/// What the supervisor should say after a tick.
#[derive(Debug, Clone, PartialEq)]
pub enum OutageNews {
    /// Nothing.
    Quiet,
    /// The outage has lasted `[healer] outage_flare_min`: flare it, once.
    Flare(Outage),
    /// The API answered again after this outage.
    Over(Outage),
}

/// Folds `record` into the outage in progress and says what to tell the
/// operator. Only a tick that reached the model ends an outage: a crash, a
/// skipped tick or one stopped by a signal says nothing about the API.
pub fn track(
    current: &mut Option<Outage>,
    record: &TickRecord,
    flare_after: Duration,
    now: DateTime<Utc>,
) -> OutageNews {
    if record.outage {
        let outage = current.get_or_insert_with(|| Outage {
            since: record.start,
            last_error: String::new(),
            ticks: 0,
            flared: false,
        });
        outage.ticks += 1;
        outage.last_error = record.note.clone().unwrap_or_default();
        if !outage.flared && now - outage.since >= flare_after {
            outage.flared = true;
            return OutageNews::Flare(outage.clone());
        }
        return OutageNews::Quiet;
    }
    let reached_the_model =
        !record.interrupted && !matches!(record.class, Class::Crash | Class::Skipped);
    match current.take() {
        Some(outage) if reached_the_model => OutageNews::Over(outage),
        other => {
            *current = other;
            OutageNews::Quiet
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(min: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_800_000_000 + min * 60, 0).unwrap()
    }

    fn tick(n: u64, min: i64, outage: bool, class: &str) -> TickRecord {
        let mut r: TickRecord = serde_json::from_value(serde_json::json!({
            "tick": n, "start": at(min), "end": at(min), "exit": 0, "class": class
        }))
        .unwrap();
        r.outage = outage;
        r.note = outage.then(|| format!("HTTP 529 at minute {min}"));
        r
    }

    #[test]
    fn forty_minutes_of_outage_make_one_flare_and_one_recovery() {
        let mut current = None;
        let mut events = Vec::new();
        for n in 0..9 {
            let record = tick(n + 1, n as i64 * 5, true, "model-limitation");
            events.push(track(
                &mut current,
                &record,
                Duration::minutes(30),
                at(n as i64 * 5),
            ));
        }
        let flares: Vec<_> = events
            .iter()
            .filter_map(|e| match e {
                OutageNews::Flare(o) => Some(o.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(flares.len(), 1, "{events:?}");
        assert_eq!(flares[0].since, at(0));
        assert_eq!(flares[0].last_error, "HTTP 529 at minute 30");

        // A crash says nothing about the API; an answered tick ends it.
        assert_eq!(
            track(
                &mut current,
                &tick(10, 45, false, "crash"),
                Duration::minutes(30),
                at(45)
            ),
            OutageNews::Quiet
        );
        match track(
            &mut current,
            &tick(11, 50, false, "ok"),
            Duration::minutes(30),
            at(50),
        ) {
            OutageNews::Over(o) => assert_eq!((o.since, o.ticks, o.flared), (at(0), 9, true)),
            other => panic!("{other:?}"),
        }
        assert_eq!(current, None);
    }

    #[test]
    fn a_short_outage_is_never_flared() {
        let mut current = None;
        let first = tick(1, 0, true, "model-limitation");
        assert_eq!(
            track(&mut current, &first, Duration::minutes(30), at(0)),
            OutageNews::Quiet
        );
        let over = track(
            &mut current,
            &tick(2, 5, false, "ok"),
            Duration::minutes(30),
            at(5),
        );
        assert!(matches!(
            over,
            OutageNews::Over(Outage { flared: false, .. })
        ));
    }
}
