//! How a tick ended. The exit code is the contract between a tick and its
//! supervisor (DESIGN 3), and the class is a pure function of the tick's
//! failure record (DESIGN 7): the same record always gets the same class, so
//! the healer's decisions can be replayed and tested.

use serde::{Deserialize, Serialize};

use crate::model::ModelError;
use crate::tools::ToolError;

/// How a tick ended (DESIGN 7's classes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Class {
    /// Nothing went wrong.
    Ok,
    /// Not run: the budget is spent or the agent sleeps.
    Skipped,
    /// The identity or the context could not be assembled.
    ContextInsufficiency,
    /// The model called a tool that does not exist.
    CoverageGap,
    /// A tool failed, timed out or was refused.
    DispatchMiss,
    /// The model API failed, refused or truncated.
    ModelLimitation,
    /// Malformed calls, or more tool rounds than allowed.
    ContractViolation,
    /// The tick died: a signal, a panic, the time limit.
    Crash,
}

impl Class {
    /// The `hearth tick` exit code for this class. `crash` has none of its
    /// own: it is whatever else happened (a signal, a panic, the time limit).
    pub fn exit_code(self) -> i32 {
        match self {
            Class::Ok => 0,
            Class::Skipped => 3,
            Class::ContextInsufficiency => 11,
            Class::CoverageGap => 12,
            Class::DispatchMiss => 13,
            Class::ModelLimitation => 14,
            Class::ContractViolation => 15,
            Class::Crash => 101,
        }
    }

    /// The class of a finished child: its exit code, or `None` when a
    /// signal ended it.
    pub fn from_exit(code: Option<i32>) -> Class {
        match code {
            Some(0) => Class::Ok,
            Some(3) => Class::Skipped,
            Some(11) => Class::ContextInsufficiency,
            Some(12) => Class::CoverageGap,
            Some(13) => Class::DispatchMiss,
            Some(14) => Class::ModelLimitation,
            Some(15) => Class::ContractViolation,
            _ => Class::Crash,
        }
    }

    /// The class as DESIGN and the ledger spell it (`contract-violation`).
    pub fn as_str(self) -> &'static str {
        match self {
            Class::Ok => "ok",
            Class::Skipped => "skipped",
            Class::ContextInsufficiency => "context-insufficiency",
            Class::CoverageGap => "coverage-gap",
            Class::DispatchMiss => "dispatch-miss",
            Class::ModelLimitation => "model-limitation",
            Class::ContractViolation => "contract-violation",
            Class::Crash => "crash",
        }
    }

    /// Whether the healer counts this tick as a failure.
    pub fn is_failure(self) -> bool {
        !matches!(self, Class::Ok | Class::Skipped)
    }
}

/// What went wrong, as facts rather than prose.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FailureKind {
    /// The identity or the context could not be assembled.
    Context,
    /// The model called a tool that does not exist.
    UnknownTool,
    /// An existing tool failed, timed out or was refused.
    ToolFailed,
    /// The model API failed after retries, timed out, refused or truncated.
    Model,
    /// Malformed tool arguments or output.
    MalformedCall,
    /// The tool loop went past `[tick] max_tool_rounds`.
    TooManyRounds,
}

/// One thing that went wrong in a tick.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Failure {
    /// What kind of thing.
    pub kind: FailureKind,
    /// What happened, in words for the operator.
    pub detail: String,
    /// The provider was unreachable, rate-limited or overloaded: not the
    /// agent's fault, so the healer does not count it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub outage: bool,
    /// Set when the failure is the operator's setting, not the agent or the
    /// provider (a bad key, a wrong `base_url` or model name): what to fix.
    /// Flared at once; no number of heals would help.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

