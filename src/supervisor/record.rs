//! The ledger line of one tick, built from how the child ended and what
//! its report says; and the inbox messages a tick that never finished gives
//! back.

use chrono::{DateTime, Utc};

use crate::exchange::class::Class;
use crate::exchange::give_back::{self, Moment};
use crate::exchange::ledger::{TickRecord, Tokens};
use crate::exchange::report::TickReport;
use crate::healer;
use crate::home::Home;
use crate::mailbox::{inbox, MailboxError};

#[allow(clippy::too_many_arguments)]
pub(super) fn record_for(
    last_answer: Option<u64>,
    tick: u64,
    start: DateTime<Utc>,
    end: DateTime<Utc>,
    exit: i32,
    class: Class,
    report: Option<&TickReport>,
    note: Option<String>,
) -> TickRecord {
    let failures = report
        .filter(|_| class.is_failure())
        .map(|r| {
            r.outcome
                .failures
                .iter()
                .map(|f| f.detail.clone())
                .collect::<Vec<_>>()
                .join("; ")
        })
        .filter(|s| !s.is_empty());
    let (reply_fingerprint, quiet) = report
        .map(|r| healer::quiet::assess(last_answer, r))
        .unwrap_or((None, None));
    let outage = class.is_failure()
        && report.is_some_and(|r| {
            !r.outcome.failures.is_empty() && r.outcome.failures.iter().all(|f| f.outage)
        });
    // Every failure names the setting that fixes it: a heal cannot.
    let setting = class.is_failure()
        && report.is_some_and(|r| {
            !r.outcome.failures.is_empty() && r.outcome.failures.iter().all(|f| f.fix.is_some())
        });
    TickRecord {
        tick,
        start,
        end,
        exit,
        class,
        tokens: report
            .map(|r| Tokens {
                input: r.outcome.usage.input_tokens,
                output: r.outcome.usage.output_tokens,
                cache_read: r.outcome.usage.cache_read_tokens,
                cache_write: r.outcome.usage.cache_write_tokens,
                cache_write_1h: r.outcome.usage.cache_write_1h_tokens,
            })
            .unwrap_or_default(),
        cost_usd: report.map(|r| r.outcome.cost_usd).unwrap_or(0.0),
        tokens_by_part: report.map(|r| r.tokens_by_part.clone()).unwrap_or_default(),
        inbox: report
            .map(|r| {
                r.consumed
                    .iter()
                    .map(|(_, archived)| archived.clone())
                    .collect()
            })
            .unwrap_or_default(),
        required_reads: report.map(|r| r.required_reads.clone()).unwrap_or_default(),
        reply_fingerprint,
        quiet: quiet.filter(|_| class == Class::Ok),
        outage,
        setting,
        interrupted: false,
        disk_full: false,
        backoff_ms: None,
        stop_reason: report.and_then(|r| r.outcome.stop_reason.clone()),
        refusal: report
            .and_then(|r| r.outcome.refusals.first())
            .map(|text| text.chars().take(500).collect()),
        recoveries: report
            .map(|r| r.outcome.recoveries.clone())
            .unwrap_or_default(),
        outside: report
            .map(|r| r.outcome.effects.outside.clone())
            .unwrap_or_default(),
        proposal: report.and_then(|r| r.outcome.effects.proposal),
        requested: report
            .map(|r| r.outcome.effects.requested.clone())
            .unwrap_or_default(),
        consolidation: report.and_then(|r| r.consolidation.clone()),
        job: None,
        wrote: report
            .map(|r| {
                r.outcome
                    .effects
                    .touched
                    .iter()
                    .filter(|p| p.starts_with("memory/"))
                    .cloned()
                    .collect()
            })
            .unwrap_or_default(),
        sent: report
            .map(|r| r.outcome.effects.sent.clone())
            .unwrap_or_default(),
        handed: report
            .map(|r| {
                r.outcome
                    .effects
                    .touched
                    .iter()
                    .filter(|p| crate::exchange::claims::is_handoff(p))
                    .cloned()
                    .collect()
            })
            .unwrap_or_default(),
        unbacked: report.map(unbacked).unwrap_or_default(),
        note: note
            .or(failures)
            .or_else(|| {
                report
                    .filter(|_| class.is_failure())
                    .and_then(|r| r.error.clone())
            })
            .or_else(|| report.and_then(|r| r.skipped.clone())),
    }
}

/// The sentences of `report`'s reply that claim an act its tools did not
/// do (`exchange::claims`).
fn unbacked(report: &TickReport) -> Vec<String> {
    crate::exchange::claims::unbacked(&report.outcome.reply, &report.outcome.effects)
        .into_iter()
        .map(|c| c.words)
        .collect()
}

/// A tick that crashed, ran out of time, was stopped by a signal or lost
/// the model API midway did not finish answering what it read: its inbox
/// messages go back to `inbox/`, presented again as new to the next tick,
/// and leave its ledger line (so a heal does not give them back twice; an
/// outage tick is not in the healer's streak, so a heal would not either).
pub(super) fn give_back_messages(
    home: &Home,
    record: &mut TickRecord,
    report: Option<&TickReport>,
) -> Result<(), MailboxError> {
    let ended = Moment::Ended {
        class: record.class,
        interrupted: record.interrupted,
        outage: record.outage || record.setting,
    };
    let Some(why) = give_back::rule(ended) else {
        return Ok(());
    };
    let consumed = report.map(|r| r.consumed.as_slice()).unwrap_or_default();
    for back in inbox::give_back(home, consumed.iter().map(|(_, a)| a.as_str()))? {
        tracing::warn!("tick {}: {back} is back in the inbox: {why}", record.tick);
    }
    record.inbox.clear();
    Ok(())
}
