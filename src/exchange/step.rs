//! The agent step: what the tick does after each model turn, decided from
//! plain values. Given the turn (the tools it asked for, or the failure of
//! the call), [`Step::next`] says which calls to run, which to answer with a
//! refusal, which failures to record, and whether to call the model again.
//! It touches no file, no network and no clock, so round limits, per-turn
//! caps, stop reasons and failure classes are tested here with plain
//! values; the tick's driver (`tick/mod.rs`) performs what it decides. The
//! brake's refusals will be decisions of this step too.
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
}

/// A model turn, as the step needs to know it.
#[derive(Debug, Clone, PartialEq)]
pub enum Turn {
    /// The model answered; these are the names of the tools it called, in
    /// order (none: it is done).
    /// The model answered.
    Answered {
        /// The tools it called, by name, in order.
        calls: Vec<String>,
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

    /// Decides what follows `turn`.
    pub fn next(&mut self, turn: Turn) -> Decision {
        let (calls, stop_kind, reason, said_something) = match turn {
            Turn::Failed(failure) if failure.kind == FailureKind::Context && !self.shrunk => {
                self.shrunk = true;
                return again(Then::Shrink);
            }
            Turn::Failed(failure)
                if failure.kind == FailureKind::MalformedCall && !self.corrected =>
            {
                self.corrected = true;
                return again(Then::Correct(failure.detail));
            }
            Turn::Failed(failure) => return stop(vec![failure], Vec::new()),
            Turn::Answered {
                calls,
                stop,
                stop_reason,
                said_something,
            } => (calls, stop, stop_reason, said_something),
        };
        let reason = reason.unwrap_or_else(|| format!("{stop_kind:?}").to_lowercase());
        match stop_kind {
            Stop::Truncated if !self.retried_cut => {
                self.retried_cut = true;
                return again(Then::Retry {
                    max_tokens: self
                        .limits
                        .max_tokens
                        .saturating_add(self.limits.extra_tokens),
                });
            }
            Stop::Truncated => {
                return stop(
                    vec![model_failure(format!(
                        "the model's answer was cut (stop reason: {reason}) even with \
                         [recovery] extra_tokens = {} more; nothing of it was kept",
                        self.limits.extra_tokens
                    ))],
                    Vec::new(),
                )
            }
            Stop::Overflowed if !self.shrunk => {
                self.shrunk = true;
                return again(Then::Shrink);
            }
            Stop::Overflowed => {
                return stop(
                    vec![Failure {
                        kind: FailureKind::Context,
                        detail: format!(
                            "the conversation did not fit the model's context window \
                             (stop reason: {reason}), even after its oldest turns were archived"
                        ),
                        outage: false,
                        fix: None,
                    }],
                    Vec::new(),
                )
            }
            Stop::Refused if self.limits.fallback && !self.tried_fallback => {
                self.tried_fallback = true;
                return again(Then::Fallback);
            }
            Stop::Refused => {
                return stop(
                    vec![model_failure(format!(
                        "the model refused (stop reason: {reason}); its words are in the \
                         tick's report, not in the conversation"
                    ))],
                    Vec::new(),
                )
            }
            Stop::Paused if self.rounds < self.limits.max_tool_rounds && said_something => {
                self.rounds += 1;
                return Decision {
                    failures: Vec::new(),
                    keep: true,
                    calls: Vec::new(),
                    then: Then::CallAgain,
                };
            }
            Stop::Paused | Stop::Complete => {}
        }
        if calls.is_empty() {
            let mut done = stop(Vec::new(), Vec::new());
            // An empty turn would be refused by the API when sent back,
            // and a heal would restore it: it is never kept.
            done.keep = said_something;
            return done;
        }
        let Limits {
            max_tool_rounds,
            max_calls_per_turn: cap,
            ..
        } = self.limits;
        if self.rounds >= max_tool_rounds {
            let failure = Failure {
                kind: FailureKind::TooManyRounds,
                detail: format!(
                    "the model asked for tools after {} rounds ([tick] max_tool_rounds = {max_tool_rounds})",
                    self.rounds
                ),
                outage: false,
                fix: None,
            };
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
            failures.push(Failure {
                kind: FailureKind::MalformedCall,
                detail: format!(
                    "the model made {} tool calls in one turn; the first {cap} ran \
                     ([tools] max_calls_per_turn = {cap})",
                    calls.len()
                ),
                outage: false,
                fix: None,
            });
        }
        let calls = (0..calls.len())
            .map(|n| {
                if n < cap {
                    Call::Run
                } else {
                    Call::Refuse(format!(
                        "not run: at most {cap} tool calls per turn ([tools] max_calls_per_turn)"
                    ))
                }
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
    Failure {
        kind: FailureKind::Model,
        detail,
        outage: false,
        fix: None,
    }
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
mod tests {
    use super::*;

    fn step(rounds: u32, cap: usize) -> Step {
        Step::new(Limits {
            max_tool_rounds: rounds,
            max_calls_per_turn: cap,
            max_tokens: 1000,
            extra_tokens: 500,
            fallback: false,
        })
    }

    fn answered(names: &[&str]) -> Turn {
        Turn::Answered {
            calls: names.iter().map(|n| n.to_string()).collect(),
            stop: Stop::Complete,
            stop_reason: Some("end_turn".into()),
            said_something: true,
        }
    }

    fn stopped(stop: Stop, reason: &str, calls: &[&str]) -> Turn {
        Turn::Answered {
            calls: calls.iter().map(|n| n.to_string()).collect(),
            stop,
            stop_reason: Some(reason.into()),
            said_something: true,
        }
    }

    #[test]
    fn a_turn_without_tool_calls_ends_the_tick_cleanly_and_is_kept() {
        let decision = step(3, 8).next(answered(&[]));
        assert_eq!(decision.then, Then::Stop);
        assert!(decision.keep && decision.failures.is_empty());
    }

    #[test]
    fn an_empty_turn_is_never_kept() {
        let empty = Turn::Answered {
            calls: vec![],
            stop: Stop::Complete,
            stop_reason: Some("end_turn".into()),
            said_something: false,
        };
        let decision = step(3, 8).next(empty);
        assert_eq!((decision.keep, decision.then), (false, Then::Stop));
        assert!(decision.failures.is_empty());
    }

    #[test]
    fn a_cut_answer_is_retried_once_with_more_room_then_fails_naming_the_stop_reason() {
        let mut s = step(3, 8);
        let first = s.next(stopped(Stop::Truncated, "max_tokens", &["write"]));
        assert_eq!(first.then, Then::Retry { max_tokens: 1500 });
        assert!(!first.keep, "a cut turn is never kept");
        assert!(first.calls.is_empty(), "a cut tool call never runs");
        let second = s.next(stopped(Stop::Truncated, "length", &[]));
        assert_eq!((second.keep, second.then), (false, Then::Stop));
        assert_eq!(second.failures[0].kind, FailureKind::Model);
        assert!(second.failures[0].detail.contains("stop reason: length"));
    }

    #[test]
    fn a_full_context_window_archives_old_turns_once_then_is_a_context_insufficiency() {
        let mut s = step(3, 8);
        let first = s.next(stopped(
            Stop::Overflowed,
            "model_context_window_exceeded",
            &["write"],
        ));
        assert_eq!(first.then, Then::Shrink);
        assert!(!first.keep && first.calls.is_empty() && first.failures.is_empty());
        let second = s.next(stopped(
            Stop::Overflowed,
            "model_context_window_exceeded",
            &[],
        ));
        assert_eq!((second.keep, second.then), (false, Then::Stop));
        assert_eq!(second.failures[0].kind, FailureKind::Context);
        assert!(second.failures[0]
            .detail
            .contains("model_context_window_exceeded"));

        // The API's 400 ("prompt is too long") takes the same road.
        let too_long = Failure {
            kind: FailureKind::Context,
            detail: "prompt is too long".into(),
            outage: false,
            fix: None,
        };
        let mut s = step(3, 8);
        assert_eq!(s.next(Turn::Failed(too_long.clone())).then, Then::Shrink);
        let last = s.next(Turn::Failed(too_long.clone()));
        assert_eq!(last, stop(vec![too_long], vec![]));
    }

    #[test]
    fn a_failed_tool_is_the_ticks_failure_only_if_the_model_cannot_finish() {
        let refused = Failure {
            kind: FailureKind::ToolFailed,
            detail: "write refused: memory/prompt.md".into(),
            outage: false,
            fix: None,
        };
        // The model reads the error and finishes: no failure.
        let mut s = step(3, 8);
        s.next(answered(&["write"]));
        s.tool_failed(refused.clone());
        let done = s.next(answered(&[]));
        assert!(done.failures.is_empty());
        assert_eq!(s.tool_failures().len(), 1, "recorded as a recovery");

        // It keeps calling until the rounds run out: the tool's failure leads.
        let mut s = step(1, 8);
        s.next(answered(&["write"]));
        s.tool_failed(refused.clone());
        let last = s.next(answered(&["write"]));
        assert_eq!(last.failures[0], refused);
        assert_eq!(last.failures[1].kind, FailureKind::TooManyRounds);
    }

    #[test]
    fn malformed_arguments_get_one_second_chance() {
        let malformed = Failure {
            kind: FailureKind::MalformedCall,
            detail: "the arguments of tool call write are not JSON".into(),
            outage: false,
            fix: None,
        };
        let mut s = step(3, 8);
        let first = s.next(Turn::Failed(malformed.clone()));
        assert_eq!(first.then, Then::Correct(malformed.detail.clone()));
        assert!(first.failures.is_empty());
        let second = s.next(Turn::Failed(malformed.clone()));
        assert_eq!(second, stop(vec![malformed], vec![]));
    }

    #[test]
    fn a_refusal_is_a_model_limitation_and_the_fallback_gets_one_try() {
        let refused = || stopped(Stop::Refused, "refusal", &[]);
        let decision = step(3, 8).next(refused());
        assert!(!decision.keep);
        assert_eq!(decision.failures[0].kind, FailureKind::Model);
        assert!(decision.failures[0].detail.contains("refusal"));

        let mut s = Step::new(Limits {
            fallback: true,
            ..step(3, 8).limits
        });
        assert_eq!(s.next(refused()).then, Then::Fallback);
        let last = s.next(refused());
        assert_eq!(last.then, Then::Stop);
        assert_eq!(last.failures.len(), 1);
    }

    #[test]
    fn a_paused_turn_is_kept_and_sent_back_to_continue() {
        let decision = step(3, 8).next(stopped(Stop::Paused, "pause_turn", &[]));
        assert_eq!((decision.keep, decision.then), (true, Then::CallAgain));
    }

    #[test]
    fn tool_calls_run_and_the_model_is_called_again() {
        let mut s = step(3, 8);
        let decision = s.next(answered(&["read", "send"]));
        assert_eq!(decision.calls, vec![Call::Run, Call::Run]);
        assert_eq!(decision.then, Then::CallAgain);
        assert!(decision.failures.is_empty());
        assert_eq!(s.rounds(), 1);
    }

    #[test]
    fn past_the_round_limit_every_call_is_refused_and_the_tick_stops_as_a_violation() {
        let mut s = step(2, 8);
        for _ in 0..2 {
            assert_eq!(s.next(answered(&["read"])).then, Then::CallAgain);
        }
        let decision = s.next(answered(&["read", "write"]));
        assert_eq!(decision.then, Then::Stop);
        assert_eq!(decision.calls.len(), 2, "every call still gets a result");
        assert!(decision.calls.iter().all(|c| matches!(c, Call::Refuse(_))));
        assert_eq!(decision.failures[0].kind, FailureKind::TooManyRounds);
        assert!(decision.failures[0].detail.contains("after 2 rounds"));
        assert_eq!(
            super::super::class::classify(&decision.failures),
            super::super::class::Class::ContractViolation
        );
    }

    #[test]
    fn calls_past_the_per_turn_cap_are_refused_but_the_first_ones_run() {
        let decision = step(5, 2).next(answered(&["a", "b", "c"]));
        assert_eq!(decision.calls[..2], [Call::Run, Call::Run]);
        let Call::Refuse(why) = &decision.calls[2] else {
            panic!("the third call ran")
        };
        assert!(why.contains("max_calls_per_turn"));
        assert_eq!(decision.failures[0].kind, FailureKind::MalformedCall);
        assert_eq!(decision.then, Then::CallAgain);
    }

    #[test]
    fn a_failed_model_call_is_recorded_and_stops_the_tick() {
        let failure = Failure {
            kind: FailureKind::Model,
            detail: "HTTP 529".into(),
            outage: true,
            fix: None,
        };
        let decision = step(3, 8).next(Turn::Failed(failure.clone()));
        assert_eq!(decision, stop(vec![failure], vec![]));
    }

    #[test]
    fn a_failed_tool_is_an_error_result_and_a_failure_of_its_kind() {
        let (content, is_error, failure) = answer(Err(ToolError::Unknown("fly".into())));
        assert!(is_error);
        assert_eq!(content, "there is no tool named fly");
        assert_eq!(failure.unwrap().kind, FailureKind::UnknownTool);
        assert_eq!(answer(Ok("done".into())), ("done".into(), false, None));
    }
}
