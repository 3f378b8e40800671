//! The write-ahead, the phase between preparing a tick and calling the
//! model: what is asked is on disk before any model sees it, and only then
//! do the messages leave the inbox and the heal's note go (it is in the
//! conversation now: consumed once, even if the tick fails). Each step is
//! on the report first, so a tick killed at any point leaves its
//! supervisor able to commit it as it was, outside content and all, and to
//! give the messages back.

use super::healer_note::HealerNote;
use super::hooks::TestHooks;
use super::Prepared;
use crate::conversation::store::Conversation;
use crate::conversation::Message;
use crate::exchange::report::TickReport;
use crate::exchange::ExchangeError;
use crate::home::Home;
use crate::mailbox::inbox::{self, InboxMessage};
use crate::tools::Offered;

/// A tick's turn once it is on disk: what the exchange continues.
pub(super) struct Written {
    /// The conversation, this tick's turn last (saved).
    pub conversation: Conversation,
    /// What settling after the exchange needs.
    pub left: Left,
    /// The outside sources it carries.
    pub outside: crate::outside::Outside,
    /// The operator's tools, for the exchange.
    pub offered: Offered,
    /// The collaboration whose handoffs it reads.
    pub collaboration: Option<String>,
}

/// What a tick's turn leaves for settling after its exchange.
pub(super) struct Left {
    /// The turn asked: still the last message after the exchange means
    /// the model kept nothing.
    pub asked: Option<Message>,
    /// The inbox messages it answers, archived now.
    pub messages: Vec<InboxMessage>,
    /// The heal's note it carries, consumed now.
    pub healer_note: Option<HealerNote>,
}

/// Writes `prepared`'s turn ahead of the model, recording each step on
/// `report` before it is taken.
pub(super) fn write_ahead(
    home: &Home,
    prepared: Prepared,
    hooks: &TestHooks,
    report: &mut TickReport,
) -> Result<Written, ExchangeError> {
    let Prepared {
        mut conversation,
        offered,
        inbox: messages,
        healer_note,
        collaboration,
        outside,
        ..
    } = prepared;
    // Its outside sources are on the report before anything else is
    // written: a tick killed at any point is committed as outside.
    report.outcome.effects.outside = outside.clone();
    if let Some(turn) = conversation.messages.last_mut() {
        turn.outside = outside.clone();
    }
    conversation.save(home)?;
    // The reduced-context recovery may archive older turns meanwhile, so
    // the turn itself is kept to compare with, not its position.
    let asked = conversation.messages.last().cloned();
    if healer_note.is_some() {
        HealerNote::consume(home);
    }
    for message in &messages {
        let to = inbox::archive_path(home, &message.rel);
        report.consumed.push((message.rel.clone(), to.clone()));
        report.save(home)?;
        inbox::archive_to(home, &message.rel, &to)?;
    }
    report.save(home)?;
    if let Some(pause) = hooks.pause_after_write_ahead(report.tick) {
        std::thread::sleep(pause);
    }
    Ok(Written {
        conversation,
        left: Left {
            asked,
            messages,
            healer_note,
        },
        outside,
        offered,
        collaboration,
    })
}
