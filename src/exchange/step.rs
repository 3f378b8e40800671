//! The agent step: what an exchange (under any door) does after each model
//! turn, decided from plain values. Given the turn (the tools it asked for, or the failure of
//! the call), [`Step::next`] says which calls to run, which to answer with a
//! refusal, which failures to record, and whether to call the model again.
//! It touches no file, no network and no clock, so round limits, per-turn
//! caps, stop reasons and failure classes are tested here with plain
//! values; the driver (`driver.rs`) performs what it decides. A writing
//! call is run only after the brake is asked ([`Call::Check`]): the driver
//! asks (the brake reads files and keeps its log), and [`Step::braked`]
//! decides from the answer.
//!
//! How a turn stopped matters as much as what it holds (DESIGN 6): a turn
//! cut by the token limit is never kept as a whole answer (one retry with
//! `[recovery] extra_tokens` more, then a model-limitation); a refusal is
//! recorded, not kept, and `[model] fallback_model` gets one try; a paused
//! turn is sent back to continue; a turn with nothing in it is never kept.
//! A conversation too long for the model's context window (the stop reason
//! `model_context_window_exceeded`, or the API's 400 saying so) gets one
//! bounded recovery with reduced context: the oldest turns are archived
//! (recallable, nothing lost) and the model is asked again; if that is not
//! enough the tick is a context-insufficiency.

use super::class::{Failure, FailureKind};
use crate::model::Stop;
use crate::tools::ToolError;

/// The limits a tick's tool loop keeps (`[tick] max_tool_rounds`,
/// `[tools] max_calls_per_turn`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// `[tick] max_tool_rounds`.
    pub max_tool_rounds: u32,
    /// `[tools] max_calls_per_turn`.
    pub max_calls_per_turn: usize,
    /// `[model] max_tokens`: the answer's limit on the first call.
    pub max_tokens: u32,
    /// `[recovery] extra_tokens`: what a retry of a cut answer may add.
    pub extra_tokens: u32,
    /// Whether `[model] fallback_model` is set.
    pub fallback: bool,
    /// Whether the door may archive its conversation's oldest turns when
    /// the context overflows (a tick may; an ask's conversation is not its
    /// own to shorten, so its overflow ends it).
    pub shrinks: bool,
}

/// A tool call the model made, as the step needs to know it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AskedCall {
    /// The tool's name.
    pub name: String,
    /// Whether it writes (the brake is asked before it runs).
    pub writes: bool,
}

/// A model turn, as the step needs to know it.
#[derive(Debug, Clone, PartialEq)]
pub enum Turn {
    /// The model answered; these are the names of the tools it called, in
    /// order (none: it is done).
    /// The model answered.
    Answered {
        /// The tools it called, in order.
        calls: Vec<AskedCall>,
        /// Why it stopped.
        stop: Stop,
        /// The stop reason as the provider gave it.
        stop_reason: Option<String>,
        /// Whether the turn holds any text or tool call.
        said_something: bool,
    },
    /// The call failed (after the provider's own retries).
    Failed(Failure),
}

/// What to do with one tool call of the turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Call {
    /// Run it.
    Run,
    /// Ask the brake first, then tell [`Step::braked`] what it said.
    Check,
    /// Answer it with this error instead of running it. Every call gets a
    /// result, run or not, or the next request would be malformed.
    Refuse(String),
}

/// What comes after the calls are answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Then {
    /// Call the model with the results.
    CallAgain,
    /// The tick's model work is done.
    Stop,
    /// Ask again, the turn dropped, with this limit for the answer.
    Retry {
        /// The new limit.
        max_tokens: u32,
    },
    /// Ask again, the turn dropped, of `[model] fallback_model`.
    Fallback,
    /// Archive the conversation's oldest turns down to at most half of it
    /// and ask again, the turn dropped (reduced context).
    Shrink,
    /// Ask again, the turn dropped, telling the model what was wrong with
    /// it (tool arguments that are not JSON): its one second chance.
    Correct(String),
}

/// The step's decision for one turn.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    /// To record on the tick, in order (the first decides its class).
    pub failures: Vec<Failure>,
    /// Whether the turn is kept in the conversation (and sent back).
    pub keep: bool,
    /// One entry per tool call of the turn, in the turn's order.
    pub calls: Vec<Call>,
    /// What follows.
    pub then: Then,
}

