//! One tick, as the child process `hearth tick --supervised` runs it
//! (DESIGN 3): boot → context → write-ahead of the user turn → model call
//! with a bounded tool loop → persisted reply → report.
//!
//! [`prepare()`] assembles the turn without changing anything; [`step`]
//! decides, from plain values, what follows each model turn; this file is
//! the driver that performs those decisions (model calls, tool dispatch,
//! persistence).
//!
//! The tick never commits: its supervisor does, after it exits, so a tick
//! that is killed at any point still ends in a commit of whatever it got to.

pub mod class;
pub mod context;
pub mod healer_note;
pub mod hooks;
pub mod ledger;
pub mod prepare;
pub mod report;
pub mod step;

use chrono::{DateTime, Utc};

use crate::budget::Budget;
use crate::config::{Config, Price};
use crate::conversation::archive as history;
use crate::conversation::store::Conversation;
use crate::conversation::store::{Broken, ConversationError};
use crate::conversation::{self as convo, Block, Message, Role};
use crate::home::layout::rel;
use crate::home::Home;
use crate::mailbox::inbox;
use crate::mailbox::outbox::{self, Letter};
use crate::model::{self, Provider, Request, TurnFacts, Usage};
use crate::tools::{self, ToolContext};
use class::{Failure, FailureKind};
use healer_note::HealerNote;
pub use hooks::TestHooks;
pub use prepare::{prepare, Prepared};
use report::TickReport;
use step::{Call, Limits, Step, Then, Turn};

