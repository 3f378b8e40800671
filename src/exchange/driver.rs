//! The exchange's driver: calls the model and performs what the pure
//! agent [`Step`] decides — runs tool calls, asks the brake about writing
//! ones, asks again with more room, of the fallback model, with reduced
//! context or with a correction — and tells the door's [`Record`] each
//! thing that happened as it happens, so a tick killed at any point leaves
//! a conversation that is valid up to there. Every recovery it tries goes
//! on the exchange's outcome with how it ended (DESIGN 7).

use std::time::Instant;

use chrono::{DateTime, Utc};

use super::class::{Failure, FailureKind, Recovery};
use super::door::{Door, Record};
use super::outcome::Outcome;
use super::step::{self, AskedCall, Call, Limits, Step, Then, Turn};
use super::ExchangeError;
use crate::brake::gate::Gate;
use crate::brake::{self, Ruling};
use crate::config::Config;
use crate::conversation::archive as history;
use crate::conversation::store::Conversation;
use crate::conversation::{self as convo, Block, Message, Role};
use crate::home::Home;
use crate::model::{self, Provider, Request, TurnFacts};
use crate::tools::sandbox::Area;
use crate::tools::{self, ToolContext};

/// Streamed after an answer that is thrown away and asked again (cut
/// short, refused, malformed): the reader of a streamed answer sees that
/// the text above it is not the answer that is kept.
pub const DISCARDED: &str =
    "\n\n[hearth: the answer above was not kept (cut short or unusable); asking again]\n\n";

/// Recoveries started and not yet settled: what, how much more, since when.
struct Tries(Vec<(Recovery, Instant)>);

impl Tries {
    fn start(&mut self, strategy: &str, detail: String, extra_tokens: u32) {
        tracing::warn!("recovery: {strategy}");
        let recovery = Recovery {
            strategy: strategy.into(),
            detail,
            extra_tokens,
            wall_ms: 0,
            outcome: String::new(),
        };
        self.0.push((recovery, Instant::now()));
    }

    /// Each recovery with its wall time and outcome: `recovered` if the
    /// tick ended without a failure, else `failed`.
    fn settle(self, step: &Step, outcome: &mut Outcome) {
        let ended = if outcome.failures.is_empty() {
            "recovered"
        } else {
            "failed"
        };
        for (mut recovery, started) in self.0 {
            recovery.wall_ms = started.elapsed().as_millis() as u64;
            recovery.outcome = ended.into();
            outcome.recoveries.push(recovery);
        }
        for failure in step.tool_failures() {
            outcome.recoveries.push(Recovery {
                strategy: "tool error returned to the model".into(),
                detail: failure.detail.clone(),
                extra_tokens: 0,
                wall_ms: 0,
                outcome: ended.into(),
            });
        }
    }
}

/// What an exchange gives the model, the same for all its requests.
#[derive(Clone, Copy)]
pub struct Given<'a> {
    /// The home.
    pub home: &'a Home,
    /// `hearth.toml`.
    pub config: &'a Config,
    /// The provider's key, read by the caller.
    pub api_key: Option<&'a str>,
    /// The system blocks (prompt, identity layer).
    pub system: &'a [model::SystemBlock],
    /// The tools offered.
    pub specs: &'a [model::ToolSpec],
    /// What the offline model answers from.
    pub facts: &'a TurnFacts,
    /// The brake's gate for the exchange's writing calls.
    pub gate: &'a Gate,
}

/// A model turn's tool calls: id, name, arguments.
type ToolCalls = Vec<(String, String, serde_json::Value)>;

/// What one call of the model came to: the step's decision, the reply
/// with its calls when there was one, and whether any text streamed.
struct Heard {
    decision: step::Decision,
    answered: Option<(model::Reply, ToolCalls)>,
    streamed: bool,
}

/// After a recovery: ask again, stop, or go on with the turn.
enum Flow {
    Again,
    Over,
    On,
}

/// The loop's own state between calls of the model.
struct Exchanging {
    provider: Box<dyn Provider>,
    step: Step,
    tries: Tries,
    max_tokens: u32,
    extra_tokens: u32,
    correction: Option<String>,
    rounds: usize,
}

