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
pub mod ledger;
pub mod outcome;
pub mod paid;
pub mod record;
pub mod report;
pub mod run;
pub mod spent;
pub mod step;
pub mod tier;
pub mod turn;

use crate::config::Price;
use crate::conversation::store::ConversationError;
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

/// Dollars for `usage` at `price`; a model without a price costs zero.
/// Writes are priced by their lifetime.
pub fn cost_usd(usage: &Usage, price: Option<&Price>) -> f64 {
    usage.cost_usd(price)
}

pub use spent::Spent;
