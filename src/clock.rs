//! The one source of "now". The library never asks the system for the time:
//! it is given a [`Clock`] (or a `now` taken from one) by `cli`, which makes
//! it from `HEARTH_NOW` when that is set. A pinned clock makes a whole
//! process reproducible (commit dates, file names, the budget's day), as
//! jj's `JJ_TIMESTAMP` does, and it is what a simulated month stands on.
//!
//! A *simulated* clock (`HEARTH_SIM_CLOCK=FILE`) is how a month runs in
//! minutes: "now" is the time written in FILE, every process of the home
//! (the supervisor, its tick children, a test's model server) reads the
//! same one, and the supervisor's wait for the next tick moves it forward
//! instead of sleeping. Nothing else advances it, so a tick takes no
//! simulated time.
//!
//! Two readings are not "now" and stay real whatever the clock says:
//! monotonic `Instant`s for timeouts, and [`file_time_now`] for comparing
//! with file modification times (a pinned clock would make every file look
//! new, or ancient).

use std::path::Path;
use std::time::SystemTime;

use chrono::{DateTime, Utc};

/// Why a clock could not be made from the environment.
#[derive(Debug, thiserror::Error)]
pub enum ClockError {
    /// `HEARTH_NOW` is not a time.
    #[error("HEARTH_NOW={value:?} is not an RFC 3339 time ({message}); e.g. 2026-01-31T09:00:00Z")]
    NotATime {
        /// The variable's value.
        value: String,
        /// What the parser said.
        message: String,
    },
    /// `HEARTH_SIM_CLOCK` names a file that does not exist, and no start
    /// time was given.
    #[error("HEARTH_SIM_CLOCK={} does not exist", file.display())]
    NoStart {
        /// The clock's file.
        file: std::path::PathBuf,
    },
    /// The simulated clock's file cannot be read.
    #[error("the simulated clock {} cannot be read: {source}", file.display())]
    Read {
        /// The clock's file.
        file: std::path::PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// The simulated clock's file does not hold a time.
    #[error("the simulated clock {}:1 does not hold an RFC 3339 time ({message})", file.display())]
    Garbled {
        /// The clock's file.
        file: std::path::PathBuf,
        /// What the parser said.
        message: String,
    },
    /// The simulated clock's file cannot be written.
    #[error(transparent)]
    Write(#[from] crate::atomic::WriteError),
}

impl ClockError {
    /// What to do about it.
    pub fn hint(&self) -> String {
        match self {
            ClockError::NotATime { .. } => {
                "write it like 2026-01-31T09:00:00Z, or unset HEARTH_NOW to use the system clock"
                    .into()
            }
            ClockError::NoStart { .. } => "set HEARTH_NOW to the time the simulation starts at, \
                 or unset HEARTH_SIM_CLOCK to use the system clock"
                .into(),
            ClockError::Read { file, source } => crate::io_hint::io_hint(source, file),
            ClockError::Garbled { file, .. } => format!(
                "write one into {} (e.g. 2026-01-31T09:00:00Z), or unset HEARTH_SIM_CLOCK to use \
                 the system clock",
                file.display()
            ),
            ClockError::Write(e) => e.hint(),
        }
    }
}

/// Where "now" comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Clock {
    /// The system's wall clock.
    System,
    /// Always this instant (`HEARTH_NOW`).
    Pinned(DateTime<Utc>),
    /// The time written in this file (`HEARTH_SIM_CLOCK`), moved forward
    /// by [`Clock::advance_to`].
    Simulated(&'static Path),
}

impl Clock {
    /// `HEARTH_NOW`'s value (RFC 3339) pins the clock; no value is the
    /// system clock.
    pub fn from_env_value(value: Option<&str>) -> Result<Clock, ClockError> {
        match value.map(str::trim).filter(|v| !v.is_empty()) {
            None => Ok(Clock::System),
            Some(v) => DateTime::parse_from_rfc3339(v)
                .map(|t| Clock::Pinned(t.with_timezone(&Utc)))
                .map_err(|e| ClockError::NotATime {
                    value: v.to_string(),
                    message: e.to_string(),
                }),
        }
    }

    /// `HEARTH_SIM_CLOCK=FILE` simulates time in FILE, starting at
    /// `start` (`HEARTH_NOW`) when FILE does not exist yet, else at the
    /// time FILE holds.
    pub fn simulated(file: &Path, start: Option<DateTime<Utc>>) -> Result<Clock, ClockError> {
        let file: &'static Path = Box::leak(file.to_path_buf().into_boxed_path());
        if !file.exists() {
            let start = start.ok_or_else(|| ClockError::NoStart {
                file: file.to_path_buf(),
            })?;
            write_time(file, start)?;
        }
        read_time(file)?;
        Ok(Clock::Simulated(file))
    }

    /// The current time by this clock.
    pub fn now(&self) -> DateTime<Utc> {
        match self {
            #[allow(clippy::disallowed_methods)] // the one place that may
            Clock::System => Utc::now(),
            Clock::Pinned(t) => *t,
            // Checked readable when the clock was made; a file broken since
            // (by hand) stops the process rather than let time go wrong.
            Clock::Simulated(file) => read_time(file).unwrap_or_else(|e| panic!("{e}")),
        }
    }

    /// A pinned clock does not move: a wait measured in its time would never
    /// end, so waits are measured in real time instead.
    pub fn is_pinned(&self) -> bool {
        matches!(self, Clock::Pinned(_))
    }

    /// Whether waits are simulated ([`Clock::advance_to`] instead of
    /// sleeping).
    pub fn is_simulated(&self) -> bool {
        matches!(self, Clock::Simulated(_))
    }

    /// Moves a simulated clock forward to `t` (never back); the other
    /// clocks are not moved by anyone.
    pub fn advance_to(&self, t: DateTime<Utc>) {
        if let Clock::Simulated(file) = self {
            if t > self.now() {
                if let Err(e) = write_time(file, t) {
                    panic!(
                        "the simulated clock {} cannot be moved: {e}",
                        file.display()
                    );
                }
            }
        }
    }
}

/// A time as the operator reads it: RFC 3339 to the second, in UTC
/// (`2026-11-27T05:53:47Z`), never with nanoseconds.
pub fn to_second(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// The filesystem's "now", to compare with modification times. Never
/// pinned: file times are written by the kernel's clock.
pub fn file_time_now() -> SystemTime {
    #[allow(clippy::disallowed_methods)] // the one place that may
    SystemTime::now()
}

fn read_time(file: &Path) -> Result<DateTime<Utc>, ClockError> {
    let text = std::fs::read_to_string(file).map_err(|source| ClockError::Read {
        file: file.to_path_buf(),
        source,
    })?;
    DateTime::parse_from_rfc3339(text.trim())
        .map(|t| t.with_timezone(&Utc))
        .map_err(|e| ClockError::Garbled {
            file: file.to_path_buf(),
            message: e.to_string(),
        })
}

fn write_time(file: &Path, t: DateTime<Utc>) -> Result<(), crate::atomic::WriteError> {
    crate::atomic::write(file, t.to_rfc3339().as_bytes())
}

/// A duration as a person says it: `42 s`, `7 min`, `3.5 h`, `2.0 days`.
pub fn human(d: chrono::Duration) -> String {
    let s = d.num_seconds().max(0);
    match s {
        0..=119 => format!("{s} s"),
        120..=7199 => format!("{} min", s / 60),
        7200..=172_799 => format!("{:.1} h", s as f64 / 3600.0),
        _ => format!("{:.1} days", s as f64 / 86400.0),
    }
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
            e.to_string().contains("HEARTH_NOW") && e.hint().contains("2026-01-31T09:00:00Z"),
            "{e}"
        );
    }

    #[test]
    fn a_simulated_clock_is_shared_through_its_file_and_only_moves_forward() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("now");
        let start = Clock::from_env_value(Some("2026-01-01T00:00:00Z"))
            .unwrap()
            .now();
        assert!(Clock::simulated(&file, None)
            .unwrap_err()
            .hint()
            .contains("HEARTH_NOW"));
        let clock = Clock::simulated(&file, Some(start)).unwrap();
        assert_eq!(clock.now(), start);
        let later = start + chrono::Duration::hours(36);
        clock.advance_to(later);
        clock.advance_to(start);
        assert_eq!(clock.now(), later, "never back");
        // Another process (here: another clock on the same file) agrees.
        assert_eq!(Clock::simulated(&file, None).unwrap().now(), later);
    }
}