/// Runs the model and its tools until the step says stop.
pub fn tool_loop(
    door: &mut Door<'_>,
    provider: Box<dyn Provider>,
    given: &Given<'_>,
    conversation: &mut Conversation,
    tool_ctx: &mut ToolContext<'_>,
    outcome: &mut Outcome,
) -> Result<(), ExchangeError> {
    let config = given.config;
    let extra_tokens = u32::try_from(config.recovery.extra_tokens).unwrap_or(u32::MAX);
    let mut state = Exchanging {
        provider,
        step: Step::new(Limits {
            max_tool_rounds: config.tick.max_tool_rounds,
            max_calls_per_turn: config.tools.max_calls_per_turn,
            max_tokens: config.model.max_tokens,
            extra_tokens,
            fallback: !config.model.fallback_model.is_empty(),
            shrinks: door.record.owns_conversation(),
        }),
        tries: Tries(Vec::new()),
        max_tokens: config.model.max_tokens,
        extra_tokens,
        correction: None,
        rounds: 0,
    };
    loop {
        let heard = state.call(door, given, conversation, tool_ctx, outcome)?;
        let decision = heard.decision;
        outcome.failures.extend(decision.failures.iter().cloned());
        let asks_again = matches!(
            decision.then,
            Then::Retry { .. } | Then::Fallback | Then::Shrink | Then::Correct(_)
        );
        if asks_again && heard.streamed {
            // What streamed is not kept: whoever watched it must know.
            (door.on_text)(DISCARDED);
        }
        match state.recover(&decision.then, given, conversation, tool_ctx, outcome)? {
            Flow::Again => continue,
            Flow::Over => break,
            Flow::On => {}
        }
        let Some((reply, calls)) = heard.answered.filter(|_| decision.keep) else {
            break;
        };
        for text in convo::texts(&reply.content) {
            outcome.reply.push_str(text);
            outcome.reply.push('\n');
        }
        conversation.messages.push(Message {
            outside: tool_ctx.taint.outside.clone(),
            role: Role::Assistant,
            content: reply.content,
        });
        door.record.kept(conversation)?;
        if !calls.is_empty() {
            let mut turn = Answering {
                record: &mut *door.record,
                step: &mut state.step,
                gate: given.gate,
                conversation,
                tool_ctx,
                outcome,
                home: given.home,
            };
            turn.answer(calls, decision.calls)?;
            state.rounds += 1;
        }
        if decision.then == Then::Stop {
            break;
        }
        if outcome.spent_the_cap(door.spend_cap_usd) {
            break;
        }
    }
    state.tries.settle(&state.step, outcome);
    Ok(())
}

impl Exchanging {
    /// Calls the model once with the conversation as it stands (and the
    /// correction, if one is due), records what it cost, and lets the step
    /// decide what follows.
    fn call(
        &mut self,
        door: &mut Door<'_>,
        given: &Given<'_>,
        conversation: &Conversation,
        tool_ctx: &mut ToolContext<'_>,
        outcome: &mut Outcome,
    ) -> Result<Heard, ExchangeError> {
        let messages = convo::alternating(&conversation.messages);
        let messages = match self.correction.take() {
            Some(what) => with_correction(&messages, &what),
            None => messages,
        };
        // The request is built from exactly what the taint is told of.
        tool_ctx.taint.shown_prompt(given.system, &messages);
        let request = Request {
            system: given.system,
            messages: &messages,
            tools: given.specs,
            max_tokens: self.max_tokens,
            facts: Some(given.facts),
            cache: door.cache_lifetime(self.rounds, &tool_ctx.effects, tool_ctx.now),
            cache_key: door.cache_key,
        };
        let mut streamed = false;
        let answer = self.provider.complete(&request, &mut |text: &str| {
            streamed |= !text.is_empty();
            (door.on_text)(text)
        });
        let reply = match answer {
            Err(e) => {
                tracing::error!("{e}");
                let decision = self.step.next(Turn::Failed(Failure::of_model(&e)));
                return Ok(Heard {
                    decision,
                    answered: None,
                    streamed,
                });
            }
            Ok(reply) => reply,
        };
        outcome.usage.add(reply.usage);
        outcome.calls += 1;
        // Paid now: on disk now, so a tick killed at its time limit later
        // still records (and budgets) what it spent.
        outcome.cost_usd = super::cost_usd(&outcome.usage, given.config.price().as_ref());
        door.record.paid(outcome)?;
        if reply.stop != model::Stop::Complete {
            let reason = reply.stop_reason.as_deref().unwrap_or("?");
            tracing::warn!("the model stopped: {reason}");
            outcome.stop_reason = reply.stop_reason.clone();
        }
        if let Some(refusal) = &reply.refusal {
            outcome.refusals.push(refusal.clone());
        }
        let calls: ToolCalls = reply
            .tool_uses()
            .map(|(id, name, input)| (id.to_string(), name.to_string(), input.clone()))
            .collect();
        let said_something = !calls.is_empty() || convo::texts(&reply.content).next().is_some();
        let asked = calls.iter().map(|(_, name, _)| AskedCall {
            name: name.clone(),
            writes: tools::writes(&tool_ctx.operator, name),
        });
        let decision = self.step.next(Turn::Answered {
            calls: asked.collect(),
            stop: reply.stop,
            stop_reason: reply.stop_reason.clone(),
            said_something,
        });
        Ok(Heard {
            decision,
            answered: Some((reply, calls)),
            streamed,
        })
    }

