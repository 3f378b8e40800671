//! `state/budget.json`: spend per UTC day, and the daily limit
//! (`[budget] daily_usd`). A ledger of hearth's own: committed every tick,
//! never rewound by a heal, so a failing agent cannot spend the day twice.
//! The supervisor is its only writer; a tick only reads it.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::atomic;
use crate::home::Home;
use crate::json_file::{self, JsonFile, JsonFileError};

/// The spend ledger.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Budget {
    /// Dollars spent per UTC day (`YYYY-MM-DD`).
    #[serde(default)]
    pub days: BTreeMap<String, f64>,
    /// The last UTC day a `budget` flare was sent for.
    #[serde(default)]
    pub flared: Option<String>,
    /// The spend of the last hour, tick by tick: the burn rate.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub recent: Vec<Spend>,
    /// The last UTC day a burn-rate warning was sent for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warned: Option<String>,
    /// The last day whose stop (`flared`) was followed by a tick that ran:
    /// spending resumed, said once in the log.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resumed: Option<String>,
    /// The newest tick whose spend `days` holds: a tick is counted once,
    /// however many times its end is recorded (a save a full disk cut,
    /// then the recovery of the same tick).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counted_through: Option<u64>,
}

/// One tick's spend, when it ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Spend {
    /// When.
    pub at: DateTime<Utc>,
    /// When the tick started (older ledgers: unknown, taken as `at`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<DateTime<Utc>>,
    /// Dollars.
    pub usd: f64,
}

/// The window the burn rate is measured over.
const BURN_WINDOW: chrono::Duration = chrono::Duration::hours(1);

/// What `hearth ask` spent, from its answer lines (this module does not
/// read them: the caller does), with the calls of `state/calls.jsonl`.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct AskSpend {
    /// On the UTC day.
    pub today: f64,
    /// In the last hour.
    pub last_hour: f64,
}

/// One model call hearth made outside a tick and an ask (recall's rerank
/// from the shell): a line of `state/calls.jsonl`, so that every call is
/// on a ledger with its cost and counts against `[budget] daily_usd`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PaidCall {
    /// When it ended.
    pub time: DateTime<Utc>,
    /// What made it (`recall`).
    pub door: String,
    /// The model called.
    pub model: String,
    /// Input tokens (all of them, however priced).
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Dollars, at the model's price.
    pub cost_usd: f64,
}

/// Appends `call` to `state/calls.jsonl` (a line, appended whole: the
/// supervisor and a shell command may write at once). The caller commits
/// it as hearth's.
pub fn record_call(home: &Home, call: &PaidCall) -> Result<(), atomic::WriteError> {
    let line = serde_json::to_string(call).expect("a call serialises");
    atomic::append_line(&home.path(crate::home::layout::rel::CALLS), &line)
}

/// The calls of `state/calls.jsonl` (none yet: none; a torn line is
/// skipped, as a half-appended line is).
pub fn paid_calls(home: &Home) -> Vec<PaidCall> {
    let text =
        std::fs::read_to_string(home.path(crate::home::layout::rel::CALLS)).unwrap_or_default();
    text.lines()
        .filter_map(|l| serde_json::from_str::<PaidCall>(l).ok())
        .collect()
}

/// What the calls of `state/calls.jsonl` spent after `since`.
pub fn calls_spent_since(home: &Home, since: DateTime<Utc>) -> f64 {
    paid_calls(home)
        .iter()
        .filter(|call| call.time > since)
        .fold(0.0, |spent, call| spent + call.cost_usd)
}

/// What the calls of `state/calls.jsonl` spent on `now`'s UTC day and in
/// the last hour before `now`.
pub fn calls_spent(home: &Home, now: DateTime<Utc>) -> AskSpend {
    calls_spent_of(&paid_calls(home), now)
}

/// [`calls_spent`] of `calls` the caller read once (a view of many days).
pub fn calls_spent_of(calls: &[PaidCall], now: DateTime<Utc>) -> AskSpend {
    let mut spent = AskSpend::default();
    for call in calls {
        if call.time.date_naive() == now.date_naive() {
            spent.today += call.cost_usd;
        }
        if now - call.time < BURN_WINDOW && call.time <= now {
            spent.last_hour += call.cost_usd;
        }
    }
    spent
}

/// The start of the UTC day after `t`'s: when a spent budget is whole
/// again.
pub fn next_day(t: DateTime<Utc>) -> DateTime<Utc> {
    let midnight = t
        .date_naive()
        .succ_opt()
        .and_then(|d| d.and_hms_opt(0, 0, 0))
        .map(|d| d.and_utc());
    midnight.unwrap_or(t + chrono::Duration::days(1))
}

