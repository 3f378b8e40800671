//! One tick, the door the supervisor opens (DESIGN 3), as the child process
//! `hearth tick --supervised` runs it, in phases: the budget gate
//! (`budget_gate`) → prepare ([`prepare()`], which changes nothing) →
//! set right what it found (`tidy`) → the brake's gate and the fit
//! (`preflight`) → a consolidation, if one is due and the inbox is empty
//! → the write-ahead (`write_ahead`) → the exchange
//! ([`crate::exchange::run`]) → settle (`settle`).
//!
//! The tick never commits: its supervisor does, after it exits, so a tick
//! that is killed at any point still ends in a commit of whatever it got to.

mod budget_gate;
pub mod context;
pub mod healer_note;
pub mod hooks;
mod preflight;
pub mod prepare;
pub mod sender;
mod settle;
pub mod spend;
mod tidy;
mod write_ahead;

use chrono::{DateTime, Utc};

use crate::brake::gate::Gate;
use crate::config::Config;
use crate::exchange::class::Failure;
use crate::exchange::door::{Door, TickFiles};
use crate::exchange::report::TickReport;
use crate::exchange::run::{Exchange, Opening, Toolset};
use crate::exchange::ExchangeError;
use crate::home::Home;
use crate::model;
use crate::tools::{Peering, Workdir};
pub use hooks::TestHooks;
pub use prepare::{prepare, Prepared};
use write_ahead::Left;

/// How to run one tick.
#[derive(Debug, Clone, Default)]
pub struct TickOptions {
    /// The tick's number.
    pub number: u64,
    /// The provider's API key, read from the environment by the caller.
    pub api_key: Option<String>,
    /// What a test asked of this tick (nothing, outside tests).
    pub hooks: TestHooks,
    /// The supervisor's environment, read by the caller: operator tools get
    /// the variables their manifests name from it.
    pub environment: std::collections::BTreeMap<String, String>,
    /// The job this tick runs, when it is one (DESIGN 19): its prompt is
    /// the turn, and no inbox message is taken.
    pub job: Option<crate::jobs::turn::JobTurn>,
}

/// What the supervisor hands its tick child on stdin: its last good
/// config (a hand-broken `hearth.toml` cannot reach the tick) and the job
/// the tick runs, if any.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct ChildInput {
    /// The config to run with.
    pub config: Config,
    /// The job's run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job: Option<crate::jobs::turn::JobTurn>,
}

/// Runs one tick and returns its final report (also saved for the
/// supervisor). The exit code is `report.class().exit_code()`.
pub fn run(
    home: &Home,
    config: &Config,
    options: &TickOptions,
    now: DateTime<Utc>,
) -> Result<TickReport, ExchangeError> {
    let mut report = TickReport::new(options.number, now);
    report.save(home)?;
    if budget_gate::skips(home, config, &mut report, now)? {
        return Ok(report);
    }
    preflight::own_files_are_files(home)?;
    let mut prepared = prepare(
        home,
        config,
        options.number,
        now,
        &options.environment,
        options.job.as_ref(),
    )?;
    tidy::before_the_turn(home, &prepared, now)?;
    let gate = preflight::brake_gate(home, config, &prepared, &mut report, now)?;
    report.inbox_waiting = prepared.inbox.len();
    report.tokens_by_part = prepared.tokens_by_part.clone();
    if !preflight::make_it_fit(home, config, &mut prepared, &mut report, now)? {
        return Ok(report);
    }
    // An idle tick consolidates the identity memory when that is due: a
    // side exchange whose writes become a proposal, never `main`'s.
    if prepared.inbox.is_empty() && options.job.is_none() {
        if let Some(why) = crate::consolidate::due_now(home, config, now) {
            tracing::info!("tick {}: consolidating: {why}", options.number);
            let key = options.api_key.as_deref();
            crate::consolidate::run(home, config, options.number, key, &why, &mut report, now)?;
            report.save(home)?;
            return Ok(report);
        }
    }
    let (mut exchange, left) =
        open_exchange(home, config, options, prepared, gate, &mut report, now)?;
    converse(&mut exchange, home, config, options, &mut report)?;
    settle::settle(
        home,
        config,
        &mut exchange.conversation,
        &left,
        &mut report,
        now,
    )?;
    report.save(home)?;
    Ok(report)
}

/// Writes the turn ahead (`write_ahead`) and builds its exchange: the
/// tick's tools (handoff to its peers, the collaboration's workdir, the
/// supervisor's environment), its gate, the outside content it carries.
fn open_exchange<'a>(
    home: &'a Home,
    config: &'a Config,
    options: &'a TickOptions,
    mut prepared: Prepared,
    gate: Gate,
    report: &mut TickReport,
    now: DateTime<Utc>,
) -> Result<(Exchange<'a>, Left), ExchangeError> {
    let facts = prepared.facts();
    let system = std::mem::take(&mut prepared.system);
    let written = write_ahead::write_ahead(home, prepared, &options.hooks, report)?;
    let opening = Opening {
        number: options.number,
        now,
        api_key: options.api_key.as_deref(),
        system,
        conversation: written.conversation,
        facts,
        gate,
        outside: written.outside,
        tools: Toolset {
            offered: written.offered,
            peering: Peering::of(home, config),
            workdir: Workdir::for_collaboration(home, config, written.collaboration.as_deref()),
            environment: options.environment.clone(),
            ..Toolset::builtins()
        },
    };
    Ok((Exchange::open(home, config, opening), written.left))
}

/// Runs the exchange under the tick's door: every kept turn saved to
/// `state/messages.json` and the report as it goes, the prefix cached for
/// the next tick. A collaboration the agent's writes close is closed.
fn converse(
    exchange: &mut Exchange<'_>,
    home: &Home,
    config: &Config,
    options: &TickOptions,
    report: &mut TickReport,
) -> Result<(), ExchangeError> {
    // The next tick reads this one's prefix: after the interval, or
    // sooner when a cache-aware supervisor pulls it into the lifetime.
    let interval = std::time::Duration::from_secs(config.tick.interval_s);
    let plan = model::cache::between_ticks(interval, config.tick.cache_aware);
    let cache_key = home.cache_key();
    let so_far = std::mem::take(&mut report.outcome);
    let mut door = Door {
        record: &mut TickFiles::new(home, report),
        on_text: &mut |text| tracing::debug!("model: {text}"),
        next_exchange_in: Some(plan.pull_to.unwrap_or(interval)),
        cache_key: Some(&cache_key),
        spend_cap_usd: options.job.as_ref().and_then(|j| j.max_usd),
    };
    let mut outcome = exchange.run(&mut door, so_far)?;
    if let Some(kind) = options.hooks.failure(options.number) {
        outcome.failures.push(Failure::new(
            kind,
            "injected by HEARTH_TEST_FAIL (test hook)",
        ));
    }
    crate::tools::handoff::close_collaborations(&mut exchange.tools);
    outcome.effects = exchange.tools.effects.clone();
    report.outcome = outcome;
    Ok(())
}