    /// Starts the recovery the step decided, if it decided one.
    fn recover(
        &mut self,
        then: &Then,
        given: &Given<'_>,
        conversation: &mut Conversation,
        tool_ctx: &ToolContext<'_>,
        outcome: &mut Outcome,
    ) -> Result<Flow, ExchangeError> {
        match then {
            Then::Retry { max_tokens: more } => {
                self.tries
                    .start("retry with more tokens", String::new(), self.extra_tokens);
                self.max_tokens = *more;
            }
            Then::Fallback => {
                let mut fallback = given.config.model.clone();
                fallback.model = given.config.model.fallback_model.clone();
                self.tries
                    .start("fallback model", fallback.model.clone(), 0);
                match model::provider_for(&fallback, given.api_key) {
                    Ok(p) => self.provider = p,
                    Err(e) => {
                        outcome.failures.push(Failure::of_model(&e));
                        return Ok(Flow::Over);
                    }
                }
            }
            Then::Shrink => {
                let archived = "archived the oldest turns".into();
                self.tries.start("reduced context", archived, 0);
                // Only a door that keeps its conversation is told to shrink.
                if let Some(failure) = shrink(conversation, given.home, tool_ctx.now)? {
                    outcome.failures.push(failure);
                    return Ok(Flow::Over);
                }
            }
            Then::Correct(what) => {
                let returned = "malformed call returned to the model";
                self.tries.start(returned, what.clone(), 0);
                self.correction = Some(what.clone());
            }
            Then::CallAgain | Then::Stop => return Ok(Flow::On),
        }
        Ok(Flow::Again)
    }
}

/// The conversation as sent once more after a malformed turn: the turn is
/// dropped and the last message carries what was wrong, so the model can
/// make the call again properly. Nothing of it is stored.
fn with_correction(messages: &[Message], what: &str) -> Vec<Message> {
    let mut messages = messages.to_vec();
    let note = Block::Text {
        text: format!(
            "[hearth: your last answer was not used: {what}. Make the call again with \
             arguments that are one valid JSON object matching the tool's schema.]"
        ),
    };
    match messages.last_mut() {
        Some(last) if last.role == Role::User => last.content.push(note),
        _ => messages.push(Message {
            outside: crate::outside::Outside::none(),
            role: Role::User,
            content: vec![note],
        }),
    }
    messages
}