/// The state of one tick's tool loop.
#[derive(Debug, Clone)]
pub struct Step {
    limits: Limits,
    rounds: u32,
    retried_cut: bool,
    tried_fallback: bool,
    shrunk: bool,
    corrected: bool,
    /// Tool calls that failed and went back to the model as errors: not
    /// the tick's failure unless the model cannot finish within its rounds.
    tool_failures: Vec<Failure>,
}

impl Step {
    /// A loop that has run no rounds yet.
    pub fn new(limits: Limits) -> Step {
        Step {
            limits,
            rounds: 0,
            retried_cut: false,
            tried_fallback: false,
            shrunk: false,
            corrected: false,
            tool_failures: Vec::new(),
        }
    }

    /// Rounds of tool calls answered so far.
    pub fn rounds(&self) -> u32 {
        self.rounds
    }

    /// A tool call failed, and its error went back to the model: the model
    /// may recover (try another way, answer anyway). Only if it cannot
    /// finish within its rounds does the failure become the tick's.
    pub fn tool_failed(&mut self, failure: Failure) {
        self.tool_failures.push(failure);
    }

    /// The tool failures the model recovered from, so far.
    pub fn tool_failures(&self) -> &[Failure] {
        &self.tool_failures
    }

    /// The brake's answer on a [`Call::Check`], `denied` its refusal if it
    /// refused: the call runs (`None`), or the refusal goes back to the
    /// model as the call's result and counts as a failed tool call (the
    /// model may read the file and try again).
    pub fn braked(&mut self, name: &str, denied: Option<String>) -> Option<String> {
        let why = denied?;
        self.tool_failed(Failure::new(
            FailureKind::ToolFailed,
            format!("{name}: {why}"),
        ));
        Some(why)
    }

    /// What an overflowing context leads to: one shrink where the door
    /// can, else the end of the exchange, saying why.
    fn overflowed(&mut self, reason: &str) -> Decision {
        if !self.limits.shrinks {
            return stop(
                vec![Failure::new(
                    FailureKind::Context,
                    "the question and its context do not fit the model's context window; \
                     ask with less attached",
                )],
                Vec::new(),
            );
        }
        if !self.shrunk {
            self.shrunk = true;
            return again(Then::Shrink);
        }
        stop(
            vec![Failure::new(
                FailureKind::Context,
                format!(
                    "the conversation did not fit the model's context window \
                     ({reason}), even after its oldest turns were archived"
                ),
            )],
            Vec::new(),
        )
    }

    /// Decides what follows `turn`.
    pub fn next(&mut self, turn: Turn) -> Decision {
        match turn {
            Turn::Failed(failure) => self.failed(failure),
            Turn::Answered {
                calls,
                stop,
                stop_reason,
                said_something,
            } => {
                let reason = stop_reason.unwrap_or_else(|| format!("{stop:?}").to_lowercase());
                if let Some(decided) = self.stopped(stop, &reason, said_something) {
                    return decided;
                }
                if calls.is_empty() {
                    let mut done = self::stop(Vec::new(), Vec::new());
                    // An empty turn would be refused by the API when sent
                    // back, and a heal would restore it: it is never kept.
                    done.keep = said_something;
                    return done;
                }
                self.run_or_refuse(&calls)
            }
        }
    }

    /// A call of the model that failed: one shrink for an overflow, one
    /// correction for a malformed call, else the end.
    fn failed(&mut self, failure: Failure) -> Decision {
        match failure.kind {
            FailureKind::Context if !self.shrunk || !self.limits.shrinks => {
                self.overflowed(&failure.detail)
            }
            FailureKind::MalformedCall if !self.corrected => {
                self.corrected = true;
                again(Then::Correct(failure.detail))
            }
            _ => stop(vec![failure], Vec::new()),
        }
    }

