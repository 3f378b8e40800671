//! The one source of "now". The library never asks the system for the time:
//! it is given a [`Clock`] (or a `now` taken from one) by `cli`, which makes
//! it from `HEARTH_NOW` when that is set. A pinned clock makes a whole
//! process reproducible (commit dates, file names, the budget's day), as
//! jj's `JJ_TIMESTAMP` does, and it is what a simulated month stands on.
//!
//! Two readings are not "now" and stay real whatever the clock says:
//! monotonic `Instant`s for timeouts, and [`file_time_now`] for comparing
//! with file modification times (a pinned clock would make every file look
//! new, or ancient).

use std::time::SystemTime;

use chrono::{DateTime, Utc};

/// Where "now" comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Clock {
    /// The system's wall clock.
    System,
    /// Always this instant (`HEARTH_NOW`).
    Pinned(DateTime<Utc>),
}

impl Clock {
    /// `HEARTH_NOW`'s value (RFC 3339) pins the clock; no value is the
    /// system clock.
    pub fn from_env_value(value: Option<&str>) -> Result<Clock, String> {
        match value.map(str::trim).filter(|v| !v.is_empty()) {
            None => Ok(Clock::System),
            Some(v) => DateTime::parse_from_rfc3339(v)
                .map(|t| Clock::Pinned(t.with_timezone(&Utc)))
                .map_err(|e| {
                    format!(
                        "HEARTH_NOW={v:?} is not an RFC 3339 time ({e}); e.g. 2026-01-31T09:00:00Z"
                    )
                }),
        }
    }

    /// The current time by this clock.
    pub fn now(&self) -> DateTime<Utc> {
        match self {
            #[allow(clippy::disallowed_methods)] // the one place that may
            Clock::System => Utc::now(),
            Clock::Pinned(t) => *t,
        }
    }

    /// A pinned clock does not move: a wait measured in its time would never
    /// end, so waits are measured in real time instead.
    pub fn is_pinned(&self) -> bool {
        matches!(self, Clock::Pinned(_))
    }
}

/// The filesystem's "now", to compare with modification times. Never
/// pinned: file times are written by the kernel's clock.
pub fn file_time_now() -> SystemTime {
    #[allow(clippy::disallowed_methods)] // the one place that may
    SystemTime::now()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hearth_now_pins_the_clock_and_a_bad_value_says_how_to_write_one() {
        let clock = Clock::from_env_value(Some("2026-01-31T09:00:00+01:00")).unwrap();
        assert_eq!(clock.now().to_rfc3339(), "2026-01-31T08:00:00+00:00");
        assert_eq!(clock.now(), clock.now());
        assert_eq!(Clock::from_env_value(Some("")).unwrap(), Clock::System);
        let e = Clock::from_env_value(Some("yesterday")).unwrap_err();
        assert!(
            e.contains("HEARTH_NOW") && e.contains("2026-01-31T09:00:00Z"),
            "{e}"
        );
    }
}
