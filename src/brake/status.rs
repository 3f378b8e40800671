//! `hearth brake status` and `override`, as the library answers them: which
//! required reads the conversation shows read, and the operator's override
//! granted (saved, and logged in `state/brake.jsonl`). The command only
//! prints.

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::gate::Override;
use super::log::{self, BrakeLine};
use super::{reads_in_context, required, waiting};
use crate::config::{BrakeMode, Config};
use crate::conversation::store::{Conversation, ConversationError};
use crate::home::Home;
use crate::repo::Repo;
use crate::tools::sandbox::{self, Area};

/// One required read and where it stands.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RequiredRead {
    /// Its path in the home.
    pub path: String,
    /// `read`, `not read`, or `missing`.
    pub state: &'static str,
}

/// The brake as it stands before the next tick.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BrakeStatus {
    /// `[brake] mode`.
    pub mode: BrakeMode,
    /// The required reads, in order.
    pub required: Vec<RequiredRead>,
    /// Ticks the operator's override still opens.
    pub override_ticks_left: u32,
    /// Why it was granted.
    #[serde(skip)]
    pub override_reason: String,
}

/// Reads what the next tick would be required to read, and what the
/// conversation shows read.
pub fn status(home: &Home, config: &Config) -> Result<BrakeStatus, ConversationError> {
    let boot = crate::boot::boot(home, &config.boot);
    let required = required::required(home, &boot.required_reads, &config.brake.must_read);
    let repo = Repo::open(home.root()).ok();
    let (conversation, _) = Conversation::read(home, repo.as_ref())?;
    let reads = reads_in_context(&conversation.messages, |raw| {
        sandbox::resolve(home, raw, &[Area::Memory, Area::State, Area::Outbox])
            .ok()
            .map(|p| home.relative(&p))
    });
    let open = waiting(&required, &reads);
    let rows = required
        .iter()
        .map(|r| RequiredRead {
            path: r.path.clone(),
            state: match open.iter().find(|w| w.path == r.path) {
                Some(w) if w.missing => "missing",
                Some(_) => "not read",
                None => "read",
            },
        })
        .collect();
    let ov = Override::load(home);
    Ok(BrakeStatus {
        mode: config.brake.mode,
        required: rows,
        override_ticks_left: ov.ticks_left,
        override_reason: ov.reason,
    })
}

/// Why an override was not granted.
#[derive(Debug, thiserror::Error)]
pub enum OverrideError {
    /// No reason was given.
    #[error("--reason must say why")]
    NoReason,
    /// The override or the log line could not be written.
    #[error(transparent)]
    Write(#[from] crate::atomic::WriteError),
}

impl OverrideError {
    /// What the operator can do about it.
    pub fn hint(&self) -> String {
        match self {
            OverrideError::NoReason => {
                "the reason goes into state/brake.jsonl for whoever reads it later".into()
            }
            OverrideError::Write(e) => e.hint(),
        }
    }
}

/// Opens the brake for the next `ticks` ticks, saying why in the log.
pub fn grant_override(
    home: &Home,
    ticks: u32,
    reason: &str,
    now: DateTime<Utc>,
) -> Result<(), OverrideError> {
    if reason.trim().is_empty() {
        return Err(OverrideError::NoReason);
    }
    Override {
        ticks_left: ticks,
        reason: reason.to_string(),
        granted: Some(now),
    }
    .save(home)?;
    log::append(
        home,
        &BrakeLine {
            v: log::VERSION,
            time: now,
            tick: None,
            tool: "hearth brake override".into(),
            target: String::new(),
            decision: "override-granted".into(),
            waiting: Vec::new(),
            reason: Some(format!("{ticks} tick(s): {reason}")),
        },
    )?;
    Ok(())
}
