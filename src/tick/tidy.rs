//! Before the turn: what [`prepare`](super::prepare()) found to set right
//! is done, each thing said — a broken `messages.json` kept beside its
//! restored copy, a heal's note that does not parse set aside, turns moved
//! to an archive (those that carry outside words, when the tick is the
//! operator's; the oldest, when the history is over its budget).

use crate::mailbox::cause::Cause;
use chrono::{DateTime, Utc};

use super::healer_note::HealerNote;
use super::Prepared;
use crate::conversation::archive as history;
use crate::conversation::store::Broken;
use crate::exchange::ExchangeError;
use crate::home::layout::rel;
use crate::home::Home;
use crate::io_hint::IoError;
use crate::mailbox::outbox::{self, Letter};

/// Does what `prepared` found to set right, before the write-ahead.
pub(super) fn before_the_turn(
    home: &Home,
    prepared: &Prepared,
    now: DateTime<Utc>,
) -> Result<(), ExchangeError> {
    for problem in &prepared.problems {
        tracing::warn!("{problem}");
    }
    for note in prepared.inbox.iter().flat_map(|m| &m.notes) {
        tracing::warn!("{note}");
    }
    if let Some(broken) = &prepared.broken {
        keep_broken(home, broken, now)?;
    }
    if let Some(problem) = &prepared.broken_note {
        set_note_aside(home, problem, now)?;
    }
    if let Some((quarantine, moved)) = &prepared.quarantine {
        history::write_archive(home, quarantine, moved.clone(), now)?;
        tracing::info!(
            "moved {} turns that carry outside words to {} (this tick is the operator's)",
            quarantine.count,
            quarantine.archive
        );
    }
    if let Some((compaction, archived)) = &prepared.compaction {
        history::write_archive(home, compaction, archived.clone(), now)?;
        tracing::info!(
            "moved {} old messages to {}",
            compaction.count,
            compaction.archive
        );
    }
    Ok(())
}

/// Keeps a broken `messages.json` beside the restored one and flares.
fn keep_broken(home: &Home, broken: &Broken, now: DateTime<Utc>) -> Result<(), ExchangeError> {
    let kept_at = broken.keep(home, now)?;
    tracing::warn!("{}; kept the broken file at {kept_at}", broken.problem);
    let restored = match &broken.restored_from {
        Some(commit) => format!("It was restored from commit {commit}."),
        None => "No committed copy parsed, so the conversation starts empty.".into(),
    };
    let body = format!(
        "{}\n\n{restored} The broken file is kept at {kept_at}; nothing was deleted.",
        broken.problem
    );
    let title = format!("{} did not parse", rel::MESSAGES);
    let flare = Letter::flare(Cause::State, &title, body);
    outbox::post(home, &flare, now)?;
    Ok(())
}

/// A heal's note that does not parse: kept beside it, and the operator told
/// (the agent misses what the heal would have said; the operator need not).
fn set_note_aside(home: &Home, problem: &str, now: DateTime<Utc>) -> Result<(), ExchangeError> {
    let kept = HealerNote::set_aside(home, now).map_err(|e| {
        ExchangeError::Io(IoError::doing(
            format!("could not move the broken {problem} aside"),
            e,
        ))
    })?;
    tracing::warn!("{problem}; moved it to {kept}");
    let body = format!(
        "{problem}\n\nThe note a heal leaves for the next tick did not parse, so the agent \
         was not told about the heal this time. The file was moved to {kept} (nothing was \
         deleted); see `git log -- state/` for the heal itself.\n"
    );
    let title = format!("{} did not parse", rel::HEALER_NOTE);
    let flare = Letter::flare(Cause::State, &title, body);
    outbox::post(home, &flare, now)?;
    Ok(())
}