/// One bounded recovery a tick tried before failing (DESIGN 7), as its
/// ledger line records it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Recovery {
    /// What was tried: `retry with more tokens`, `fallback model`,
    /// `reduced context`, `malformed call returned to the model`,
    /// `tool error returned to the model`.
    pub strategy: String,
    /// What it was about (the tool error, the fallback's name…).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub detail: String,
    /// Tokens it was allowed beyond `[model] max_tokens`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub extra_tokens: u32,
    /// Wall-clock milliseconds from the attempt to the tick's end.
    #[serde(default)]
    pub wall_ms: u64,
    /// `recovered` (the tick ended well) or `failed`.
    pub outcome: String,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl Failure {
    /// A failure of `kind`, as `detail` says, that is neither an outage
    /// nor has a setting to fix.
    pub fn new(kind: FailureKind, detail: impl Into<String>) -> Failure {
        Failure {
            kind,
            detail: detail.into(),
            outage: false,
            fix: None,
        }
    }

    /// A failed model call as the tick records it: a malformed tool call is
    /// the model breaking the contract, anything else is the model failing
    /// (an outage, when the provider was down rather than wrong).
    pub fn of_model(e: &ModelError) -> Failure {
        let kind = match e {
            ModelError::Malformed(_) => FailureKind::MalformedCall,
            e if e.is_context_overflow() => FailureKind::Context,
            _ => FailureKind::Model,
        };
        Failure {
            kind,
            detail: e.to_string(),
            // A key missing from the environment is a wait as an outage is:
            // no heal fixes it, the messages wait, the ticks back off until
            // the operator sets it.
            outage: e.is_outage() || matches!(e, ModelError::MissingKey { .. }),
            fix: e.fix(),
        }
    }

    /// A failed tool call as the tick records it.
    pub fn of_tool(e: &ToolError) -> Failure {
        let kind = match e {
            ToolError::Unknown(_) => FailureKind::UnknownTool,
            ToolError::BadInput { .. } => FailureKind::MalformedCall,
            ToolError::Refused { .. } | ToolError::Failed { .. } => FailureKind::ToolFailed,
        };
        Failure {
            kind,
            detail: e.to_string(),
            outage: false,
            fix: None,
        }
    }
}

/// The class of a tick from its failure record: the first failure decides,
/// because later failures are usually consequences of it.
pub fn classify(failures: &[Failure]) -> Class {
    match failures.first().map(|f| f.kind) {
        None => Class::Ok,
        Some(FailureKind::Context) => Class::ContextInsufficiency,
        Some(FailureKind::UnknownTool) => Class::CoverageGap,
        Some(FailureKind::ToolFailed) => Class::DispatchMiss,
        Some(FailureKind::Model) => Class::ModelLimitation,
        Some(FailureKind::MalformedCall | FailureKind::TooManyRounds) => Class::ContractViolation,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_round_trip() {
        for class in [
            Class::Ok,
            Class::Skipped,
            Class::ContextInsufficiency,
            Class::CoverageGap,
            Class::DispatchMiss,
            Class::ModelLimitation,
            Class::ContractViolation,
            Class::Crash,
        ] {
            assert_eq!(Class::from_exit(Some(class.exit_code())), class);
        }
        assert_eq!(Class::from_exit(None), Class::Crash);
        assert_eq!(Class::from_exit(Some(1)), Class::Crash);
    }

    #[test]
    fn the_first_failure_decides() {
        let f = |kind| Failure {
            kind,
            detail: String::new(),
            outage: false,
            fix: None,
        };
        assert_eq!(classify(&[]), Class::Ok);
        assert_eq!(
            classify(&[f(FailureKind::UnknownTool), f(FailureKind::Model)]),
            Class::CoverageGap
        );
        assert_eq!(
            classify(&[f(FailureKind::TooManyRounds)]),
            Class::ContractViolation
        );
    }

    #[test]
    fn a_model_outage_is_a_model_failure_the_healer_forgives() {
        let down = Failure::of_model(&ModelError::Http {
            status: 529,
            message: "overloaded".into(),
            attempts: 3,
        });
        assert_eq!((down.kind, down.outage), (FailureKind::Model, true));
        let bad = Failure::of_model(&ModelError::Malformed("not JSON".into()));
        assert_eq!((bad.kind, bad.outage), (FailureKind::MalformedCall, false));
        let unknown = Failure::of_tool(&ToolError::Unknown("fly".into()));
        assert_eq!(classify(&[unknown]), Class::CoverageGap);
    }

    #[test]
    fn classes_serialise_as_the_design_names_them() {
        let s = serde_json::to_string(&Class::ContextInsufficiency).unwrap();
        assert_eq!(s, "\"context-insufficiency\"");
    }
}
