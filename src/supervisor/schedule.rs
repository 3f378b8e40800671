//! When the next tick is due, decided as pure functions over plain values:
//! the interval, the last tick's record, what the agent asked (`sleep`),
//! whether a message waits, the cache's rule. The supervisor looks (the
//! clock, the inbox) and waits; the decisions are here, where a test can
//! ask them without a home.

use std::time::Duration;

use chrono::{DateTime, Utc};

use crate::config::Price;
use crate::exchange::class::Class;
use crate::exchange::ledger::TickRecord;
use crate::model::cache;

/// The interval between ticks: `--interval`, else back to back for
/// `--ticks N`, else `[tick] interval_s`.
pub fn interval(flag: Option<Duration>, ticks: Option<u64>, interval_s: u64) -> chrono::Duration {
    let interval = flag
        .or_else(|| ticks.map(|_| Duration::ZERO))
        .unwrap_or(Duration::from_secs(interval_s));
    chrono::Duration::from_std(interval).unwrap_or(chrono::Duration::MAX)
}

/// The first tick's time: at once for `--ticks` runs and when a message
/// waits already (left while no supervisor ran); otherwise the schedule
/// carries over from the last recorded tick's end, so a restart does not
/// tick early.
pub fn first_due(
    now: DateTime<Utc>,
    counted: bool,
    message_waits: bool,
    last_end: Option<DateTime<Utc>>,
    interval: chrono::Duration,
) -> DateTime<Utc> {
    if counted || message_waits {
        return now;
    }
    match last_end {
        Some(end) => (end + interval).min(now + interval),
        None => now,
    }
}

/// The next tick's time after `record`: after an outage's backoff,
/// whatever waits; after a budget skip, not before the interval (ticking
/// at once would spin until midnight); at once when a message came while
/// the tick ran; otherwise at the interval, never before the agent's own
/// sleep ends, and earlier when the cache's rule `pulled` it in.
pub fn next_due(
    record: &TickRecord,
    sleep_until: Option<DateTime<Utc>>,
    now: DateTime<Utc>,
    message_waits: bool,
    interval: chrono::Duration,
    pulled: Option<DateTime<Utc>>,
) -> DateTime<Utc> {
    if let Some(ms) = record.backoff_ms {
        return record.end + chrono::Duration::milliseconds(ms as i64);
    }
    let due = record.end + interval;
    if record.class == Class::Skipped {
        return sleep_until.map_or(due, |s| s.max(due));
    }
    if message_waits {
        return now;
    }
    let due = sleep_until.map_or(due, |s| s.max(due));
    match pulled {
        Some(pulled) if sleep_until.is_none_or(|s| pulled >= s) => pulled.min(due),
        _ => due,
    }
}

/// With `[tick] cache_aware`, when an interval just past the cache's
/// longest lifetime would let the conversation's prefix die: the time to
/// tick instead (before it dies, counted from the tick's start, so however
/// long the tick ran), if the last tick's tokens say reading it costs less
/// per hour than the extra ticks. Only ever earlier than due, so no inbox
/// message waits longer.
pub fn pulled_into_the_cache(
    record: &TickRecord,
    interval: chrono::Duration,
    cache_aware: bool,
    price: Option<Price>,
) -> Option<DateTime<Utc>> {
    let interval = interval.to_std().ok()?;
    let pull = cache::between_ticks(interval, cache_aware).pull_to?;
    let price = price?;
    let per = |tokens: u64, rate: f64| tokens as f64 * rate / 1_000_000.0;
    let tokens = &record.tokens;
    let sent = tokens.sent();
    if sent < cache::MIN_CACHEABLE {
        return None;
    }
    // What is new each tick: when the last tick read its prefix, what it
    // did not read; else the last answer and a user turn, about.
    let fresh = if tokens.cache_read > 0 {
        sent - tokens.cache_read
    } else {
        sent.min(2 * tokens.output + 300)
    };
    let output = per(tokens.output, price.output_per_mtok);
    let cached =
        per(sent - fresh, price.cache_read()) + per(fresh, price.cache_write_1h()) + output;
    let uncached = per(sent, price.input_per_mtok) + output;
    cache::pull_pays(cached, uncached, interval, pull)
        .then(|| record.start + chrono::Duration::from_std(pull).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(minute: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_800_000_000 + minute * 60, 0).unwrap()
    }

    /// A tick that ran from minute 0 to minute 1, ended as `class`.
    fn ended(class: &str, backoff_ms: Option<u64>) -> TickRecord {
        serde_json::from_value(serde_json::json!({
            "tick": 7, "start": t(0), "end": t(1), "exit": 0, "class": class,
            "tokens": {"in": 0, "out": 0}, "cost_usd": 0.0, "backoff_ms": backoff_ms,
        }))
        .unwrap()
    }

    #[test]
    fn an_outage_backs_off_whatever_waits_and_a_message_is_answered_at_once_otherwise() {
        let every = chrono::Duration::minutes(15);
        let outage = ended("crash", Some(120_000));
        assert_eq!(next_due(&outage, None, t(2), true, every, None), t(3));
        let ok = ended("ok", None);
        assert_eq!(next_due(&ok, None, t(2), true, every, None), t(2));
        assert_eq!(next_due(&ok, None, t(2), false, every, None), t(16));
        // A budget skip does not spin on a waiting message.
        let skipped = ended("skipped", None);
        assert_eq!(next_due(&skipped, None, t(2), true, every, None), t(16));
    }

    #[test]
    fn the_agents_sleep_is_kept_and_the_cache_only_pulls_a_tick_earlier() {
        let every = chrono::Duration::minutes(90);
        let ok = ended("ok", None);
        let slept = Some(t(120));
        assert_eq!(next_due(&ok, slept, t(2), false, every, None), t(120));
        // Pulled to before the prefix dies: earlier than due…
        assert_eq!(next_due(&ok, None, t(2), false, every, Some(t(59))), t(59));
        // …but never before the agent's own sleep ends.
        assert_eq!(
            next_due(&ok, slept, t(2), false, every, Some(t(59))),
            t(120)
        );
    }

    #[test]
    fn a_restart_keeps_the_schedule_and_counted_runs_start_at_once() {
        let every = chrono::Duration::minutes(15);
        assert_eq!(first_due(t(5), false, false, Some(t(1)), every), t(16));
        assert_eq!(first_due(t(60), false, false, Some(t(1)), every), t(16));
        assert_eq!(first_due(t(5), true, false, Some(t(1)), every), t(5));
        assert_eq!(first_due(t(5), false, true, Some(t(1)), every), t(5));
        assert_eq!(interval(None, Some(3), 900), chrono::Duration::zero());
        assert_eq!(interval(None, None, 900), chrono::Duration::minutes(15));
    }
}
