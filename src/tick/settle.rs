//! After the model, the tick's last phase: what its exchange leaves behind.
//! A tick that only asked (the model unreachable, or the server refusing
//! the request as too long) gives its turn and its messages back; an
//! answer given in text rather than with `send` is delivered; what it was
//! asked and said joins the sessions, for `hearth ask`'s hot memory.

use crate::mailbox::cause::Cause;
use chrono::{DateTime, Utc};

use super::healer_note::HealerNote;
use super::write_ahead::Left;
use crate::config::Config;
use crate::conversation::store::Conversation;
use crate::exchange::give_back::{self, Moment};
use crate::exchange::report::TickReport;
use crate::exchange::ExchangeError;
use crate::home::Home;
use crate::mailbox::inbox;
use crate::mailbox::outbox::{self, Letter};

/// Settles the exchange: gives back what a tick that only asked consumed
/// (an outage; a server's word that the request does not fit its window,
/// which is also flared once, as hearth's own estimate would be), delivers
/// an answer given in text, and records the exchange.
pub(super) fn settle(
    home: &Home,
    config: &Config,
    conversation: &mut Conversation,
    left: &Left,
    report: &mut TickReport,
    now: DateTime<Utc>,
) -> Result<(), ExchangeError> {
    let nothing_kept = conversation.messages.last() == left.asked.as_ref();
    let too_long = give_back::only_asked(report, nothing_kept) && give_back::too_long(report);
    let settling = Moment::Settling {
        report,
        nothing_kept,
    };
    if let Some(why) = give_back::rule(settling) {
        give_back(home, conversation, left.healer_note.as_ref(), report, why)?;
    }
    if too_long {
        flare_too_long(home, report, config, now)?;
    }
    deliver_a_plain_answer(home, report, now)?;
    sign_the_letters(home, report)?;
    if !report.consumed.is_empty() || !report.outcome.effects.sent.is_empty() {
        record_exchange(home, report, &left.messages, now)?;
    }
    Ok(())
}

/// A tick that read inbox messages and answered them in its reply text,
/// without `send` (small local models rarely call tools; large ones
/// sometimes answer in text too): the answer would live only in
/// `messages.json`, so hearth delivers it to `outbox/` as the agent wrote
/// it, saying so. A tick that failed is left alone (its messages may go
/// back to the inbox); one that said nothing at all is quiet, and flared.
fn deliver_a_plain_answer(
    home: &Home,
    report: &mut TickReport,
    now: DateTime<Utc>,
) -> Result<(), ExchangeError> {
    let answer = report.outcome.reply.trim();
    if report.consumed.is_empty()
        || !report.outcome.effects.sent.is_empty()
        || !report.outcome.failures.is_empty()
        || answer.is_empty()
    {
        return Ok(());
    }
    let answered: Vec<&str> = report
        .consumed
        .iter()
        .map(|(rel, _)| rel.as_str())
        .collect();
    let body = format!(
        "{answer}\n\n---\n_The agent answered in its reply rather than with `send`; hearth \
         delivered it as written. It answers {}._\n",
        answered.join(", ")
    );
    let letter = Letter {
        kind: outbox::Kind::Message,
        subject: "A reply from your agent".into(),
        body,
        tick: Some(report.tick),
        in_reply_to: answered.first().map(|r| r.to_string()),
        about: None,
    };
    let rel = outbox::post(home, &letter, now)?;
    tracing::info!("the agent answered in text without `send`: delivered it as {rel}");
    report.outcome.effects.sent.push(rel);
    Ok(())
}

/// Ends each letter the tick sent the operator with what hearth saw it do,
/// and any claim of its reply without evidence (`exchange::claims`): the
/// operator reads the agent's words beside hearth's, never the words
/// alone.
fn sign_the_letters(home: &Home, report: &TickReport) -> Result<(), ExchangeError> {
    let effects = &report.outcome.effects;
    if effects.sent.is_empty() {
        return Ok(());
    }
    let unbacked = crate::exchange::claims::unbacked(&report.outcome.reply, effects);
    let line = crate::exchange::claims::seen_line(effects, &unbacked);
    for rel in &effects.sent {
        let path = home.path(rel);
        let Ok(mut text) = std::fs::read_to_string(&path) else {
            continue;
        };
        if !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&format!("\n---\n_{line}._\n"));
        crate::atomic::write(&path, text.as_bytes())?;
    }
    Ok(())
}

