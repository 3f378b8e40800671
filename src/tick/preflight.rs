//! What must hold before the model is called, checked with nothing yet
//! consumed: the request fits the model's context window (or the history
//! gives way), the brake's required files exist, the operator's tools parse
//! and are trusted. What does not hold is named in the log and flared once.
//! The brake's gate for the tick is opened here too.

use crate::mailbox::cause::Cause;
use chrono::{DateTime, Utc};

use super::prepare::Prepared;
use crate::brake::gate::Gate;
use crate::brake::required::required;
use crate::config::{BrakeMode, Config};
use crate::conversation::archive as history;
use crate::exchange::class::{self, Failure};
use crate::exchange::fit;
use crate::exchange::report::TickReport;
use crate::exchange::ExchangeError;
use crate::home::Home;
use crate::io_hint::IoError;
use crate::mailbox::outbox::{self, Letter};

/// hearth's own append-only files that the tick writes after the model
/// has answered: if one is not a file (a directory made by mistake, a
/// FIFO), the tick would pay for a model call and then fail writing. It
/// fails first, naming the file and the fix, with nothing consumed.
pub(super) fn own_files_are_files(home: &Home) -> Result<(), ExchangeError> {
    use crate::home::layout::rel;
    for rel in [rel::SESSIONS, rel::BRAKE_LOG] {
        let path = home.path(rel);
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue; // not there yet: written when first needed
        };
        if !meta.is_file() {
            return Err(ExchangeError::Io(IoError::doing(
                format!(
                    "{rel} is not a regular file (hearth appends to it every exchange); move it \
                     aside (`mv {rel} {rel}.aside`) and the next tick starts a new one"
                ),
                std::io::Error::other("not a regular file"),
            )));
        }
    }
    Ok(())
}

/// Operator tools that cannot be offered (a manifest that does not parse)
/// or not run (changed since the operator trusted it): named in the log,
/// and one `tools` flare (until read) says which files and what to do.
fn flare_tool_problems(
    home: &Home,
    prepared: &Prepared,
    tick: u64,
    now: DateTime<Utc>,
) -> Result<(), ExchangeError> {
    let trust = &prepared.offered.trust;
    let mut lines: Vec<String> = prepared
        .offered
        .problems
        .iter()
        .map(|p| format!("- {p} (the tool is not offered until this is fixed)"))
        .collect();
    for tool in &prepared.offered.operator {
        if !trust.trusts(&tool.file, &tool.digest) {
            lines.push(format!(
                "- {} is not trusted as it is now: `{}` will not run until you check it and \
                 run `hearth trust`",
                tool.file, tool.name
            ));
        }
    }
    if lines.is_empty() {
        return Ok(());
    }
    for line in &lines {
        tracing::warn!("tools: {}", line.trim_start_matches("- "));
    }
    let unread = crate::mailbox::flares::list(home)
        .into_iter()
        .any(|f| f.cause() == Cause::Tools && !f.read);
    if !unread {
        let mut flare = Letter::flare(
            Cause::Tools,
            "operator tools need your attention",
            format!("{}\n", lines.join("\n")),
        );
        flare.tick = Some(tick);
        outbox::post(home, &flare, now)?;
    }
    Ok(())
}

/// The brake's gate for the tick (taking one tick of an override in
/// force), with the files it requires on the report; a required file that
/// is missing and an operator tool that cannot run are flared.
pub(super) fn brake_gate(
    home: &Home,
    config: &Config,
    prepared: &Prepared,
    report: &mut TickReport,
    now: DateTime<Utc>,
) -> Result<Gate, ExchangeError> {
    let mode = config.brake.mode;
    let required = required(home, &prepared.required_reads, &config.brake.must_read);
    report.required_reads = required.iter().map(|r| r.path.clone()).collect();
    let gate = Gate::open_for(home, mode, report.required_reads.clone(), report.tick, now);
    if mode != BrakeMode::Off {
        flare_missing_required(home, &required, report.tick, now)?;
    }
    flare_tool_problems(home, prepared, report.tick, now)?;
    Ok(gate)
}

/// A file the brake requires that does not exist or cannot be read keeps
/// the gate closed; one `brake` flare (until read) names it: unknown is
/// never OK.
fn flare_missing_required(
    home: &Home,
    required: &[crate::brake::Required],
    tick: u64,
    now: DateTime<Utc>,
) -> Result<(), ExchangeError> {
    let missing: Vec<&str> = required
        .iter()
        .filter(|r| r.pages.is_none())
        .map(|r| r.path.as_str())
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    tracing::warn!(
        "the brake requires files that cannot be read: {}",
        missing.join(", ")
    );
    let unread = crate::mailbox::flares::list(home)
        .into_iter()
        .any(|f| f.cause() == Cause::Brake && !f.read);
    if unread {
        return Ok(());
    }
    let body = format!(
        "The brake requires these files, and they do not exist or cannot be read:\n\n{}\n\n\
         Until they can be read, the agent's writing tools stay closed in `enforce` (and are \
         logged as would-deny in `warn`). Create them, or remove them from [brake] must_read \
         or from the `must_read: true` front matter that names them.",
        missing
            .iter()
            .map(|p| format!("- {p}"))
            .collect::<Vec<_>>()
            .join("\n")
    );
    let mut flare = Letter::flare(Cause::Brake, "a required read is missing", body);
    flare.tick = Some(tick);
    outbox::post(home, &flare, now)?;
    Ok(())
}

