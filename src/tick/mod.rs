//! One tick, as the child process `hearth tick --supervised` runs it
//! (DESIGN 3): boot → context → write-ahead of the user turn → model call
//! with a bounded tool loop → persisted reply → report.
//!
//! The tick never commits: its supervisor does, after it exits, so a tick
//! that is killed at any point still ends in a commit of whatever it got to.

pub mod class;
pub mod conversation;
pub mod history;
pub mod ledger;
pub mod report;

use std::collections::BTreeMap;
use std::time::Duration;

use chrono::{DateTime, Utc};

use crate::budget::Budget;
use crate::config::{Config, Price};
use crate::context::Tier;
use crate::healer::note::HealerNote;
use crate::home::Home;
use crate::mailbox::inbox;
use crate::mailbox::outbox::{self, Letter};
use crate::memory::MemoryProblem;
use crate::model::{self, Block, Message, Provider, Request, Role, TurnFacts, Usage};
use crate::repo::Repo;
use crate::tools::{self, ToolContext, ToolError};
use crate::{boot, context};
use class::{Failure, FailureKind};
use conversation::{Broken, Conversation, ConversationError};
use history::Compaction;
use report::TickReport;

#[derive(Debug, thiserror::Error)]
pub enum TickError {
    #[error(transparent)]
    Conversation(#[from] ConversationError),
    #[error(transparent)]
    Write(#[from] crate::atomic::WriteError),
    #[error(transparent)]
    Mailbox(#[from] crate::mailbox::MailboxError),
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
}

/// How to run one tick.
#[derive(Debug, Clone, Default)]
pub struct TickOptions {
    pub number: u64,
    /// Test hook: pause this long right after the write-ahead, so tests can
    /// kill or time out a tick in the middle.
    pub pause_after_write_ahead: Option<Duration>,
    /// Test hook: record this failure after the tick's work, so tests can
    /// drive the healer. Set only from the environment of `hearth tick`,
    /// which no tool of the agent can reach.
    pub inject_failure: Option<FailureKind>,
    /// The provider's API key, read from the environment by the caller.
    pub api_key: Option<String>,
}

/// Everything the next model call would receive, assembled without
/// changing anything in the home: what `hearth context` prints, and what
/// [`run`] then commits to.
pub struct Prepared {
    pub number: u64,
    pub system: Vec<model::SystemBlock>,
    /// The conversation as it will be sent: compacted if it had to be, with
    /// this tick's user turn last.
    pub conversation: Conversation,
    pub tools: Vec<model::ToolSpec>,
    pub facts: TurnFacts,
    pub tier: Tier,
    pub tokens_by_part: BTreeMap<String, u64>,
    pub required_reads: Vec<String>,
    pub problems: Vec<MemoryProblem>,
    /// `messages.json` did not parse; a committed copy stands in.
    pub broken: Option<Broken>,
    /// Turns that move to an archive before this tick.
    pub compaction: Option<(Compaction, Vec<Message>)>,
    /// A heal's note, consumed by this tick.
    pub healer_note: Option<HealerNote>,
    /// `state/healer_note.json` did not parse: the problem, by file.
    pub broken_note: Option<String>,
}

/// Assembles tick `number` as it would run now. Reads only.
pub fn prepare(
    home: &Home,
    config: &Config,
    number: u64,
    now: DateTime<Utc>,
) -> Result<Prepared, TickError> {
    let repo = Repo::open(home.root()).ok();
    let (mut conversation, broken) = Conversation::read(home, repo.as_ref())?;

    let mut facts = TurnFacts {
        tick: number,
        inbox: Vec::new(),
        recall: Vec::new(),
    };
    for path in inbox::pending(home)? {
        match inbox::read(home, &path) {
            Ok(message) => facts.inbox.push(message),
            Err(e) => tracing::warn!("inbox message skipped, left in place: {e}"),
        }
    }

    facts.recall = recall_for_inbox(home, config, &facts.inbox);
    let boot = boot::boot(home, &config.boot);
    let compaction =
        history::plan(home, &conversation, config.context.history_tokens, now).map(|c| {
            let archived = history::apply(&mut conversation, &c);
            (c, archived)
        });
    let directive = std::fs::read_to_string(home.memory_dir().join("directive.md")).ok();
    let (healer_note, broken_note) = match HealerNote::read(home) {
        Ok(note) => (note, None),
        Err(problem) => (None, Some(problem)),
    };
    let (user_turn, mut parts, tier) = context::user_turn(&context::TurnInput {
        now,
        tick: number,
        inbox: &facts.inbox,
        history: &conversation.messages,
        directive: directive.as_deref(),
        healer_note: healer_note.as_ref(),
        recall: &facts.recall,
    });
    for block in &boot.system {
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
            .map(history::message_tokens)
            .sum(),
    );
    conversation.messages.push(user_turn);
    Ok(Prepared {
        number,
        system: boot.system,
        conversation,
        tools: tools::specs(),
        facts,
        tier,
        tokens_by_part: parts,
        required_reads: boot.required_reads,
        problems: boot.problems,
        broken,
        broken_note,
        compaction,
        healer_note,
    })
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
    let mut budget = Budget::load(home);
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
            budget.flared = Some(crate::budget::day(now));
            budget.save(home)?;
        }
        report.skipped = Some(reason);
        report.save(home)?;
        return Ok(report);
    }

    let prepared = prepare(home, config, options.number, now)?;
    for problem in &prepared.problems {
        tracing::warn!("{problem}");
    }
    for message in &prepared.facts.inbox {
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
    report.inbox_waiting = prepared.facts.inbox.len();
    report.tokens_by_part = prepared.tokens_by_part.clone();
    let Prepared {
        system,
        mut conversation,
        tools: specs,
        facts,
        healer_note,
        ..
    } = prepared;

    // Write-ahead: what was asked is on disk before any model sees it, and
    // only then do the messages leave the inbox and the healer's note go
    // (it is in the conversation now: consumed once, even if we fail).
    conversation.save(home)?;
    if healer_note.is_some() {
        HealerNote::consume(home);
    }
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
        recall_results: config.recall.results,
        max_write_bytes: config.tools.max_write_bytes,
        effects: Default::default(),
    };
    match model::provider_for(&config.model, options.api_key.as_deref()) {
        Ok(mut provider) => tool_loop(
            provider.as_mut(),
            config,
            &system,
            &specs,
            &facts,
            &mut conversation,
            &mut tool_ctx,
            &mut report,
            home,
        )?,
        Err(e) => report.failures.push(Failure {
            kind: e.failure_kind(),
            detail: e.to_string(),
            outage: e.is_outage(),
        }),
    }
    if let Some(kind) = options.inject_failure {
        report.failures.push(Failure {
            kind,
            detail: "injected by HEARTH_TEST_FAIL (test hook)".into(),
            outage: false,
        });
    }
    report.effects = tool_ctx.effects;
    let price = config.budget.prices.get(&config.model.model);
    if price.is_none()
        && report.usage.input_tokens + report.usage.output_tokens > 0
        && config.model.provider != crate::config::ProviderKind::Offline
    {
        tracing::warn!(
            "no [budget.prices.\"{}\"] entry: this model's spend is counted as $0",
            config.model.model
        );
    }
    report.cost_usd = cost_usd(&report.usage, price);
    report.save(home)?;
    Ok(report)
}

#[allow(clippy::too_many_arguments)]
fn tool_loop(
    provider: &mut dyn Provider,
    config: &Config,
    system: &[model::SystemBlock],
    specs: &[model::ToolSpec],
    facts: &TurnFacts,
    conversation: &mut Conversation,
    tool_ctx: &mut ToolContext<'_>,
    report: &mut TickReport,
    home: &Home,
) -> Result<(), TickError> {
    let mut rounds = 0;
    loop {
        let request = Request {
            system,
            messages: &conversation.messages,
            tools: specs,
            max_tokens: config.model.max_tokens,
            facts,
        };
        let reply = match provider.complete(&request, &mut |text| tracing::debug!("model: {text}"))
        {
            Ok(reply) => reply,
            Err(e) => {
                tracing::error!("{e}");
                report.failures.push(Failure {
                    kind: e.failure_kind(),
                    detail: e.to_string(),
                    outage: e.is_outage(),
                });
                return Ok(());
            }
        };
        report.usage.add(reply.usage);
        for text in model::texts(&reply.content) {
            report.reply.push_str(text);
            report.reply.push('\n');
        }
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
                outage: false,
            });
        }
        rounds += 1;
        let cap = config.tools.max_calls_per_turn;
        if calls.len() > cap && !over_limit {
            report.failures.push(Failure {
                kind: FailureKind::MalformedCall,
                detail: format!(
                    "the model made {} tool calls in one turn; the first {cap} ran \
                     ([tools] max_calls_per_turn = {cap})",
                    calls.len()
                ),
                outage: false,
            });
        }
        let mut results = Vec::new();
        for (n, (id, name, input)) in calls.into_iter().enumerate() {
            // Every tool_use gets a tool_result, even unrun, or the next
            // request would be malformed for the provider.
            let outcome = if over_limit {
                Err(None)
            } else if n >= cap {
                Err(Some(Err(format!(
                    "not run: at most {cap} tool calls per turn ([tools] max_calls_per_turn)"
                ))))
            } else {
                tools::dispatch(tool_ctx, &name, &input).map_err(|e| Some(Ok(e)))
            };
            let (content, is_error) = match outcome {
                Ok(text) => (text, false),
                Err(None) => (
                    "not run: this tick's tool-round limit was reached".into(),
                    true,
                ),
                Err(Some(Err(why))) => (why, true),
                Err(Some(Ok(e))) => {
                    tracing::warn!("tool call failed: {e}");
                    report.failures.push(Failure {
                        kind: failure_kind(&e),
                        detail: e.to_string(),
                        outage: false,
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

/// What recall finds for each inbox message (the top `[recall] results`).
/// A recall that cannot run is logged and leaves the tick without it.
fn recall_for_inbox(
    home: &Home,
    config: &Config,
    inbox: &[inbox::InboxMessage],
) -> Vec<Vec<crate::recall::index::Hit>> {
    if inbox.is_empty() {
        return Vec::new();
    }
    let found = crate::recall::fresh_index(home).and_then(|index| {
        inbox
            .iter()
            .map(|m| index.search(&m.text, config.recall.results))
            .collect::<Result<Vec<_>, _>>()
    });
    found.unwrap_or_else(|e| {
        tracing::warn!("recall for the inbox failed: {e}");
        vec![Vec::new(); inbox.len()]
    })
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
    let flare = Letter::flare("state", "state/messages.json did not parse", body);
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
    let flare = Letter::flare("state", "state/healer_note.json did not parse", body);
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