/// The UTC day of `t`, as the ledger keys it (`YYYY-MM-DD`).
pub fn day(t: DateTime<Utc>) -> String {
    t.format("%Y-%m-%d").to_string()
}

impl JsonFile for Budget {
    const VERSION: u32 = 1;
}

fn path(home: &Home) -> std::path::PathBuf {
    home.budget_path()
}

impl Budget {
    /// Whether the burn-rate warning is due no more on `now`'s UTC day:
    /// it went out already, or the stop itself did (a warning after the
    /// stop says nothing new). The stop is flared once a day whether or
    /// not a warning came first: it is what changes the agent's day.
    pub fn warned_today(&self, now: DateTime<Utc>) -> bool {
        let today = day(now);
        [&self.warned, &self.flared]
            .iter()
            .any(|d| d.as_deref() == Some(today.as_str()))
    }

    /// Whether the stop has been flared on `now`'s UTC day.
    pub fn stopped_today(&self, now: DateTime<Utc>) -> bool {
        self.flared.as_deref() == Some(day(now).as_str())
    }

    /// The day of the last stop, when a tick that ran (it spent, or was not
    /// skipped for the budget) has not yet been said to follow it: the
    /// caller says spending resumed, and marks it (`resumed`).
    pub fn resumes(&self, now: DateTime<Utc>) -> Option<String> {
        let stopped = self.flared.clone()?;
        let still_today = stopped == day(now);
        (self.resumed.as_ref() != Some(&stopped) && !still_today).then_some(stopped)
    }

    /// The ledger (none yet: no spend).
    pub fn load(home: &Home) -> Result<Budget, JsonFileError> {
        Ok(json_file::load(&path(home))?.unwrap_or_default())
    }

    /// The ledger, or no spend when it cannot be read, said in the log (the
    /// broken bytes stay in git history: the ledger is committed every
    /// tick). Spend is not a reason to stop the agent.
    pub fn load_or_empty(home: &Home) -> Budget {
        Budget::load(home).unwrap_or_else(|e| {
            tracing::warn!("{e}; counting today's spend from zero");
            Budget::default()
        })
    }

    /// Writes the ledger atomically (the supervisor only).
    pub fn save(&self, home: &Home) -> Result<(), atomic::WriteError> {
        json_file::save(&path(home), self)
    }

    /// Dollars spent on `now`'s UTC day.
    pub fn spent(&self, now: DateTime<Utc>) -> f64 {
        self.days.get(&day(now)).copied().unwrap_or(0.0)
    }

    /// Counts `usd` on `at`'s UTC day (and in the last hour's burn).
    pub fn add(&mut self, at: DateTime<Utc>, usd: f64) {
        self.add_tick(at, at, usd);
    }

    /// Counts a tick's `usd` on its end's UTC day, and in the last hour's
    /// burn with the time it ran.
    pub fn add_tick(&mut self, from: DateTime<Utc>, at: DateTime<Utc>, usd: f64) {
        if usd > 0.0 {
            *self.days.entry(day(at)).or_default() += usd;
            self.recent.retain(|s| at - s.at < BURN_WINDOW);
            self.recent.push(Spend {
                at,
                from: Some(from),
                usd,
            });
        }
    }

    /// When the rate of the last hour's spend, kept up, would cross
    /// `daily_usd` (0: no limit), if that is before `now`'s UTC day ends
    /// and the limit is not reached yet: the moment to warn, before the
    /// stop. `asks` is what `hearth ask` and paid calls spent (today, and
    /// in the last hour): the day's spend is every door's, as the gate
    /// counts it. `interval` is the time between ticks.
    ///
    /// The rate is the spend over the time it took, not over a whole hour:
    /// ticks that began ten minutes ago spend at six times the rate their
    /// hour's total suggests. That time runs from the first counted tick's
    /// start, plus one interval (n ticks a interval apart are n intervals
    /// of spending), and is at most the hour.
    pub fn runs_out_at(
        &self,
        daily_usd: f64,
        asks: AskSpend,
        interval: chrono::Duration,
        now: DateTime<Utc>,
    ) -> Option<DateTime<Utc>> {
        let spent = self.spent(now) + asks.today;
        if daily_usd <= 0.0 || spent >= daily_usd {
            return None;
        }
        let in_window: Vec<&Spend> = self
            .recent
            .iter()
            .filter(|s| now - s.at < BURN_WINDOW && s.at <= now)
            .collect();
        let last_hour: f64 = asks.last_hour + in_window.iter().map(|s| s.usd).sum::<f64>();
        if last_hour <= 0.0 {
            return None;
        }
        let covered = in_window
            .iter()
            .map(|s| s.from.unwrap_or(s.at).min(s.at))
            .min()
            .map_or(BURN_WINDOW, |first| {
                (now - first + interval.max(chrono::Duration::zero())).min(BURN_WINDOW)
            })
            .max(chrono::Duration::seconds(1));
        let per_second = last_hour / covered.num_seconds() as f64;
        let seconds = ((daily_usd - spent) / per_second).ceil() as i64;
        let at = now + chrono::Duration::seconds(seconds);
        let day_ends = (now.date_naive() + chrono::Days::new(1))
            .and_hms_opt(0, 0, 0)
            .expect("midnight exists")
            .and_utc();
        (at < day_ends).then_some(at)
    }

