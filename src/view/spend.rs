//! What the agent cost, as `/spend` shows it: the last 30 UTC days door
//! by door (each day's [`Spent`], the one definition the budget gate
//! uses), today's running total against `[budget] daily_usd` paid call by
//! paid call, each of today's ticks with what it cost and how much of
//! what it sent the provider's prompt cache served, and the calls no tick
//! made (recall's rerank).

use chrono::{DateTime, Duration, NaiveDate, Utc};

use crate::budget::{self, Budget, PaidCall};
use crate::conversation::sessions;
use crate::exchange::ledger::Ledger;
use crate::exchange::Spent;
use crate::home::Home;

/// How many days the chart goes back.
pub const DAYS: i64 = 30;

/// One tick's cost.
#[derive(Debug, Clone, PartialEq)]
pub struct TickCost {
    /// The tick.
    pub tick: u64,
    /// When it ended.
    pub end: DateTime<Utc>,
    /// Dollars.
    pub cost_usd: f64,
    /// Input tokens sent, however priced.
    pub sent: u64,
    /// Of those, read from the provider's cache (0 to 1; `None`: none sent).
    pub cache_share: Option<f64>,
}

/// One step of today's running total.
#[derive(Debug, Clone, PartialEq)]
pub struct RunningTotal {
    /// When the call ended.
    pub at: DateTime<Utc>,
    /// Which door paid (`tick 12`, `ask`, `recall`).
    pub by: String,
    /// The running total after it.
    pub total: f64,
}

/// `/spend`'s read model.
#[derive(Debug, Clone, PartialEq)]
pub struct SpendView {
    /// The last [`DAYS`] UTC days, oldest first.
    pub days: Vec<(NaiveDate, Spent)>,
    /// Today so far (the figure `status` gives).
    pub today: Spent,
    /// Today's paid calls, each with the running total after it.
    pub steps: Vec<RunningTotal>,
    /// Today's ticks, oldest first.
    pub ticks: Vec<TickCost>,
    /// Today's calls no tick or ask made (recall's rerank).
    pub calls: Vec<PaidCall>,
    /// What could not be read.
    pub problems: Vec<String>,
}

/// The spend of `home` as of `now`.
pub fn spend(home: &Home, now: DateTime<Utc>) -> SpendView {
    let mut problems = Vec::new();
    let budget = Budget::load_or_empty(home);
    let lines = sessions::read(home);
    let all_calls = budget::paid_calls(home);
    let days = (0..DAYS)
        .rev()
        .map(|back| {
            let at = now - Duration::days(back);
            (
                at.date_naive(),
                Spent::on_day(&budget, &lines, &all_calls, at),
            )
        })
        .collect();
    let midnight = now
        .date_naive()
        .and_hms_opt(0, 0, 0)
        .map_or(now, |t| t.and_utc());
    let records = Ledger::since(&home.ticks_path(), midnight).unwrap_or_else(|e| {
        problems.push(format!("{}: {e}", home.ticks_path().display()));
        Vec::new()
    });
    let ticks: Vec<TickCost> = records
        .iter()
        .filter(|r| r.end >= midnight && r.end <= now)
        .map(|r| {
            let sent = r.tokens.sent();
            TickCost {
                tick: r.tick,
                end: r.end,
                cost_usd: r.cost_usd,
                sent,
                cache_share: (sent > 0).then(|| r.tokens.cache_read as f64 / sent as f64),
            }
        })
        .collect();
    let calls: Vec<PaidCall> = all_calls
        .iter()
        .filter(|c| c.time >= midnight && c.time <= now)
        .cloned()
        .collect();
    let asks = lines
        .iter()
        .filter(|l| l.kind == "answer" && l.time >= midnight && l.time <= now && l.cost_usd > 0.0)
        .map(|l| (l.time, "ask".to_string(), l.cost_usd));
    let mut paid: Vec<(DateTime<Utc>, String, f64)> = ticks
        .iter()
        .filter(|t| t.cost_usd > 0.0)
        .map(|t| (t.end, format!("tick {}", t.tick), t.cost_usd))
        .chain(asks)
        .chain(calls.iter().map(|c| (c.time, c.door.clone(), c.cost_usd)))
        .collect();
    paid.sort_by_key(|p| p.0);
    let mut total = 0.0;
    let steps = paid
        .into_iter()
        .map(|(at, by, usd)| {
            total += usd;
            RunningTotal { at, by, total }
        })
        .collect();
    SpendView {
        days,
        today: Spent::on_day(&budget, &lines, &all_calls, now),
        steps,
        ticks,
        calls,
        problems,
    }
}
