//! Prompt caching: how long a request's prefix should live in the
//! provider's cache, decided from when the next request that can read it is
//! expected. Pure functions over plain values; the providers turn the
//! decision into their wire format (Anthropic's `cache_control`
//! breakpoints), the tick decides per request, the supervisor may pull an
//! idle tick into the lifetime, and `audit` / `status` explain the verdict.
//!
//! The rules relied on (Anthropic, "Prompt caching", read 2026-11):
//! a write costs 1.25× the input price for the 5-minute lifetime and 2× for
//! the 1-hour one, a read 0.1×; every read refreshes the entry's lifetime at
//! no cost; an entry is the exact prefix (tools, system, messages) up to a
//! `cache_control` breakpoint, at most 4 breakpoints a request, and a
//! breakpoint finds an earlier entry by looking back at most 20 blocks;
//! 1-hour breakpoints must come before 5-minute ones; prefixes under the
//! model's minimum (1,024 to 4,096 tokens) are not cached and cost nothing
//! extra.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// How long a cache entry lives after its last write or read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Lifetime {
    /// Anthropic's default `ephemeral` lifetime: writes at 1.25× input.
    #[serde(rename = "5m")]
    FiveMinutes,
    /// `"ttl": "1h"`: writes at 2× input.
    #[serde(rename = "1h")]
    OneHour,
}

impl Lifetime {
    /// How long the entry lives.
    pub fn duration(self) -> Duration {
        match self {
            Lifetime::FiveMinutes => Duration::from_secs(5 * 60),
            Lifetime::OneHour => Duration::from_secs(60 * 60),
        }
    }

    /// As the API and the ledger spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            Lifetime::FiveMinutes => "5m",
            Lifetime::OneHour => "1h",
        }
    }

    /// The longest wait before the next request for which this lifetime is
    /// chosen: its duration less [`MARGIN`].
    pub fn fits(self) -> Duration {
        self.duration() - MARGIN
    }
}

/// What the wait between ticks costs besides the interval: the rest of a
/// tick after its last request (tool calls, the commit), the next tick's
/// start, a clock a little off. A lifetime is chosen only when the next
/// request is expected this much before the entry would die: an entry that
/// dies a second early is a whole prefix written again.
pub const MARGIN: Duration = Duration::from_secs(60);

/// The shortest prefix any Claude model caches (Sonnet's 1,024 tokens;
/// Opus 4.5+ and Haiku 4.5 need 4,096): a shorter one is never written, so
/// nothing it does depends on when the next request comes.
pub const MIN_CACHEABLE: u64 = 1024;

/// How much further than the 1-hour lifetime an interval may be for a
/// cache-aware supervisor to pull the tick forward into it (an interval of
/// up to 90 minutes ticks every 59 instead): beyond that, pulling ticks in
/// would change how often the agent runs, not just when.
pub const PULL_REACH: f64 = 1.5;

/// The lifetime that fits a wait of `wait` before the next request, or
/// none when no lifetime outlives it (a write then costs a premium no read
/// will repay).
pub fn lifetime_for(wait: Duration) -> Option<Lifetime> {
    [Lifetime::FiveMinutes, Lifetime::OneHour]
        .into_iter()
        .find(|l| wait <= l.fits())
}

/// How ticks and the cache go together at an interval.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Between {
    /// The lifetime a tick's prefix is written with for the next tick to
    /// read; none when the next tick comes after every lifetime.
    pub lifetime: Option<Lifetime>,
    /// With `[tick] cache_aware`, an idle supervisor starts the next tick
    /// this long after the last one started (earlier than the interval),
    /// so it reads the prefix before it dies.
    pub pull_to: Option<Duration>,
}

/// The plan between ticks `interval` apart, with or without a cache-aware
/// supervisor.
pub fn between_ticks(interval: Duration, cache_aware: bool) -> Between {
    if let Some(lifetime) = lifetime_for(interval) {
        return Between {
            lifetime: Some(lifetime),
            pull_to: None,
        };
    }
    let longest = Lifetime::OneHour;
    let reach = longest.duration().mul_f64(PULL_REACH);
    if cache_aware && interval <= reach {
        return Between {
            lifetime: Some(longest),
            pull_to: Some(longest.fits()),
        };
    }
    Between {
        lifetime: None,
        pull_to: None,
    }
}

/// The lifetime of one request in a tick. When the next tick can read
/// what this request writes (`next_tick`: the lifetime that outlives the
/// wait for it), every request writes with that lifetime: any of them may
/// be the tick's last. When it cannot (a long interval, a long `sleep`,
/// an ask), only the tick's own later requests could read a write, and a
/// 5-minute write (0.25× input more than sending it plainly) pays only if
/// another request follows. The first tool round is usually a tick's last
/// (a month on a real model: 3 of 133 were followed by another), so the
/// premium is paid from the second round on, once the model is plainly
/// working through several calls.
pub fn for_request(next_tick: Option<Lifetime>, tool_rounds_so_far: usize) -> Option<Lifetime> {
    match (next_tick, tool_rounds_so_far) {
        (Some(l), _) => Some(l),
        (None, 0 | 1) => None,
        (None, _) => Some(Lifetime::FiveMinutes),
    }
}