    /// Whether `daily_usd` (0: no limit) is spent for `now`'s UTC day.
    pub fn exhausted(&self, daily_usd: f64, now: DateTime<Utc>) -> bool {
        daily_usd > 0.0 && self.spent(now) >= daily_usd
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spend_is_per_utc_day() {
        let mut b = Budget::default();
        let t = DateTime::from_timestamp(1_700_000_000, 0).unwrap();
        b.add(t, 4.0);
        b.add(t, 6.5);
        assert!(b.exhausted(10.0, t));
        assert!(!b.exhausted(0.0, t), "0 means no limit");
        assert!(!b.exhausted(10.0, t + chrono::Duration::days(1)));
    }

    #[test]
    fn the_last_hours_burn_warns_when_it_would_cross_the_limit_today() {
        // 06:00 UTC: $1 in the last hour is $18 more by midnight.
        let morning = DateTime::parse_from_rfc3339("2026-11-23T06:00:00Z")
            .unwrap()
            .to_utc();
        let none = AskSpend::default();
        let half_hour = chrono::Duration::minutes(30);
        let mut b = Budget::default();
        b.add(morning - chrono::Duration::minutes(30), 1.0);
        let at = b
            .runs_out_at(10.0, none, half_hour, morning)
            .expect("warned");
        assert_eq!(at, morning + chrono::Duration::hours(9));
        assert_eq!(
            b.runs_out_at(30.0, none, half_hour, morning),
            None,
            "it fits the day"
        );
        assert_eq!(
            b.runs_out_at(0.0, none, half_hour, morning),
            None,
            "no limit"
        );
        // Two hours later the burn has stopped.
        assert_eq!(
            b.runs_out_at(10.0, none, half_hour, morning + chrono::Duration::hours(2)),
            None
        );
        // Asks count: $0.50 asked in the last hour makes it sooner, and
        // $8 asked today leaves less to spend.
        let asked = AskSpend {
            today: 0.5,
            last_hour: 0.5,
        };
        let sooner = b
            .runs_out_at(10.0, asked, half_hour, morning)
            .expect("warned");
        assert_eq!(
            sooner,
            morning + chrono::Duration::hours(5) + chrono::Duration::minutes(40)
        );
        let spent_by_asks = AskSpend {
            today: 8.0,
            last_hour: 0.0,
        };
        assert_eq!(
            b.runs_out_at(10.0, spent_by_asks, half_hour, morning),
            Some(morning + chrono::Duration::hours(1)),
        );
        b.add(morning, 9.0);
        assert_eq!(
            b.runs_out_at(10.0, none, half_hour, morning),
            None,
            "spent: the stop speaks"
        );
    }

    #[test]
    fn the_rate_is_the_spend_over_the_time_it_took_not_over_a_whole_hour() {
        // Ticks a minute apart since 02:00, $0.10 each: $1 by 02:10, and
        // the $4 limit is reached at 02:40, not at 04:50 as $1 over an
        // hour would say.
        let two = DateTime::parse_from_rfc3339("2026-11-23T02:00:00Z")
            .unwrap()
            .to_utc();
        let minute = chrono::Duration::minutes(1);
        let mut b = Budget::default();
        for i in 0..10 {
            let start = two + minute * i;
            b.add_tick(start, start + chrono::Duration::seconds(20), 0.10);
        }
        let now = two + minute * 9 + chrono::Duration::seconds(20);
        let at = b
            .runs_out_at(4.0, AskSpend::default(), minute, now)
            .expect("warned");
        let reached = two + minute * 40;
        let off = (at - reached).num_seconds().abs();
        assert!(off <= 60, "projected {at}, reached {reached}");
    }
}
