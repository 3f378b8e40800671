//! One exchange with the agent, under both doors (DESIGN 3, 10): a tick
//! (`tick/`, its user turn the inbox) and an ask (`ask/`, its user turn the
//! operator's question). What an exchange is — the budget gate, the tier
//! table both doors render their user turn from, the tool loop with its
//! pure step and its recoveries, the report, the classes of failure, what
//! it costs — lives here, once; the doors decide only what differs: where
//! the turn comes from, where its record is written, what is streamed.
//!
//! [`step`] decides, from plain values, what follows each model turn;
//! [`driver`] performs those decisions (model calls, tool dispatch,
//! persistence through the door).

pub mod claims;
pub mod class;
pub mod door;
pub mod driver;
pub mod fit;
pub mod give_back;
pub mod outcome;
pub mod record;
pub mod report;
pub mod run;
pub mod step;
pub mod tier;

use chrono::{DateTime, Utc};

use crate::config::Price;
use crate::conversation::sessions;
use crate::conversation::store::ConversationError;
use crate::home::Home;
use crate::io_hint::IoError;
use crate::model::Usage;

/// Why an exchange could not run or record itself (not a failure of the
/// agent's): a write, the inbox or outbox, the conversation file, git.
#[derive(Debug, thiserror::Error)]
pub enum ExchangeError {
    /// `messages.json` could not be read or written.
    #[error(transparent)]
    Conversation(#[from] ConversationError),
    /// A state file could not be written.
    #[error(transparent)]
    Write(#[from] crate::atomic::WriteError),
    /// The inbox or outbox failed.
    #[error(transparent)]
    Mailbox(#[from] crate::mailbox::MailboxError),
    /// A lock (the ask's, the commit's) could not be taken.
    #[error(transparent)]
    Lock(#[from] crate::home::lock::LockError),
    /// git failed (the ask's commit).
    #[error(transparent)]
    Repo(#[from] crate::repo::RepoError),
    /// Another file operation failed.
    #[error(transparent)]
    Io(#[from] IoError),
}

impl ExchangeError {
    /// What to do about it.
    pub fn hint(&self) -> String {
        match self {
            ExchangeError::Conversation(e) => e.hint(),
            ExchangeError::Write(e) => e.hint(),
            ExchangeError::Mailbox(e) => e.hint(),
            ExchangeError::Lock(e) => e.hint(),
            ExchangeError::Repo(e) => e.hint(),
            ExchangeError::Io(e) => e.hint(),
        }
    }
}

/// What the day has cost so far (UTC), by either door: the ticks' spend
/// in `state/budget.json` and the asks' on their answer lines. The one
/// definition the budget gate, the burn-rate warning and `status` use.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
pub struct SpentToday {
    /// Dollars the ticks spent.
    pub ticks: f64,
    /// Dollars the asks spent (with their warm digests' calls).
    pub asks: f64,
    /// Dollars the other calls spent (recall's rerank from the shell).
    pub calls: f64,
}

impl SpentToday {
    /// Reads both records for `now`'s UTC day.
    pub fn of(home: &Home, now: DateTime<Utc>) -> SpentToday {
        SpentToday::with(&crate::budget::Budget::load_or_empty(home), home, now)
    }

    /// With the ticks' spend as `budget` holds it (the supervisor's, just
    /// updated and not saved yet).
    pub fn with(budget: &crate::budget::Budget, home: &Home, now: DateTime<Utc>) -> SpentToday {
        SpentToday {
            ticks: budget.spent(now),
            asks: sessions::asked_spend(&sessions::read(home), now),
            calls: crate::budget::calls_spent(home, now).today,
        }
    }

    /// What the asks spent today and in the last hour (for the burn rate).
    pub fn asks_of(home: &Home, now: DateTime<Utc>) -> crate::budget::AskSpend {
        let lines = sessions::read(home);
        let calls = crate::budget::calls_spent(home, now);
        crate::budget::AskSpend {
            today: sessions::asked_spend(&lines, now) + calls.today,
            last_hour: sessions::asked_spend_since(&lines, now - chrono::Duration::hours(1))
                + calls.last_hour,
        }
    }

    /// Every door together.
    pub fn total(&self) -> f64 {
        self.ticks + self.asks + self.calls
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

/// Dollars for `usage` at `price`; a model without a price costs zero.
/// Writes are priced by their lifetime.
pub fn cost_usd(usage: &Usage, price: Option<&Price>) -> f64 {
    usage.cost_usd(price)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_gate_counts_every_door_and_zero_is_no_limit() {
        let spent = SpentToday {
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
        assert!(SpentToday {
            ticks: 1.0,
            asks: 0.0,
            calls: 0.0,
        }
        .over(1.0)
        .is_some());
    }
}