/// Why a tick could not run or record itself (not a failure of the agent's).
#[derive(Debug, thiserror::Error)]
pub enum TickError {
    /// `messages.json` could not be read or written.
    #[error(transparent)]
    Conversation(#[from] ConversationError),
    /// A state file could not be written.
    #[error(transparent)]
    Write(#[from] crate::atomic::WriteError),
    /// The inbox or outbox failed.
    #[error(transparent)]
    Mailbox(#[from] crate::mailbox::MailboxError),
    /// Another file operation failed.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
}

/// How to run one tick.
#[derive(Debug, Clone, Default)]
pub struct TickOptions {
    /// The tick's number.
    pub number: u64,
    /// The provider's API key, read from the environment by the caller.
    pub api_key: Option<String>,
    /// What a test asked of this tick (nothing, outside tests).
    pub hooks: TestHooks,
}

/// Runs one tick and returns its final report (also saved for the
/// supervisor). The exit code is `report.class().exit_code()`.
pub fn run(
    home: &Home,
    config: &Config,
    options: &TickOptions,
    now: DateTime<Utc>,
) -> Result<TickReport, TickError> {
    let mut report = TickReport::new(options.number, now);
    report.save(home)?;

    // The day's budget is spent: skip before touching the inbox or the
    // conversation, and say so once per UTC day.
    let budget = Budget::load_or_empty(home);
    if budget.exhausted(config.budget.daily_usd, now) {
        let reason = format!(
            "the daily budget is spent: ${:.4} of [budget] daily_usd = ${:.2} today (UTC)",
            budget.spent(now),
            config.budget.daily_usd
        );
        tracing::warn!("tick {} skipped: {reason}", options.number);
        if budget.flared.as_deref() != Some(crate::budget::day(now).as_str()) {
            let body = format!(
                "{reason}.\n\nTicks are skipped (exit 3) until the next UTC day; inbox messages wait. \
                 Raise [budget] daily_usd in hearth.toml to resume sooner (0 = no limit).\n"
            );
            let mut flare = Letter::flare("budget", "the daily budget is spent", body);
            flare.tick = Some(options.number);
            outbox::post(home, &flare, now)?;
            report.budget_flared = Some(crate::budget::day(now));
        }
        report.skipped = Some(reason);
        report.save(home)?;
        return Ok(report);
    }

    let prepared = prepare(home, config, options.number, now)?;
    for problem in &prepared.problems {
        tracing::warn!("{problem}");
    }
    for message in &prepared.inbox {
        for note in &message.notes {
            tracing::warn!("{note}");
        }
    }
    if let Some(broken) = &prepared.broken {
        keep_broken(home, broken, now)?;
    }
    if let Some(problem) = &prepared.broken_note {
        set_note_aside(home, problem, now)?;
    }
    if let Some((compaction, archived)) = &prepared.compaction {
        history::write_archive(home, compaction, archived.clone(), now)?;
        tracing::info!(
            "moved {} old messages to {}",
            compaction.count,
            compaction.archive
        );
    }
    report.required_reads = prepared.required_reads.clone();
    report.inbox_waiting = prepared.inbox.len();
    let facts = prepared.facts();
    report.tokens_by_part = prepared.tokens_by_part.clone();
    let Prepared {
        system,
        mut conversation,
        tools: specs,
        inbox: messages,
        healer_note,
        ..
    } = prepared;

    // Write-ahead: what was asked is on disk before any model sees it, and
    // only then do the messages leave the inbox and the healer's note go
    // (it is in the conversation now: consumed once, even if we fail).
    conversation.save(home)?;
    let asked = conversation.messages.len();
    if healer_note.is_some() {
        HealerNote::consume(home);
    }
    for message in &messages {
        let archived = inbox::archive(home, &message.rel)?;
        report.consumed.push((message.rel.clone(), archived));
    }
    report.save(home)?;
    if let Some(pause) = options.hooks.pause_after_write_ahead(options.number) {
        std::thread::sleep(pause);
    }

    let mut tool_ctx = ToolContext {
        home,
        tick: options.number,
        now,
        max_sleep_h: config.tick.max_sleep_h,
        recall_results: config.recall.results,
        max_write_bytes: config.tools.max_write_bytes,
        effects: Default::default(),
    };
    match model::provider_for(&config.model, options.api_key.as_deref()) {
        Ok(provider) => tool_loop(
            provider,
            options.api_key.as_deref(),
            config,
            &system,
            &specs,
            &facts,
            &mut conversation,
            &mut tool_ctx,
            &mut report,
            home,
        )?,
        Err(e) => report.failures.push(Failure::of_model(&e)),
    }
    if let Some(kind) = options.hooks.failure(options.number) {
        report.failures.push(Failure {
            kind,
            detail: "injected by HEARTH_TEST_FAIL (test hook)".into(),
            outage: false,
            fix: None,
        });
    }
    report.effects = tool_ctx.effects;
    if unanswered_for_an_outage(&report, conversation.messages.len() == asked) {
        give_back(home, &mut conversation, healer_note.as_ref(), &mut report)?;
    }
    // Config validation refused an unknown price with a daily limit, so
    // `None` here means no limit was asked for.
    let price = config.price();
    report.cost_usd = cost_usd(&report.usage, price.as_ref());
    report.save(home)?;
    Ok(report)
}

/// Drives the agent step: calls the model, performs what [`Step`] decides
/// (dispatch, refusals, a retry with more room, the fallback model), and
/// persists each kept turn as it happens, so a tick killed at any point
/// leaves a conversation that is valid up to there.
#[allow(clippy::too_many_arguments)]
fn tool_loop(
    mut provider: Box<dyn Provider>,
    api_key: Option<&str>,
    config: &Config,
    system: &[model::SystemBlock],
    specs: &[model::ToolSpec],
    facts: &TurnFacts,
    conversation: &mut Conversation,
    tool_ctx: &mut ToolContext<'_>,
    report: &mut TickReport,
    home: &Home,
) -> Result<(), TickError> {
    let mut step = Step::new(Limits {
        max_tool_rounds: config.tick.max_tool_rounds,
        max_calls_per_turn: config.tools.max_calls_per_turn,
        max_tokens: config.model.max_tokens,
        extra_tokens: u32::try_from(config.recovery.extra_tokens).unwrap_or(u32::MAX),
        fallback: !config.model.fallback_model.is_empty(),
    });
    let mut max_tokens = config.model.max_tokens;
    loop {
        let request = Request {
            system,
            messages: &conversation.messages,
            tools: specs,
            max_tokens,
            facts: Some(facts),
        };
        let reply = match provider.complete(&request, &mut |text| tracing::debug!("model: {text}"))
        {
            Ok(reply) => reply,
            Err(e) => {
                tracing::error!("{e}");
                let decision = step.next(Turn::Failed(Failure::of_model(&e)));
                report.failures.extend(decision.failures);
                if decision.then == Then::Shrink {
                    if let Some(failure) = shrink(conversation, home, tool_ctx.now)? {
                        report.failures.push(failure);
                        return Ok(());
                    }
                    continue;
                }
                return Ok(());
            }
        };
        report.usage.add(reply.usage);
        if reply.stop != model::Stop::Complete {
            tracing::warn!(
                "the model stopped: {}",
                reply.stop_reason.as_deref().unwrap_or("?")
            );
            report.stop_reason = reply.stop_reason.clone();
        }
        if let Some(refusal) = &reply.refusal {
            report.refusals.push(refusal.clone());
        }
        let calls: Vec<(String, String, serde_json::Value)> = reply
            .tool_uses()
            .map(|(id, name, input)| (id.to_string(), name.to_string(), input.clone()))
            .collect();
        let said_something = !calls.is_empty() || convo::texts(&reply.content).next().is_some();
        let decision = step.next(Turn::Answered {
            calls: calls.iter().map(|(_, name, _)| name.clone()).collect(),
            stop: reply.stop,
            stop_reason: reply.stop_reason.clone(),
            said_something,
        });
        report.failures.extend(decision.failures);
        match decision.then {
            Then::Retry { max_tokens: more } => {
                tracing::warn!("asking again with max_tokens = {more}");
                max_tokens = more;
                continue;
            }
            Then::Fallback => {
                let mut fallback = config.model.clone();
                fallback.model = config.model.fallback_model.clone();
                tracing::warn!("asking the fallback model {}", fallback.model);
                match model::provider_for(&fallback, api_key) {
                    Ok(p) => provider = p,
                    Err(e) => {
                        report.failures.push(Failure::of_model(&e));
                        return Ok(());
                    }
                }
                continue;
            }
            Then::Shrink => {
                if let Some(failure) = shrink(conversation, home, tool_ctx.now)? {
                    report.failures.push(failure);
                    return Ok(());
                }
                continue;
            }
            Then::CallAgain | Then::Stop => {}
        }
        if !decision.keep {
            return Ok(());
        }
        for text in convo::texts(&reply.content) {
            report.reply.push_str(text);
            report.reply.push('\n');
        }
        conversation.messages.push(Message {
            role: Role::Assistant,
            content: reply.content,
        });
        conversation.save(home)?;
        if !calls.is_empty() {
            answer_calls(calls, decision.calls, conversation, tool_ctx, report, home)?;
        }
        if decision.then == Then::Stop {
            return Ok(());
        }
    }
}

/// Whether the model was never reached (an outage on the first call, after
/// the provider's retries), so nothing of the tick happened but the asking.
fn unanswered_for_an_outage(report: &TickReport, nothing_kept: bool) -> bool {
    nothing_kept
        && !report.failures.is_empty()
        && report.failures.iter().all(|f| f.outage)
        && report.effects.touched.is_empty()
        && report.effects.sent.is_empty()
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
) -> Result<(), TickError> {
    conversation.messages.pop();
    conversation.save(home)?;
    for (_, archived) in std::mem::take(&mut report.consumed) {
        if let Some(back) = inbox::requeue(home, &archived)? {
            tracing::info!("the model was not reached: {back} waits for the next tick");
        }
    }
    if let Some(note) = healer_note {
        note.write(home)?;
    }
    report.save(home)?;
    Ok(())
}

/// The reduced-context recovery: archives the conversation's oldest turns
/// until at most half of it stays (nothing is lost: the archive is
/// recallable and committed with the tick), or says why it cannot.
fn shrink(
    conversation: &mut Conversation,
    home: &Home,
    now: DateTime<Utc>,
) -> Result<Option<Failure>, TickError> {
    let total: u64 = conversation
        .messages
        .iter()
        .map(history::message_tokens)
        .sum();
    let Some(compaction) = history::plan(home, conversation, total / 2, now) else {
        return Ok(Some(Failure {
            kind: FailureKind::Context,
            detail: format!(
                "the conversation (about {total} tokens) does not fit the model's context \
                 window, and this tick's own turn is all that is left of it; lower \
                 [context] history_tokens or shorten the identity files"
            ),
            outage: false,
            fix: None,
        }));
    };
    let archived = history::apply(conversation, &compaction);
    history::write_archive(home, &compaction, archived, now)?;
    conversation.save(home)?;
    tracing::warn!(
        "the context window was full: moved {} old messages to {} and asking again",
        compaction.count,
        compaction.archive
    );
    Ok(None)
}

/// Runs or refuses each call as decided, and keeps their results as one
/// user turn: every call gets a result, or the next request is malformed.
fn answer_calls(
    calls: Vec<(String, String, serde_json::Value)>,
    decided: Vec<Call>,
    conversation: &mut Conversation,
    tool_ctx: &mut ToolContext<'_>,
    report: &mut TickReport,
    home: &Home,
) -> Result<(), TickError> {
    let mut results = Vec::new();
    for ((id, name, input), call) in calls.into_iter().zip(decided) {
        report.actions.push(format!("{name} {input}"));
        let (content, is_error) = match call {
            Call::Refuse(why) => (why, true),
            Call::Run => {
                let (content, is_error, failure) =
                    step::answer(tools::dispatch(tool_ctx, &name, &input));
                if let Some(failure) = failure {
                    tracing::warn!("tool call failed: {}", failure.detail);
                    report.failures.push(failure);
                }
                (content, is_error)
            }
        };
        results.push(Block::ToolResult {
            tool_use_id: id,
            content,
            is_error,
        });
    }
    conversation.messages.push(Message {
        role: Role::User,
        content: results,
    });
    conversation.save(home)?;
    report.effects = tool_ctx.effects.clone();
    report.save(home)?;
    Ok(())
}

/// Keeps a broken `messages.json` beside the restored one and flares.
fn keep_broken(home: &Home, broken: &Broken, now: DateTime<Utc>) -> Result<(), TickError> {
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
    let flare = Letter::flare("state", &title, body);
    outbox::post(home, &flare, now)?;
    Ok(())
}

/// A heal's note that does not parse: kept beside it, and the operator told
/// (the agent misses what the heal would have said; the operator need not).
fn set_note_aside(home: &Home, problem: &str, now: DateTime<Utc>) -> Result<(), TickError> {
    let kept = HealerNote::set_aside(home, now).map_err(|e| TickError::Io {
        context: format!("could not move the broken {problem} aside"),
        source: e,
    })?;
    tracing::warn!("{problem}; moved it to {kept}");
    let body = format!(
        "{problem}\n\nThe note a heal leaves for the next tick did not parse, so the agent \
         was not told about the heal this time. The file was moved to {kept} (nothing was \
         deleted); see `git log -- state/` for the heal itself.\n"
    );
    let title = format!("{} did not parse", rel::HEALER_NOTE);
    let flare = Letter::flare("state", &title, body);
    outbox::post(home, &flare, now)?;
    Ok(())
}

/// Dollars for `usage` at `price`; a model without a price costs zero.
pub fn cost_usd(usage: &Usage, price: Option<&Price>) -> f64 {
    let Some(p) = price else { return 0.0 };
    let per = |tokens: u64, rate: f64| tokens as f64 * rate / 1_000_000.0;
    per(usage.input_tokens, p.input_per_mtok)
        + per(usage.output_tokens, p.output_per_mtok)
        + per(
            usage.cache_read_tokens,
            p.cache_read_per_mtok.unwrap_or(p.input_per_mtok * 0.1),
        )
        + per(
            usage.cache_write_tokens,
            p.cache_write_per_mtok.unwrap_or(p.input_per_mtok * 1.25),
        )
}
