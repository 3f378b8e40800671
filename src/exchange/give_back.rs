//! The one rule for giving a tick's inbox messages back to `inbox/`,
//! presented again as new to the next tick. A message the agent read is
//! archived as consumed; it goes back only when no answer to it can have
//! been made, and never twice. The rule is asked at four moments, by three
//! layers, and decided here, over plain values:
//!
//! - as the tick settles its own exchange (`tick/settle.rs`): the model
//!   was never reached, or the conversation did not fit, and nothing of the
//!   turn was kept — the tick only asked;
//! - as the supervisor records a tick that ended (`supervisor/record.rs`):
//!   it crashed, ran out of time, was stopped, or lost the model midway —
//!   it did not finish answering. Its ledger line then forgets the
//!   messages, so a heal does not give them back a second time;
//! - as the healer restores the state from before a failed streak
//!   (`healer/`): the conversation that read them is taken back, so the
//!   messages each failed tick still lists go back with it;
//! - as the healer stops in panic (`healer/`): no heal will answer them,
//!   so the messages the failed ticks read wait in the inbox for the
//!   human who fixes the cause.
//!
//! Each answer says why, and the caller says it: in the log, the heal and
//! panic flares.
//!
//! Moving the files is `mailbox::inbox::give_back`, also once.

use super::class::{Class, FailureKind};
use super::report::TickReport;

/// When the rule is asked, with what it decides on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Moment<'a> {
    /// The tick settles its exchange.
    Settling {
        /// The tick's report.
        report: &'a TickReport,
        /// No turn of the model's was kept in the conversation.
        nothing_kept: bool,
    },
    /// The supervisor records a tick that ended.
    Ended {
        /// Its class.
        class: Class,
        /// It was stopped by a signal or ran out of time.
        interrupted: bool,
        /// The model API went away during it.
        outage: bool,
    },
    /// A heal takes the conversation back to before the streak; a failed
    /// tick of it lists the message.
    Healed {
        /// The message is still where the tick archived it (not given
        /// back already, not moved by hand).
        archived: bool,
    },
    /// The healer stops in panic; a failed tick of the streak lists the
    /// message.
    Panicked {
        /// The message is still where the tick archived it.
        archived: bool,
    },
}

/// Why the messages go back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    /// The tick only asked: the model was not reached, or the
    /// conversation did not fit its context.
    NeverAnswered,
    /// The tick did not finish answering.
    Unfinished,
    /// The conversation that read them was healed away.
    Healed,
    /// Healing stopped: they wait for the human who fixes the cause.
    Panicked,
}

impl std::fmt::Display for Reason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Reason::NeverAnswered => "the model never answered it",
            Reason::Unfinished => "its tick did not finish",
            Reason::Healed => "the conversation that read it was healed away",
            Reason::Panicked => "healing stopped before it was answered",
        })
    }
}

/// Whether the messages a tick consumed go back to `inbox/` at `moment`,
/// and why; `None`: they stay consumed (the tick answered, or failed
/// after acting on them, or they are no longer where it archived them).
pub fn rule(moment: Moment<'_>) -> Option<Reason> {
    match moment {
        Moment::Settling {
            report,
            nothing_kept,
        } => {
            // The API was never reached, or refused a setting (the key,
            // the model): the messages wait for a tick that can answer.
            let never_reached = report
                .outcome
                .failures
                .iter()
                .all(|f| f.outage || f.fix.is_some());
            (only_asked(report, nothing_kept) && (never_reached || too_long(report)))
                .then_some(Reason::NeverAnswered)
        }
        Moment::Ended {
            class,
            interrupted,
            outage,
        } => (class == Class::Crash || interrupted || outage).then_some(Reason::Unfinished),
        Moment::Healed { archived } => archived.then_some(Reason::Healed),
        Moment::Panicked { archived } => archived.then_some(Reason::Panicked),
    }
}

/// The tick failed before it did anything: no turn kept, no file touched,
/// nothing sent.
pub fn only_asked(report: &TickReport, nothing_kept: bool) -> bool {
    nothing_kept
        && !report.outcome.failures.is_empty()
        && report.outcome.effects.touched.is_empty()
        && report.outcome.effects.sent.is_empty()
}

/// The conversation did not fit the model's context window.
pub fn too_long(report: &TickReport) -> bool {
    report
        .outcome
        .failures
        .first()
        .is_some_and(|f| f.kind == FailureKind::Context)
}

#[cfg(test)]
#[path = "give_back_tests.rs"]
mod tests;
