//! Tests of `exchange/step.rs`.

use super::*;

fn step(rounds: u32, cap: usize) -> Step {
    Step::new(Limits {
        max_tool_rounds: rounds,
        max_calls_per_turn: cap,
        max_tokens: 1000,
        extra_tokens: 500,
        fallback: false,
        shrinks: true,
    })
}

/// The calls of a turn by name; `write`, `append` and `edit` write.
fn asked(names: &[&str]) -> Vec<AskedCall> {
    names
        .iter()
        .map(|n| AskedCall {
            name: n.to_string(),
            writes: ["write", "append", "edit"].contains(n),
        })
        .collect()
}

fn answered(names: &[&str]) -> Turn {
    Turn::Answered {
        calls: asked(names),
        stop: Stop::Complete,
        stop_reason: Some("end_turn".into()),
        said_something: true,
    }
}

fn stopped(stop: Stop, reason: &str, calls: &[&str]) -> Turn {
    Turn::Answered {
        calls: asked(calls),
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
    let mut s = step(3, 8);
    assert_eq!(s.next(Turn::Failed(too_long())).then, Then::Shrink);
    let last = s.next(Turn::Failed(too_long()));
    assert_eq!(last, stop(vec![too_long()], vec![]));
}

/// The API's 400 for a conversation its context window cannot hold.
fn too_long() -> Failure {
    Failure::new(FailureKind::Context, "prompt is too long")
}

/// A step for a door that does not own its conversation (an ask).
fn asking() -> Step {
    Step::new(Limits {
        shrinks: false,
        ..step(3, 8).limits
    })
}

#[test]
fn an_ask_cannot_shrink_a_conversation_it_does_not_own_so_an_overflow_ends_it() {
    let over = asking().next(stopped(
        Stop::Overflowed,
        "model_context_window_exceeded",
        &[],
    ));
    assert_eq!((over.keep, over.then), (false, Then::Stop));
    assert_eq!(over.failures[0].kind, FailureKind::Context);
    assert!(over.failures[0].detail.contains("ask with less attached"));
    let over = asking().next(Turn::Failed(too_long()));
    assert_eq!(over.then, Then::Stop);
    assert!(over.failures[0].detail.contains("ask with less attached"));
}

#[test]
fn a_writing_call_waits_for_the_brake_and_its_refusal_is_a_failed_call() {
    let mut s = step(3, 8);
    let decision = s.next(answered(&["read", "write", "edit"]));
    assert_eq!(decision.calls, [Call::Run, Call::Check, Call::Check]);
    assert_eq!(s.braked("write", None), None, "the brake let it through");
    let why = "read memory/prompt.md first".to_string();
    assert_eq!(s.braked("edit", Some(why.clone())), Some(why));
    assert_eq!(s.tool_failures().len(), 1);
    assert_eq!(
        s.tool_failures()[0].detail,
        "edit: read memory/prompt.md first"
    );
    // Past the per-turn cap a writing call is refused before the brake.
    let mut s = step(3, 1);
    let decision = s.next(answered(&["write", "write"]));
    assert_eq!(decision.calls[0], Call::Check);
    assert!(matches!(decision.calls[1], Call::Refuse(_)));
}

#[test]
fn a_failed_tool_is_the_ticks_failure_only_if_the_model_cannot_finish() {
    let refused = Failure::new(FailureKind::ToolFailed, "write refused: memory/prompt.md");
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
    let malformed = Failure::new(
        FailureKind::MalformedCall,
        "the arguments of tool call write are not JSON",
    );
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