/// One `context` flare until the operator reads it.
fn flare_too_long(
    home: &Home,
    report: &TickReport,
    config: &Config,
    now: DateTime<Utc>,
) -> Result<(), ExchangeError> {
    let unread = crate::mailbox::flares::list(home)
        .into_iter()
        .any(|f| f.cause() == Cause::Context && !f.read);
    if unread {
        return Ok(());
    }
    let said = report
        .outcome
        .failures
        .first()
        .map(|f| f.detail.clone())
        .unwrap_or_default();
    let window = config.context_window();
    let body = format!(
        "The model's server refused the request as longer than its context window: {said}\n\n\
         hearth estimated it would fit [model] context_tokens = {window}; the server's window \
         is smaller. Set [model] context_tokens to the window the server really has (llama.cpp: \
         its --ctx-size), or serve the model with a larger one. No inbox message was consumed; \
         they wait for a tick that fits.\n"
    );
    let mut flare = Letter::flare(
        Cause::Context,
        "the request does not fit the server's context window",
        body,
    );
    flare.tick = Some(report.tick);
    outbox::post(home, &flare, now)?;
    Ok(())
}

/// Undoes the asking of a tick the model never answered: its user turn
/// leaves `messages.json` (no empty turns piling up through an outage), its
/// inbox messages go back to `inbox/` and the healer's note back to
/// `state/`, so the next tick presents them again, as new.
fn give_back(
    home: &Home,
    conversation: &mut Conversation,
    healer_note: Option<&HealerNote>,
    report: &mut TickReport,
    why: give_back::Reason,
) -> Result<(), ExchangeError> {
    conversation.messages.pop();
    conversation.save(home)?;
    let consumed = std::mem::take(&mut report.consumed);
    for back in inbox::give_back(home, consumed.iter().map(|(_, a)| a.as_str()))? {
        tracing::info!("{back} waits for the next tick: {why}");
    }
    if let Some(note) = healer_note {
        note.write(home)?;
    }
    report.save(home)?;
    Ok(())
}

/// Who a message read was from, when not the operator (one the tick
/// did not judge is outside).
fn outside_label(message: Option<&inbox::InboxMessage>) -> Option<String> {
    match message.map(|m| &m.sender) {
        Some(inbox::Sender::Operator) => None,
        Some(inbox::Sender::Outside { label, .. }) => Some(label.clone()),
        Some(inbox::Sender::Unjudged) | None => Some("sender not judged".into()),
    }
}

/// What this tick was asked and said, for `hearth ask`'s hot memory (one
/// agent, two doors): the inbox, the reply, and every tool call in
/// readable form (a `send`'s body in full).
fn record_exchange(
    home: &Home,
    report: &TickReport,
    inbox: &[inbox::InboxMessage],
    now: DateTime<Utc>,
) -> Result<(), ExchangeError> {
    use crate::conversation::sessions;
    let asked: Vec<&str> = inbox.iter().map(|m| m.text.trim()).collect();
    let line = sessions::Line {
        v: sessions::VERSION,
        id: format!("tick-{}", report.tick),
        time: now,
        kind: "tick".into(),
        asked: asked.join("\n\n"),
        said: crate::exchange::record::said(&report.outcome.reply, &report.outcome.actions),
        outside: report.outcome.effects.outside.clone(),
        read: report
            .consumed
            .iter()
            .map(|(rel, archived)| sessions::ReadMessage {
                rel: rel.clone(),
                archived: archived.clone(),
                outside: outside_label(inbox.iter().find(|m| m.rel == *rel)),
            })
            .collect(),
        letters: report.outcome.effects.sent.clone(),
        ..Default::default()
    };
    sessions::append(home, &line)?;
    Ok(())
}
