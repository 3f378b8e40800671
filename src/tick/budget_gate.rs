//! The budget gate, the tick's first phase: a day whose budget is spent
//! skips the tick before it touches the inbox or the conversation, and
//! says so once per UTC day.

use crate::mailbox::cause::Cause;
use chrono::{DateTime, Utc};

use super::spend;
use crate::budget::Budget;
use crate::config::Config;
use crate::exchange::report::TickReport;
use crate::exchange::{ExchangeError, Spent};
use crate::home::Home;
use crate::mailbox::outbox::{self, Letter};

/// Whether tick `report.tick` is skipped for the budget: the reason is on
/// its report (saved), with the day it flared if it is the day's first.
pub(super) fn skips(
    home: &Home,
    config: &Config,
    report: &mut TickReport,
    now: DateTime<Utc>,
) -> Result<bool, ExchangeError> {
    let budget = Budget::load_or_empty(home);
    let Some(reason) = Spent::today_with(
        &budget,
        &crate::conversation::tail::of_home_since(
            home,
            crate::conversation::sessions::day_start(now),
        ),
        home,
        now,
    )
    .over(config.budget.daily_usd) else {
        return Ok(false);
    };
    tracing::warn!("tick {} skipped: {reason}", report.tick);
    // One stop flare a day, whether or not a warning came earlier: the
    // warning said when; this says it happened, and what it changes.
    if !budget.stopped_today(now) {
        let split = spend::today(home, config.price().as_ref(), now)
            .map(|s| format!(" {}.", s.breakdown()))
            .unwrap_or_default();
        let body = format!(
            "{reason}.{split}\n\nTicks are skipped (exit 3) until the next UTC day; inbox messages wait. \
             Raise [budget] daily_usd in hearth.toml to resume sooner (0 = no limit).\n"
        );
        let mut flare = Letter::flare(Cause::Budget, "the daily budget is spent", body);
        flare.tick = Some(report.tick);
        outbox::post(home, &flare, now)?;
        report.budget_flared = Some(crate::budget::day(now));
    }
    report.skipped = Some(reason);
    report.save(home)?;
    Ok(true)
}
