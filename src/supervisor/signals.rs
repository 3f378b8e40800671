//! The signals an operator relies on while nobody watches: what the agent
//! spends (the day's total, and a warning when the last hour's rate would
//! reach `[budget] daily_usd` before the day ends), an outage that lasts,
//! and a setting the model API refuses (flared at once, with the fix).

use crate::mailbox::cause::Cause;
use chrono::{DateTime, Utc};

use super::{Supervisor, SupervisorError};
use crate::budget::{self, Budget};
use crate::exchange::ledger::TickRecord;
use crate::exchange::report::TickReport;
use crate::healer::outage::{self, OutageNews};
use crate::mailbox::outbox::{self, Letter};

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
        let skipped = report.is_some_and(|r| r.skipped.is_some());
        let mut budget = Budget::load_or_empty(self.home);
        if budget.counted_through.is_some_and(|t| t >= record.tick) {
            return Ok(()); // counted already, before a cut
        }
        let resumed = budget.resumes(record.end).filter(|_| !skipped);
        if record.cost_usd <= 0.0 && flared.is_none() && resumed.is_none() {
            return Ok(());
        }
        budget.counted_through = Some(record.tick);
        if let Some(day) = resumed {
            tracing::warn!(
                "tick {} ran: spending resumed after the daily budget stopped ticks on {day}",
                record.tick
            );
            budget.resumed = Some(day);
        }
        budget.add_tick(record.start, record.end, record.cost_usd);
        if flared.is_some() {
            budget.flared = flared;
        }
        self.warn_of_burn(&mut budget, record.end)?;
        budget.save(self.home)?;
        Ok(())
    }

    /// One `budget` warning a day when the last hour's rate of spend, kept
    /// up, would reach `[budget] daily_usd` before the UTC day ends: while
    /// there is still time to act (none once the stop itself has been
    /// flared today; the stop is flared whether or not a warning came).
    fn warn_of_burn(&self, budget: &mut Budget, now: DateTime<Utc>) -> Result<(), SupervisorError> {
        let today = budget::day(now);
        let daily = self.config.budget.daily_usd;
        if budget.warned_today(now) {
            return Ok(());
        }
        let asks = crate::exchange::Spent::asks_and_calls(self.home, now);
        let interval = chrono::Duration::seconds(self.config.tick.interval_s as i64);
        let Some(at) = budget.runs_out_at(daily, asks, interval, now) else {
            return Ok(());
        };
        let split = crate::tick::spend::today(self.home, self.config.price().as_ref(), now)
            .map(|s| format!(" {}.", s.breakdown()))
            .unwrap_or_default();
        let body = format!(
            "Spent today (UTC): ${:.2} of [budget] daily_usd = ${daily:.2}. At the last hour's \
             rate the limit is reached at about {} UTC, and ticks are then skipped until the \
             day ends.{split}\n\nTo act now: raise [budget] daily_usd in hearth.toml, lengthen \
             [tick] interval_s, or choose a cheaper [model] model.",
            budget.spent(now) + asks.today,
            at.format("%H:%M")
        );
        let flare = Letter::flare(Cause::Budget, "the daily budget will run out today", body);
        outbox::post(self.home, &flare, now)?;
        budget.warned = Some(today);
        Ok(())
    }

    /// After the healer counted `record`: one `outage` flare when the model
    /// API has failed for `[healer] outage_flare_min`, one log line when it
    /// is back; and one `model` flare, at once, for a setting it refuses.
    pub(super) fn speak_of_the_model_api(
        &mut self,
        record: &TickRecord,
        report: Option<&TickReport>,
    ) -> Result<(), SupervisorError> {
        let now = self.options.clock.now();
        let after = chrono::Duration::minutes(self.config.healer.outage_flare_min as i64);
        let fix = report.and_then(|r| r.outcome.failures.iter().find(|f| f.fix.is_some()));
        match outage::track(&mut self.healer.outage, record, after, now) {
            OutageNews::Quiet => {}
            // A setting said so at once (below): no second flare that
            // calls it an outage.
            OutageNews::Flare(_) if fix.is_some() => {}
            OutageNews::Flare(o) => {
                let body = format!(
                    "The model API has not answered since {} ({} ticks). The last error:\n\n    \
                     {}\n\nNothing is lost: inbox messages wait in inbox/ and are answered when \
                     it is back, and these ticks do not count toward a heal. If it lasts, check \
                     the provider's status page, the network, and [model] base_url.",
                    o.since.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
                    o.ticks,
                    o.last_error
                );
                let mut flare = Letter::flare(Cause::Outage, "the model API is unreachable", body);
                flare.tick = Some(record.tick);
                let rel = outbox::post(self.home, &flare, now)?;
                tracing::error!("flare: {rel}");
            }
            OutageNews::Over(o) => tracing::warn!(
                "the model API answers again, after an outage since {} ({} failed ticks)",
                o.since.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
                o.ticks
            ),
        }
        match fix {
            Some(f) if self.healer.misconfigured.as_deref() != Some(f.detail.as_str()) => {
                // No request was sent without a key: the API refused
                // nothing, and the ticks wait rather than heal.
                let (title, consequence) = if f.outage {
                    (
                        "the model's API key is missing",
                        "No request was sent. This is a setting, not an outage of the API: no \
                         heal runs for it, and inbox messages wait in inbox/ until it is fixed",
                    )
                } else {
                    (
                        "the model API refuses hearth's settings",
                        "This is a setting, not an outage: a heal, which restores the \
                         conversation, would not fix it, so none runs for it. Ticks wait, \
                         trying again with backoff, and inbox messages wait in inbox/; \
                         ticking resumes by itself once it works (hearth.toml is read at \
                         each try; a key in the environment needs a restart)",
                    )
                };
                let body = format!(
                    "Tick {} could not use the model:\n\n    {}\n\n{consequence}. To fix: {}.",
                    record.tick,
                    f.detail,
                    f.fix.as_deref().unwrap_or_default()
                );
                let mut flare = Letter::flare(Cause::Model, title, body);
                flare.tick = Some(record.tick);
                let rel = outbox::post(self.home, &flare, now)?;
                tracing::error!("flare: {rel}");
                self.healer.misconfigured = Some(f.detail.clone());
            }
            Some(_) => {}
            None if record.class == crate::exchange::class::Class::Ok => {
                self.healer.misconfigured = None;
            }
            None => {}
        }
        Ok(())
    }
}