/// The reduced-context recovery: archives the conversation's oldest turns
/// until at most half of it stays (nothing is lost: the archive is
/// recallable and committed with the tick), or says why it cannot.
fn shrink(
    conversation: &mut Conversation,
    home: &Home,
    now: DateTime<Utc>,
) -> Result<Option<Failure>, ExchangeError> {
    let total: u64 = conversation
        .messages
        .iter()
        .map(history::message_tokens)
        .sum();
    let Some(compaction) = history::plan(home, conversation, total / 2, now) else {
        return Ok(Some(Failure::new(
            FailureKind::Context,
            format!(
                "the conversation (about {total} tokens) does not fit the model's context \
                 window, and this tick's own turn is all that is left of it; lower \
                 [context] history_tokens or shorten the identity files"
            ),
        )));
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

/// What answering one turn's calls touches.
struct Answering<'a, 'c> {
    record: &'a mut dyn Record,
    step: &'a mut Step,
    gate: &'a Gate,
    conversation: &'a mut Conversation,
    tool_ctx: &'a mut ToolContext<'c>,
    outcome: &'a mut Outcome,
    home: &'a Home,
}

impl Answering<'_, '_> {
    /// Runs or refuses each call as decided (the step's round and per-turn
    /// limits, then the brake), and keeps their results as one user turn:
    /// every call gets a result, or the next request is malformed. A call
    /// that fails goes back to the model as an error result; the step
    /// decides later whether the model got past it.
    fn answer(&mut self, calls: ToolCalls, decided: Vec<Call>) -> Result<(), ExchangeError> {
        let mut results = Vec::new();
        for ((id, name, input), call) in calls.into_iter().zip(decided) {
            self.outcome.actions.push(format!("{name} {input}"));
            // The brake's line, the call and what the door records of it,
            // as one: an ask stopped by a signal stops between calls.
            let _running = tools::call_running();
            let refusal = match call {
                Call::Run => None,
                Call::Refuse(why) => Some(why),
                Call::Check => {
                    let denied = self.brake(&name, &input, &results);
                    self.step.braked(&name, denied)
                }
            };
            let (content, is_error) = match refusal {
                Some(why) => (why, true),
                None => {
                    let (content, is_error, failure) =
                        step::answer(tools::dispatch(self.tool_ctx, &name, &input));
                    self.tool_ctx.effects.outside = self.tool_ctx.taint.outside.clone();
                    if let Some(failure) = failure {
                        tracing::warn!("tool call failed: {}", failure.detail);
                        self.step.tool_failed(failure);
                    }
                    self.record.called(self.outcome, &self.tool_ctx.effects);
                    (content, is_error)
                }
            };
            results.push(Block::ToolResult {
                tool_use_id: id,
                content,
                is_error,
            });
        }
        self.conversation.messages.push(Message {
            outside: self.tool_ctx.taint.outside.clone(),
            role: Role::User,
            content: results,
        });
        self.outcome.effects = self.tool_ctx.effects.clone();
        self.record.answered(self.conversation, self.outcome)?;
        Ok(())
    }

    /// Asks the brake about a writing call about to run, with what is in
    /// front of the model now: the conversation and this turn's results so
    /// far. Its refusal, if it refuses (the gate keeps its own log).
    fn brake(
        &mut self,
        name: &str,
        input: &serde_json::Value,
        results: &[Block],
    ) -> Option<String> {
        // Operator tools are logged as `tool:NAME`, apart from the built-ins.
        let logged = if brake::WRITING.contains(&name) {
            name.to_string()
        } else {
            format!("tool:{name}")
        };
        let mut shown = self.conversation.messages.clone();
        shown.push(Message {
            outside: crate::outside::Outside::none(),
            role: Role::User,
            content: results.to_vec(),
        });
        let home = self.home;
        let normalise = |raw: &str| {
            tools::sandbox::resolve(home, raw, &[Area::Memory, Area::State, Area::Outbox])
                .ok()
                .map(|p| home.relative(&p))
        };
        let target = match input["path"].as_str() {
            Some(path) => path.to_string(),
            None => self
                .tool_ctx
                .operator
                .iter()
                .find(|t| t.name == name)
                .map_or_else(|| name.to_string(), |t| t.command.join(" ")),
        };
        match self
            .gate
            .check(home, &logged, &target, true, &shown, normalise)
        {
            Ruling::Deny(waiting) => {
                let why = brake::refusal(&waiting);
                tracing::warn!("{name}: {why}");
                Some(why)
            }
            _ => None,
        }
    }
}