/// Makes the request fit `[model] context_tokens` before anything is
/// consumed: the oldest history is archived if that is enough (a recovery
/// on the ledger); if a part is too large on its own, the tick is a
/// context-insufficiency naming it, one `context` flare says what to
/// shorten, and the inbox is left as it was. Returns whether to go on.
pub(super) fn make_it_fit(
    home: &Home,
    config: &Config,
    prepared: &mut Prepared,
    report: &mut TickReport,
    now: DateTime<Utc>,
) -> Result<bool, ExchangeError> {
    let window = config.context_window();
    let mut verdict = fit::fit(&prepared.tokens_by_part, window, config.model.max_tokens);
    if let fit::Fit::TrimHistory { keep } = verdict {
        verdict = trim_history(home, config, prepared, report, keep, now)?;
    }
    match verdict {
        fit::Fit::Fits => Ok(true),
        fit::Fit::TrimHistory { .. } => {
            report.outcome.failures.push(Failure::new(
                class::FailureKind::Context,
                format!(
                    "the conversation does not fit the model's context window \
                     ([model] context_tokens = {window}) even with its history archived"
                ),
            ));
            give_up_unasked(home, prepared, report)?;
            Ok(false)
        }
        fit::Fit::TooLarge {
            part,
            tokens,
            total,
            room,
        } => {
            // The one recovery, reduced context, can only take the history
            // and the recalled context away: weighed, not sent, since what
            // is left would still not fit.
            let without: u64 = prepared
                .tokens_by_part
                .iter()
                .filter(|(name, _)| !matches!(name.as_str(), "history" | "recall"))
                .map(|(_, n)| n)
                .sum();
            report.outcome.recoveries.push(class::Recovery {
                strategy: "reduced context".into(),
                detail: format!(
                    "without history and recalled context the request would still need about \
                     {without} tokens of {room}"
                ),
                extra_tokens: 0,
                wall_ms: 0,
                outcome: "failed".into(),
            });
            let detail = format!(
                "the request needs about {total} tokens before any history, and the model \
                 has room for {room} ([model] context_tokens = {window} less [model] max_tokens); \
                 the {part} alone is about {tokens} tokens: {}",
                fit::remedy(&part)
            );
            tracing::error!("{detail}");
            // Once until the operator reads it, not every tick.
            let unread = crate::mailbox::flares::list(home)
                .into_iter()
                .any(|f| f.cause() == Cause::Context && !f.read);
            if !unread {
                let mut flare = Letter::flare(
                Cause::Context,
                format!("the {part} does not fit the model's context window"),
                format!("{detail}.\n\nNo inbox message was consumed; they wait for a tick that fits.\n"),
            );
                flare.tick = Some(report.tick);
                outbox::post(home, &flare, now)?;
            }
            report
                .outcome
                .failures
                .push(Failure::new(class::FailureKind::Context, detail));
            give_up_unasked(home, prepared, report)?;
            Ok(false)
        }
    }
}

/// Archives the oldest history down to `keep` tokens, on the report as
/// the reduced-context recovery; the fit as it is after.
fn trim_history(
    home: &Home,
    config: &Config,
    prepared: &mut Prepared,
    report: &mut TickReport,
    keep: u64,
    now: DateTime<Utc>,
) -> Result<fit::Fit, ExchangeError> {
    let window = config.context_window();
    let started = std::time::Instant::now();
    let conversation = &mut prepared.conversation;
    // The conversation ends with this tick's own turn, which is counted as
    // the inbox, not as history: planned beside it, and left out of what
    // the history keeps.
    let this_turn = conversation
        .messages
        .last()
        .map_or(0, history::message_tokens);
    let Some(compaction) = history::plan(home, conversation, keep + this_turn, now) else {
        return Ok(fit::fit(
            &prepared.tokens_by_part,
            window,
            config.model.max_tokens,
        ));
    };
    let archived = history::apply(conversation, &compaction);
    history::write_archive(home, &compaction, archived, now)?;
    let before_this_turn = conversation.messages.len().saturating_sub(1);
    let left: u64 = conversation.messages[..before_this_turn]
        .iter()
        .map(history::message_tokens)
        .sum();
    prepared.tokens_by_part.insert("history".into(), left);
    report.tokens_by_part = prepared.tokens_by_part.clone();
    let verdict = fit::fit(&prepared.tokens_by_part, window, config.model.max_tokens);
    report.outcome.recoveries.push(class::Recovery {
        strategy: "reduced context".into(),
        detail: format!(
            "moved {} old messages to {} to fit [model] context_tokens = {window}",
            compaction.count, compaction.archive
        ),
        extra_tokens: 0,
        wall_ms: started.elapsed().as_millis() as u64,
        outcome: if verdict == fit::Fit::Fits {
            "recovered"
        } else {
            "failed"
        }
        .into(),
    });
    Ok(verdict)
}

/// Ends a tick that never asked: the inbox is untouched, and what was
/// archived to make room stays archived, consistently.
fn give_up_unasked(
    home: &Home,
    prepared: &mut Prepared,
    report: &TickReport,
) -> Result<(), ExchangeError> {
    prepared.conversation.messages.pop();
    prepared.conversation.save(home)?;
    report.save(home)?;
    Ok(())
}
