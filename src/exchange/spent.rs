//! What was spent: the one definition every surface and both gates use.
//!
//! A paid model call is on exactly one record, by the door that made it:
//! a tick's on its ledger line (and, per UTC day, in `state/budget.json`),
//! an ask's on its answer line in the session log, any other call (recall's
//! rerank from the shell) on `state/calls.jsonl`. "Spent" is the sum of the
//! three over a span; "today" is the span from UTC midnight, which is what
//! `[budget] daily_usd` caps. `hearth status`, `hearth day`, the metrics,
//! the budget gate and the burn-rate warning all read it here, so they
//! cannot disagree about money.

use chrono::{DateTime, Utc};

use crate::budget::{self, AskSpend, Budget, PaidCall};
use crate::conversation::sessions::{self, Line};
use crate::home::Home;

/// Dollars spent over a span, door by door.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
pub struct Spent {
    /// Dollars the ticks spent.
    pub ticks: f64,
    /// Dollars the asks spent (with their warm digests' calls).
    pub asks: f64,
    /// Dollars the other calls spent (recall's rerank from the shell).
    pub calls: f64,
}

impl Spent {
    /// `now`'s UTC day, every door.
    pub fn today(home: &Home, now: DateTime<Utc>) -> Spent {
        Spent::today_with(
            &Budget::load_or_empty(home),
            &crate::conversation::tail::of_home_since(home, sessions::day_start(now)),
            home,
            now,
        )
    }

    /// `now`'s UTC day, with the ticks' spend as `budget` holds it (the
    /// supervisor's, just updated and not saved yet) and the asks' from
    /// `lines` (the session log, read by the caller who names what in it
    /// could not be read).
    pub fn today_with(budget: &Budget, lines: &[Line], home: &Home, now: DateTime<Utc>) -> Spent {
        Spent::on_day(budget, lines, &budget::paid_calls(home), now)
    }

    /// `at`'s UTC day, from records the caller read once: `budget`, the
    /// session log's `lines` and the other calls (`calls`, from
    /// `state/calls.jsonl`) — for a view of many days, which would
    /// otherwise read the calls once a day.
    pub fn on_day(budget: &Budget, lines: &[Line], calls: &[PaidCall], at: DateTime<Utc>) -> Spent {
        Spent {
            ticks: budget.spent(at),
            asks: sessions::asked_spend(lines, at),
            calls: budget::calls_spent_of(calls, at).today,
        }
    }

    /// From `since` to now: the ticks' spend as the caller summed it from
    /// their ledger lines (`ticks`), the asks' from `lines`, the other
    /// calls' from `state/calls.jsonl`.
    pub fn since(
        ticks: impl IntoIterator<Item = f64>,
        lines: &[Line],
        home: &Home,
        since: DateTime<Utc>,
    ) -> Spent {
        Spent {
            ticks: sum(ticks),
            asks: sessions::asked_spend_since(lines, since),
            calls: budget::calls_spent_since(home, since),
        }
    }

    /// What the asks and the other calls spent today and in the last hour
    /// (the burn rate adds them to the ticks' own).
    pub fn asks_and_calls(home: &Home, now: DateTime<Utc>) -> AskSpend {
        let hour_ago = now - chrono::Duration::hours(1);
        let lines =
            crate::conversation::tail::of_home_since(home, sessions::day_start(now).min(hour_ago));
        let calls = budget::calls_spent(home, now);
        AskSpend {
            today: sessions::asked_spend(&lines, now) + calls.today,
            last_hour: sessions::asked_spend_since(&lines, now - chrono::Duration::hours(1))
                + calls.last_hour,
        }
    }

    /// Every door together (never `-0.0`: a day with no spend is `0`).
    pub fn total(&self) -> f64 {
        sum([self.ticks, self.asks, self.calls])
    }

    /// The gate: `Some(reason)` when `[budget] daily_usd` (0: no limit) is
    /// spent, in the words both doors refuse with.
    pub fn over(&self, daily_usd: f64) -> Option<String> {
        let spent = self.total();
        (daily_usd > 0.0 && spent >= daily_usd).then(|| {
            format!(
                "the daily budget is spent: ${spent:.4} of [budget] daily_usd = ${daily_usd:.2} today (UTC)"
            )
        })
    }
}

/// Dollars added up from `0.0`. (Rust's `f64` `Sum` starts from `-0.0`,
/// which prints as `-0.0` in JSON when there is nothing to add.)
pub fn sum(dollars: impl IntoIterator<Item = f64>) -> f64 {
    dollars.into_iter().fold(0.0, |a, b| a + b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_gate_counts_every_door_and_zero_is_no_limit() {
        let spent = Spent {
            ticks: 0.6,
            asks: 0.5,
            calls: 0.2,
        };
        assert!(spent
            .over(1.0)
            .unwrap()
            .contains("$1.3000 of [budget] daily_usd = $1.00"));
        assert!(spent.over(2.0).is_none());
        assert!(spent.over(0.0).is_none(), "0 is no limit");
        assert!(Spent {
            ticks: 1.0,
            asks: 0.0,
            calls: 0.0,
        }
        .over(1.0)
        .is_some());
    }

    #[test]
    fn nothing_spent_is_zero_not_negative_zero() {
        let none = Spent {
            ticks: sum([]),
            asks: -0.0,
            calls: -0.0,
        };
        assert_eq!(serde_json::to_string(&none.total()).unwrap(), "0.0");
        assert_eq!(serde_json::to_string(&sum([])).unwrap(), "0.0");
    }
}
