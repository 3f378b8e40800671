//! The signals an operator relies on while nobody watches: what the agent
//! spends (the day's total, and a warning when the last hour's rate would
//! reach `[budget] daily_usd` before the day ends).

use chrono::{DateTime, Utc};

use super::{Supervisor, SupervisorError};
use crate::budget::{self, Budget};
use crate::mailbox::outbox::{self, Letter};
use crate::tick::ledger::TickRecord;
use crate::tick::report::TickReport;

impl Supervisor<'_> {
    /// Counts the tick's spend in `state/budget.json`, of which the
    /// supervisor is the only writer (with the day a tick sent the budget
    /// flare for), and warns of the burn rate.
    pub(super) fn record_spend(
        &self,
        record: &TickRecord,
        report: Option<&TickReport>,
    ) -> Result<(), SupervisorError> {
        let flared = report.and_then(|r| r.budget_flared.clone());
        if record.cost_usd <= 0.0 && flared.is_none() {
            return Ok(());
        }
        let mut budget = Budget::load_or_empty(self.home);
        budget.add(record.end, record.cost_usd);
        if flared.is_some() {
            budget.flared = flared;
        }
        self.warn_of_burn(&mut budget, record.end)?;
        budget.save(self.home)?;
        Ok(())
    }

    /// One `budget` flare a day when the last hour's spend, kept up, would
    /// reach `[budget] daily_usd` before the UTC day ends: a warning while
    /// there is still time to act, not only the stop.
    fn warn_of_burn(&self, budget: &mut Budget, now: DateTime<Utc>) -> Result<(), SupervisorError> {
        let today = budget::day(now);
        let daily = self.config.budget.daily_usd;
        if budget.warned.as_deref() == Some(today.as_str()) {
            return Ok(());
        }
        let Some(at) = budget.runs_out_at(daily, now) else {
            return Ok(());
        };
        let body = format!(
            "Spent today (UTC): ${:.2} of [budget] daily_usd = ${daily:.2}. At the last hour's \
             rate the limit is reached at about {} UTC, and ticks are then skipped until the \
             day ends.\n\nTo act now: raise [budget] daily_usd in hearth.toml, lengthen \
             [tick] interval_s, or choose a cheaper [model] model.",
            budget.spent(now),
            at.format("%H:%M")
        );
        let flare = Letter::flare("budget", "the daily budget will run out today", body);
        outbox::post(self.home, &flare, now)?;
        budget.warned = Some(today);
        Ok(())
    }
}