    /// What a turn that did not end whole leads to (cut, overflowed,
    /// refused, paused), or `None` for a whole one.
    fn stopped(&mut self, stop_kind: Stop, reason: &str, said_something: bool) -> Option<Decision> {
        Some(match stop_kind {
            Stop::Truncated if !self.retried_cut => {
                self.retried_cut = true;
                again(Then::Retry {
                    max_tokens: self
                        .limits
                        .max_tokens
                        .saturating_add(self.limits.extra_tokens),
                })
            }
            Stop::Truncated => stop(
                vec![model_failure(format!(
                    "the model's answer was cut (stop reason: {reason}) even with \
                     [recovery] extra_tokens = {} more; nothing of it was kept",
                    self.limits.extra_tokens
                ))],
                Vec::new(),
            ),
            Stop::Overflowed => self.overflowed(&format!("stop reason: {reason}")),
            Stop::Refused if self.limits.fallback && !self.tried_fallback => {
                self.tried_fallback = true;
                again(Then::Fallback)
            }
            Stop::Refused => stop(
                vec![model_failure(format!(
                    "the model refused (stop reason: {reason}); its words are in the \
                     tick's report, not in the conversation"
                ))],
                Vec::new(),
            ),
            Stop::Paused if self.rounds < self.limits.max_tool_rounds && said_something => {
                self.rounds += 1;
                Decision {
                    failures: Vec::new(),
                    keep: true,
                    calls: Vec::new(),
                    then: Then::CallAgain,
                }
            }
            Stop::Paused | Stop::Complete => return None,
        })
    }

    /// A turn with calls: each runs (a writing one after the brake's
    /// check) or is refused, by the round and per-turn limits.
    fn run_or_refuse(&mut self, calls: &[AskedCall]) -> Decision {
        let Limits {
            max_tool_rounds,
            max_calls_per_turn: cap,
            ..
        } = self.limits;
        if self.rounds >= max_tool_rounds {
            let failure = Failure::new(
                FailureKind::TooManyRounds,
                format!(
                    "the model asked for tools after {} rounds ([tick] max_tool_rounds = {max_tool_rounds})",
                    self.rounds
                ),
            );
            let refused = calls
                .iter()
                .map(|_| Call::Refuse("not run: this tick's tool-round limit was reached".into()))
                .collect();
            self.rounds += 1;
            // The tool errors the model never got past come first: they,
            // not the round limit, are what went wrong.
            let mut failures = self.tool_failures.clone();
            failures.push(failure);
            let mut done = stop(failures, refused);
            done.keep = true;
            return done;
        }
        self.rounds += 1;
        let mut failures = Vec::new();
        if calls.len() > cap {
            failures.push(Failure::new(
                FailureKind::MalformedCall,
                format!(
                    "the model made {} tool calls in one turn; the first {cap} ran \
                     ([tools] max_calls_per_turn = {cap})",
                    calls.len()
                ),
            ));
        }
        let calls = calls
            .iter()
            .enumerate()
            .map(|(n, asked)| match (n < cap, asked.writes) {
                (true, true) => Call::Check,
                (true, false) => Call::Run,
                (false, _) => Call::Refuse(format!(
                    "not run: at most {cap} tool calls per turn ([tools] max_calls_per_turn)"
                )),
            })
            .collect();
        Decision {
            failures,
            keep: true,
            calls,
            then: Then::CallAgain,
        }
    }
}

/// Stop after this turn; it is not kept (callers that keep it say so).
fn stop(failures: Vec<Failure>, calls: Vec<Call>) -> Decision {
    Decision {
        failures,
        keep: false,
        calls,
        then: Then::Stop,
    }
}

/// Drop this turn and ask again.
fn again(then: Then) -> Decision {
    Decision {
        failures: Vec::new(),
        keep: false,
        calls: Vec::new(),
        then,
    }
}

fn model_failure(detail: String) -> Failure {
    Failure::new(FailureKind::Model, detail)
}

/// What a tool call that ran returns to the model (its content, whether it
/// is an error) and the failure it puts on the tick, if it failed.
pub fn answer(outcome: Result<String, ToolError>) -> (String, bool, Option<Failure>) {
    match outcome {
        Ok(text) => (text, false, None),
        Err(e) => (e.to_string(), true, Some(Failure::of_tool(&e))),
    }
}

#[cfg(test)]
#[path = "step_tests.rs"]
mod tests;
