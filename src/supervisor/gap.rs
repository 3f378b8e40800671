//! Gaps: time when the agent should have ticked and did not. A supervisor
//! that was stopped, a machine that was off or asleep, a loop that hung:
//! the operator should hear of it, with how long and why when hearth knows.

use crate::mailbox::cause::Cause;
use chrono::{DateTime, Duration, SecondsFormat, Utc};
use serde::{Deserialize, Serialize};

use crate::home::Home;
use crate::json_file::{self, JsonFile};
use crate::mailbox::outbox::Letter;

/// How the last supervisor ended, for the next one to explain a gap.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LastStop {
    pub at: DateTime<Utc>,
    pub reason: String,
    /// The operator stopped it (a signal: SIGTERM, `systemctl stop`,
    /// Ctrl-C; or `--ticks N` done): the time it then stood still is the
    /// operator's choice, never a gap.
    #[serde(default)]
    pub by_operator: bool,
}

fn last_stop_path(home: &Home) -> std::path::PathBuf {
    home.last_stop_path()
}

impl JsonFile for LastStop {
    const VERSION: u32 = 1;
}

/// Says why this supervisor stops; a failure costs only the next gap
/// flare its reason, so it is logged.
pub fn record_stop(home: &Home, stop: &LastStop) {
    if let Err(e) = json_file::save(&last_stop_path(home), stop) {
        tracing::warn!("{e}");
    }
}

/// Why the last supervisor stopped, if it said; a broken file is logged.
pub fn last_stop(home: &Home) -> Option<LastStop> {
    json_file::load(&last_stop_path(home)).unwrap_or_else(|e| {
        tracing::warn!("{e}");
        None
    })
}

/// A gap is a tick later than its due time by more than one interval (and
/// at least a minute, so a slow tick is not a gap).
fn threshold(interval: Duration) -> Duration {
    interval.max(Duration::minutes(1))
}

/// At start-up: the last tick ended at `last_end`; was a tick missed?
pub fn at_start_up(
    last_end: DateTime<Utc>,
    interval: Duration,
    now: DateTime<Utc>,
    why: String,
) -> Option<Letter> {
    let due = last_end + interval;
    let late = now - due;
    if late <= threshold(interval) {
        return None;
    }
    let body = format!(
        "No tick ran for {} (from {} to {}): {why}.\n\nThe agent resumes now. Messages that \
         arrived meanwhile are in its inbox and will be read this tick.\n",
        crate::clock::human(now - last_end),
        stamp(last_end),
        stamp(now)
    );
    Some(Letter::flare(
        Cause::Gap,
        format!("no tick for {}", crate::clock::human(now - last_end)),
        body,
    ))
}

/// In the loop: the tick due at `due` only started at `start`.
pub fn late_tick(due: DateTime<Utc>, start: DateTime<Utc>, interval: Duration) -> Option<Letter> {
    let late = start - due;
    if late <= threshold(interval) {
        return None;
    }
    let body = format!(
        "A tick due at {} started only at {}, {} late, while the supervisor was running. \
         The machine may have been suspended, or the supervisor stalled.\n",
        stamp(due),
        stamp(start),
        crate::clock::human(late)
    );
    Some(Letter::flare(
        Cause::Gap,
        format!("a tick ran {} late", crate::clock::human(late)),
        body,
    ))
}

fn stamp(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Secs, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_700_000_000 + s, 0).unwrap()
    }

    #[test]
    fn a_missed_interval_is_a_gap_a_slow_tick_is_not() {
        let interval = Duration::minutes(15);
        assert!(at_start_up(t(0), interval, t(20 * 60), "x".into()).is_none());
        let flare = at_start_up(t(0), interval, t(3 * 3600), "hearth was stopped".into()).unwrap();
        assert!(
            flare.body.contains("No tick ran for 3.0 h"),
            "{}",
            flare.body
        );
        assert!(flare.body.contains("hearth was stopped"));
        assert!(late_tick(t(0), t(60), interval).is_none());
        assert!(late_tick(t(0), t(3600), interval)
            .unwrap()
            .body
            .contains("60 min late"));
    }
}