/// Whether pulling ticks forward to `pulled` (from `interval`) costs less
/// per hour, judged by one tick's tokens: `cached` is the dollars of a tick
/// that reads its prefix from the cache (what the last tick cost, when it
/// read), `uncached` the dollars of the same tick sending it all at the
/// input price.
pub fn pull_pays(cached: f64, uncached: f64, interval: Duration, pulled: Duration) -> bool {
    if pulled.is_zero() || interval.is_zero() || pulled >= interval {
        return false;
    }
    cached / pulled.as_secs_f64() < uncached / interval.as_secs_f64()
}

/// What an operator is told about an interval: which lifetime serves it,
/// or why none does and which interval would.
pub fn verdict(interval: Duration, cache_aware: bool) -> String {
    let minutes = |d: Duration| {
        let s = d.as_secs();
        if s.is_multiple_of(60) {
            format!("{} min", s / 60)
        } else {
            format!("{s} s")
        }
    };
    let plan = between_ticks(interval, cache_aware);
    match (plan.lifetime, plan.pull_to) {
        (Some(Lifetime::FiveMinutes), _) => format!(
            "an interval of {} is read from the provider's cache with the 5-minute lifetime \
             (writes at 1.25× the input price, reads at 0.1×)",
            minutes(interval)
        ),
        (Some(Lifetime::OneHour), None) => format!(
            "an interval of {} is read from the provider's cache with the 1-hour lifetime \
             (writes at 2× the input price, reads at 0.1×); {} or less would use the \
             5-minute lifetime (writes at 1.25×)",
            minutes(interval),
            minutes(Lifetime::FiveMinutes.fits())
        ),
        (Some(_), Some(pulled)) => format!(
            "an interval of {} outlives the provider's longest cache lifetime (1 hour); \
             [tick] cache_aware pulls idle ticks forward to every {} so the conversation \
             is read from the cache",
            minutes(interval),
            minutes(pulled)
        ),
        (None, _) => format!(
            "an interval of {} outlives the provider's longest cache lifetime (1 hour): \
             every tick sends the whole conversation at the full input price, and caching \
             pays nothing between ticks; an interval of {} or less would read it from the \
             cache{}",
            minutes(interval),
            minutes(Lifetime::OneHour.fits()),
            if !cache_aware && interval <= Lifetime::OneHour.duration().mul_f64(PULL_REACH) {
                ", as would [tick] cache_aware = true"
            } else {
                ""
            }
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn min(m: u64) -> Duration {
        Duration::from_secs(m * 60)
    }

    #[test]
    fn the_lifetime_is_the_shortest_that_outlives_the_wait() {
        assert_eq!(lifetime_for(Duration::ZERO), Some(Lifetime::FiveMinutes));
        assert_eq!(lifetime_for(min(4)), Some(Lifetime::FiveMinutes));
        assert_eq!(lifetime_for(min(5)), Some(Lifetime::OneHour));
        assert_eq!(lifetime_for(min(15)), Some(Lifetime::OneHour));
        assert_eq!(lifetime_for(min(59)), Some(Lifetime::OneHour));
        assert_eq!(lifetime_for(min(60)), None, "dead when the tick comes");
        assert_eq!(lifetime_for(min(120)), None);
    }

    #[test]
    fn a_cache_aware_supervisor_pulls_only_intervals_just_past_the_hour() {
        let plain = between_ticks(min(75), false);
        assert_eq!(plain.lifetime, None);
        let aware = between_ticks(min(75), true);
        assert_eq!(aware.lifetime, Some(Lifetime::OneHour));
        assert_eq!(aware.pull_to, Some(min(59)));
        assert_eq!(between_ticks(min(120), true).lifetime, None);
        assert_eq!(between_ticks(min(15), true).pull_to, None);
    }

    #[test]
    fn no_write_is_paid_for_a_prefix_no_request_will_read() {
        assert_eq!(for_request(None, 0), None);
        assert_eq!(for_request(None, 1), None);
        assert_eq!(for_request(None, 2), Some(Lifetime::FiveMinutes));
        assert_eq!(
            for_request(Some(Lifetime::OneHour), 0),
            Some(Lifetime::OneHour)
        );
    }

    #[test]
    fn pulling_pays_when_the_read_saves_more_than_the_extra_ticks_cost() {
        // A 60,000-token prefix at $3/Mtok: $0.18 sent whole, ~$0.03 read.
        assert!(pull_pays(0.03, 0.18, min(75), min(59)));
        // A prefix too short to cache costs the same either way.
        assert!(!pull_pays(0.01, 0.01, min(75), min(59)));
    }

    #[test]
    fn the_verdict_names_the_interval_that_would_pay() {
        let v = verdict(min(75), false);
        assert!(v.contains("pays nothing"), "{v}");
        assert!(v.contains("59 min or less"), "{v}");
        assert!(v.contains("cache_aware"), "{v}");
        assert!(verdict(min(15), true).contains("1-hour lifetime"));
    }
}
