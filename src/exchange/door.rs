//! The door an exchange runs under: where its record goes as it happens
//! ([`Record`]), where its text streams, and when the next exchange reads
//! its prefix (the cache lifetime its requests ask for). The tick, the ask
//! and a consolidation each open one; the driver (`driver.rs`) only says
//! what happened.

use std::time::Duration;

use chrono::{DateTime, Utc};

use super::outcome::Outcome;
use super::report::TickReport;
use super::ExchangeError;
use crate::conversation::store::Conversation;
use crate::home::Home;
use crate::model::cache::{self, Lifetime};
use crate::tools;

/// The door's record of an exchange, written as it happens: the driver
/// says what happened, the door writes what it keeps — a tick every kept
/// turn in `state/messages.json` and its report ([`TickFiles`]), an ask
/// its journal after each call (`ask/`), a consolidation nothing
/// ([`Unrecorded`]: its outcome is its proposal).
pub trait Record {
    /// The model answered and is paid for: the report holds the usage and
    /// cost so far (on disk now, a tick killed at its time limit still
    /// records and budgets what it spent).
    fn paid(&mut self, _outcome: &Outcome) -> Result<(), ExchangeError> {
        Ok(())
    }

    /// The model's turn joined the conversation.
    fn kept(&mut self, _conversation: &Conversation) -> Result<(), ExchangeError> {
        Ok(())
    }

    /// A turn's calls were answered: their results are the conversation's
    /// newest turn, and the report holds what they did.
    fn answered(
        &mut self,
        _conversation: &Conversation,
        _outcome: &Outcome,
    ) -> Result<(), ExchangeError> {
        Ok(())
    }

    /// A tool call ran: what the exchange has written and spent so far.
    fn called(&mut self, _outcome: &Outcome, _effects: &tools::Effects) {}

    /// Whether the conversation is the door's own, to shorten by archiving
    /// its oldest turns when it overflows the model's context.
    fn owns_conversation(&self) -> bool {
        false
    }
}

/// A tick's record: its conversation is `state/messages.json` and its
/// report `.hearth/`'s, each written as it changes (the report with the
/// exchange's outcome so far in it).
pub struct TickFiles<'a> {
    home: &'a Home,
    report: &'a mut TickReport,
    /// How many sources of outside content the report on disk names.
    tainted_saved: usize,
    /// Where each paid call's spend goes first, in blocks taken now
    /// ([`super::paid`]): a full disk cannot lose it.
    paid: Option<super::paid::PaidSlot>,
}

impl<'a> TickFiles<'a> {
    /// The record of a tick in `home`, written into its `report`.
    pub fn new(home: &'a Home, report: &'a mut TickReport) -> TickFiles<'a> {
        let paid = super::paid::PaidSlot::reserve(home, report.tick)
            .map_err(|e| {
                tracing::warn!(
                    "{}: {e}; a paid call's spend is kept in the report alone",
                    super::paid::FILE
                )
            })
            .ok();
        TickFiles {
            home,
            report,
            tainted_saved: 0,
            paid,
        }
    }

    fn save(&mut self, outcome: &Outcome) -> Result<(), ExchangeError> {
        self.report.outcome = outcome.clone();
        Ok(self.report.save(self.home)?)
    }
}

impl Record for TickFiles<'_> {
    fn paid(&mut self, outcome: &Outcome) -> Result<(), ExchangeError> {
        if let Some(slot) = &mut self.paid {
            if let Err(e) = slot.write(outcome.calls, outcome.usage, outcome.cost_usd) {
                tracing::warn!("{}: {e}", super::paid::FILE);
            }
        }
        self.save(outcome)
    }

    /// A call that brought outside content in is on disk before the next
    /// one can write: a tick killed after it is still committed as
    /// outside (its report says what it read).
    fn called(&mut self, outcome: &Outcome, effects: &tools::Effects) {
        if effects.outside.len() <= self.tainted_saved {
            return;
        }
        let mut now = outcome.clone();
        now.effects = effects.clone();
        match self.save(&now) {
            Ok(()) => self.tainted_saved = effects.outside.len(),
            Err(e) => tracing::warn!("the tick's report could not be saved: {e}"),
        }
    }

    fn kept(&mut self, conversation: &Conversation) -> Result<(), ExchangeError> {
        Ok(conversation.save(self.home)?)
    }

    fn answered(
        &mut self,
        conversation: &Conversation,
        outcome: &Outcome,
    ) -> Result<(), ExchangeError> {
        conversation.save(self.home)?;
        self.save(outcome)
    }

    fn owns_conversation(&self) -> bool {
        true
    }
}

/// An exchange that keeps no record as it goes.
pub struct Unrecorded;

impl Record for Unrecorded {}

/// Which door the loop serves: where its record goes, where its text
/// streams, when the next exchange reads its prefix.
pub struct Door<'a> {
    /// The door's record, written as the exchange goes.
    pub record: &'a mut dyn Record,
    /// Receives the model's text as it streams in.
    pub on_text: &'a mut dyn FnMut(&str),
    /// When the next request that shares this conversation's prefix is
    /// expected after this exchange ends: the next tick, for a tick; none
    /// for an ask, whose conversation no later exchange sends again.
    pub next_exchange_in: Option<Duration>,
    /// The home's key for the provider's cache routing.
    pub cache_key: Option<&'a str>,
    /// The most the exchange may spend: once its calls cost this much, it
    /// stops before the next (a job's `max_usd`).
    pub spend_cap_usd: Option<f64>,
}

impl Door<'_> {
    /// How long the prefix of the next request should stay cached, after
    /// `rounds` rounds of tool calls in this exchange (a `sleep` the agent
    /// asked for defers the next tick, so it may outlive every lifetime).
    pub(super) fn cache_lifetime(
        &self,
        rounds: usize,
        effects: &tools::Effects,
        now: DateTime<Utc>,
    ) -> Option<Lifetime> {
        let slept = effects
            .sleep_until
            .and_then(|until| (until - now).to_std().ok());
        let next = match (self.next_exchange_in, slept) {
            (Some(wait), Some(slept)) => cache::lifetime_for(wait.max(slept)),
            (Some(wait), None) => cache::lifetime_for(wait),
            (None, _) => None,
        };
        cache::for_request(next, rounds)
    }
}
