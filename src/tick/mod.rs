//! One tick, as the child process `hearth tick --supervised` runs it
//! (DESIGN 3): boot → context → write-ahead of the user turn → model call
//! with a bounded tool loop → persisted reply → report.
//!
//! The tick never commits: its supervisor does, after it exits, so a tick
//! that is killed at any point still ends in a commit of whatever it got to.

pub mod class;
pub mod conversation;
pub mod ledger;
pub mod report;

use std::time::Duration;

use chrono::{DateTime, Utc};

use crate::config::{Config, Price};
use crate::home::Home;
use crate::mailbox::inbox;
use crate::mailbox::outbox::{self, Letter};
use crate::model::{self, Block, Message, Provider, Request, Role, TurnFacts, Usage};
use crate::repo::Repo;
use crate::tools::{self, ToolContext, ToolError};
use crate::{boot, context};
use class::{Failure, FailureKind};
use conversation::{Conversation, ConversationError};
use report::TickReport;

#[derive(Debug, thiserror::Error)]
pub enum TickError {
    #[error(transparent)]
    Conversation(#[from] ConversationError),
    #[error(transparent)]
    Write(#[from] crate::atomic::WriteError),
    #[error(transparent)]
    Mailbox(#[from] crate::mailbox::MailboxError),
}

/// How to run one tick.
#[derive(Debug, Clone, Default)]
pub struct TickOptions {
    pub number: u64,
    /// Test hook: pause this long right after the write-ahead, so tests can
    /// kill or time out a tick in the middle.
    pub pause_after_write_ahead: Option<Duration>,
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

    let repo = Repo::open(home.root()).ok();
    let (mut conversation, repaired) = Conversation::load(home, repo.as_ref(), now)?;
    if let Some(repaired) = repaired {
        tracing::warn!(
            "{}; kept the broken file at {}",
            repaired.problem,
            repaired.kept_at
        );
        let restored = match &repaired.restored_from {
            Some(commit) => format!("It was restored from commit {commit}."),
            None => "No committed copy parsed, so the conversation starts empty.".into(),
        };
        let body = format!(
            "{}\n\n{restored} The broken file is kept at {}; nothing was deleted.",
            repaired.problem, repaired.kept_at
        );
        outbox::post(
            home,
            &Letter::flare("state", "state/messages.json did not parse", body),
            now,
        )?;
    }

    let mut facts = TurnFacts {
        tick: options.number,
        inbox: Vec::new(),
    };
    for path in inbox::pending(home)? {
        match inbox::read(home, &path) {
            Ok(message) => {
                for note in &message.notes {
                    tracing::warn!("{note}");
                }
                facts.inbox.push(message);
            }
            Err(e) => tracing::warn!("inbox message skipped, left in place: {e}"),
        }
    }

    let boot = boot::boot(home, &config.boot);
    for problem in &boot.problems {
        tracing::warn!("{problem}");
    }
    let system = boot.system;
    report.required_reads = boot.required_reads;
    let (user_turn, mut parts) = context::user_turn(now, options.number, &facts.inbox);
    for block in &system {
        let part = if block.source == boot::PROMPT {
            "prompt"
        } else {
            "identity"
        };
        parts.insert(part.into(), model::estimate_tokens(&block.text));
    }
    parts.insert(
        "history".into(),
        conversation
            .messages
            .iter()
            .map(|m| model::estimate_tokens(&m.text()))
            .sum(),
    );
    report.tokens_by_part = parts;

    // Write-ahead: what was asked is on disk before any model sees it, and
    // only then do the messages leave the inbox.
    conversation.messages.push(user_turn);
    conversation.save(home)?;
    for message in &facts.inbox {
        let archived = inbox::archive(home, &message.rel)?;
        report.consumed.push((message.rel.clone(), archived));
    }
    report.save(home)?;
    if let Some(pause) = options.pause_after_write_ahead {
        std::thread::sleep(pause);
    }

    let mut tool_ctx = ToolContext {
        home,
        tick: options.number,
        now,
        max_sleep_h: config.tick.max_sleep_h,
        effects: Default::default(),
    };
    match model::provider_for(&config.model) {
        Ok(mut provider) => tool_loop(
            provider.as_mut(),
            config,
            &system,
            &facts,
            &mut conversation,
            &mut tool_ctx,
            &mut report,
            home,
        )?,
        Err(e) => report.failures.push(Failure {
            kind: FailureKind::Model,
            detail: e.to_string(),
        }),
    }
    report.effects = tool_ctx.effects;
    report.cost_usd = cost_usd(&report.usage, config.budget.prices.get(&config.model.model));
    report.finished = true;
    report.save(home)?;
    Ok(report)
}

#[allow(clippy::too_many_arguments)]
fn tool_loop(
    provider: &mut dyn Provider,
    config: &Config,
    system: &[model::SystemBlock],
    facts: &TurnFacts,
    conversation: &mut Conversation,
    tool_ctx: &mut ToolContext<'_>,
    report: &mut TickReport,
    home: &Home,
) -> Result<(), TickError> {
    let specs = tools::specs();
    let mut rounds = 0;
    loop {
        let request = Request {
            system,
            messages: &conversation.messages,
            tools: &specs,
            max_tokens: config.model.max_tokens,
            facts,
        };
        let reply = match provider.complete(&request, &mut |text| tracing::debug!("model: {text}"))
        {
            Ok(reply) => reply,
            Err(e) => {
                report.failures.push(Failure {
                    kind: FailureKind::Model,
                    detail: e.to_string(),
                });
                return Ok(());
            }
        };
        report.usage.add(reply.usage);
        let calls: Vec<(String, String, serde_json::Value)> = reply
            .tool_uses()
            .map(|(id, name, input)| (id.to_string(), name.to_string(), input.clone()))
            .collect();
        conversation.messages.push(Message {
            role: Role::Assistant,
            content: reply.content,
        });
        conversation.save(home)?;
        if calls.is_empty() {
            return Ok(());
        }

        let over_limit = rounds >= config.tick.max_tool_rounds;
        if over_limit {
            report.failures.push(Failure {
                kind: FailureKind::TooManyRounds,
                detail: format!(
                    "the model asked for tools after {rounds} rounds ([tick] max_tool_rounds = {})",
                    config.tick.max_tool_rounds
                ),
            });
        }
        rounds += 1;
        let mut results = Vec::new();
        for (id, name, input) in calls {
            // Every tool_use gets a tool_result, even unrun, or the next
            // request would be malformed for the provider.
            let outcome = if over_limit {
                Err(None)
            } else {
                tools::dispatch(tool_ctx, &name, &input).map_err(Some)
            };
            let (content, is_error) = match outcome {
                Ok(text) => (text, false),
                Err(None) => (
                    "not run: this tick's tool-round limit was reached".into(),
                    true,
                ),
                Err(Some(e)) => {
                    tracing::warn!("tool call failed: {e}");
                    report.failures.push(Failure {
                        kind: failure_kind(&e),
                        detail: e.to_string(),
                    });
                    (e.to_string(), true)
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
        if over_limit {
            return Ok(());
        }
    }
}

fn failure_kind(e: &ToolError) -> FailureKind {
    match e {
        ToolError::Unknown(_) => FailureKind::UnknownTool,
        ToolError::BadInput { .. } => FailureKind::MalformedCall,
        ToolError::Refused { .. } | ToolError::Failed { .. } => FailureKind::ToolFailed,
    }
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
