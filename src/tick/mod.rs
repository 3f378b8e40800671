//! One tick, the door the supervisor opens (DESIGN 3), as the child process
//! `hearth tick --supervised` runs it: the budget gate → boot → context →
//! write-ahead of the user turn (`state/messages.json`, the report) → the
//! exchange ([`crate::exchange`]: the model, the tools, the recoveries) →
//! persisted reply → report.
//!
//! [`prepare()`] assembles the turn without changing anything.
//!
//! The tick never commits: its supervisor does, after it exits, so a tick
//! that is killed at any point still ends in a commit of whatever it got to.

pub mod context;
pub mod healer_note;
pub mod hooks;
pub mod ledger;
mod preflight;
pub mod prepare;
pub mod provenance;
mod settle;
pub mod spend;

use chrono::{DateTime, Utc};

use crate::budget::Budget;
use crate::config::Config;
use crate::conversation::archive as history;
use crate::conversation::store::Broken;
use crate::exchange::class::Failure;
use crate::exchange::report::TickReport;
use crate::exchange::{cost_usd, driver, ExchangeError, SpentToday};
use crate::home::layout::rel;
use crate::home::Home;
use crate::mailbox::inbox;
use crate::mailbox::outbox::{self, Letter};
use crate::model;
use crate::tools::ToolContext;
use healer_note::HealerNote;
pub use hooks::TestHooks;
pub use prepare::{prepare, Prepared};

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

    // The day's budget is spent: skip before touching the inbox or the
    // conversation, and say so once per UTC day.
    let budget = Budget::load_or_empty(home);
    if let Some(reason) = SpentToday::with(&budget, home, now).over(config.budget.daily_usd) {
        tracing::warn!("tick {} skipped: {reason}", options.number);
        // One budget flare a day: a warning given earlier today already
        // said ticks would be skipped once the limit is reached.
        if !budget.told_today(now) {
            let split = spend::today(home, config.price().as_ref(), now)
                .map(|s| format!(" Of the ticks' spend today, {}.", s.breakdown()))
                .unwrap_or_default();
            let body = format!(
                "{reason}.{split}\n\nTicks are skipped (exit 3) until the next UTC day; inbox messages wait. \
                 Raise [budget] daily_usd in hearth.toml to resume sooner (0 = no limit).\n"
            );
            let mut flare = Letter::flare("budget", "the daily budget is spent", body);
            flare.tick = Some(options.number);
            outbox::post(home, &flare, now)?;
            report.budget_flared = Some(crate::budget::day(now));
        }
        report.skipped = Some(reason);
        report.save(home)?;
        return Ok(report);
    }

    preflight::own_files_are_files(home)?;
    let mut prepared = prepare(home, config, options.number, now, &options.environment)?;
    for problem in &prepared.problems {
        tracing::warn!("{problem}");
    }
    for message in &prepared.inbox {
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
    if let Some((quarantine, moved)) = &prepared.quarantine {
        history::write_archive(home, quarantine, moved.clone(), now)?;
        tracing::info!(
            "moved {} turns that carry outside words to {} (this tick is the operator's)",
            quarantine.count,
            quarantine.archive
        );
    }
    if let Some((compaction, archived)) = &prepared.compaction {
        history::write_archive(home, compaction, archived.clone(), now)?;
        tracing::info!(
            "moved {} old messages to {}",
            compaction.count,
            compaction.archive
        );
    }
    let required =
        crate::brake::required::required(home, &prepared.required_reads, &config.brake.must_read);
    report.required_reads = required.iter().map(|r| r.path.clone()).collect();
    let gate = crate::brake::gate::Gate::open_for(
        home,
        config.brake.mode,
        report.required_reads.clone(),
        options.number,
        now,
    );
    if config.brake.mode != crate::config::BrakeMode::Off {
        preflight::flare_missing_required(home, &required, options.number, now)?;
    }
    let trust = crate::tools::trust::Trust::load(home);
    preflight::flare_tool_problems(home, &prepared, &trust, options.number, now)?;
    report.inbox_waiting = prepared.inbox.len();
    let facts = prepared.facts();
    report.tokens_by_part = prepared.tokens_by_part.clone();
    if !preflight::make_it_fit(home, config, &mut prepared, &mut report, now)? {
        return Ok(report);
    }
    // An idle tick consolidates the identity memory when that is due: a
    // side exchange whose writes become a proposal, never `main`'s.
    if prepared.inbox.is_empty() {
        if let Some(why) = crate::consolidate::due_now(home, config, now) {
            tracing::info!("tick {}: consolidating: {why}", options.number);
            let key = options.api_key.as_deref();
            crate::consolidate::run(home, config, options.number, key, &why, &mut report, now)?;
            report.cost_usd = cost_usd(&report.usage, config.price().as_ref());
            report.save(home)?;
            return Ok(report);
        }
    }
    let Prepared {
        system,
        mut conversation,
        tools: specs,
        operator,
        mcp,
        inbox: messages,
        healer_note,
        collaboration,
        outside,
        ..
    } = prepared;

    // Write-ahead: what was asked is on disk before any model sees it, and
    // only then do the messages leave the inbox and the healer's note go
    // (it is in the conversation now: consumed once, even if we fail).
    // Its outside sources are on the report before anything else is
    // written: a tick killed at any point is committed as outside.
    report.effects.tainted_by = outside.clone();
    if let Some(turn) = conversation.messages.last_mut() {
        turn.outside = outside.clone();
    }
    conversation.save(home)?;
    // The turn this tick asks: still the last message at the end means the
    // model kept nothing (the reduced-context recovery may have archived
    // older turns meanwhile).
    let asked = conversation.messages.last().cloned();
    if healer_note.is_some() {
        HealerNote::consume(home);
    }
    // Each message is on the report before it moves, so a tick killed at
    // any point leaves the supervisor able to give it back.
    for message in &messages {
        let to = inbox::archive_path(home, &message.rel);
        report.consumed.push((message.rel.clone(), to.clone()));
        report.save(home)?;
        inbox::archive_to(home, &message.rel, &to)?;
    }
    report.save(home)?;
    if let Some(pause) = options.hooks.pause_after_write_ahead(options.number) {
        std::thread::sleep(pause);
    }

    let mut tool_ctx = ToolContext {
        environment: options.environment.clone(),
        peering: crate::tools::Peering::of(home, config),
        workdir: crate::tools::Workdir::for_collaboration(home, config, collaboration.as_deref()),
        mcp,
        ..ToolContext::new(home, config, options.number, now, operator, trust)
    };
    // What the turn carries from outside (a third party's message, a
    // peer's handoff, marked turns kept for it) taints the exchange from
    // the start: identity writes are proposed.
    for source in &outside {
        tool_ctx.taint.read(source.clone());
    }
    // The next tick reads this one's prefix: after the interval, or
    // sooner when a cache-aware supervisor pulls it into the lifetime.
    let interval = std::time::Duration::from_secs(config.tick.interval_s);
    let plan = model::cache::between_ticks(interval, config.tick.cache_aware);
    let cache_key = home.cache_key();
    match model::provider_for(&config.model, options.api_key.as_deref()) {
        Ok(provider) => driver::tool_loop(
            &mut crate::exchange::door::Door {
                record: &mut crate::exchange::door::TickFiles::new(home),
                on_text: &mut |text| tracing::debug!("model: {text}"),
                next_exchange_in: Some(plan.pull_to.unwrap_or(interval)),
                cache_key: Some(&cache_key),
            },
            provider,
            &driver::Given {
                home,
                config,
                api_key: options.api_key.as_deref(),
                system: &system,
                specs: &specs,
                facts: &facts,
                gate: &gate,
            },
            &mut conversation,
            &mut tool_ctx,
            &mut report,
        )?,
        Err(e) => report.failures.push(Failure::of_model(&e)),
    }
    if let Some(kind) = options.hooks.failure(options.number) {
        report.failures.push(Failure {
            kind,
            detail: "injected by HEARTH_TEST_FAIL (test hook)".into(),
            outage: false,
            fix: None,
        });
    }
    crate::tools::handoff::close_collaborations(&mut tool_ctx);
    tool_ctx.effects.tainted_by = tool_ctx.taint.sources.clone();
    report.effects = std::mem::take(&mut tool_ctx.effects);
    let nothing_kept = conversation.messages.last() == asked.as_ref();
    settle::settle(
        home,
        config,
        &mut conversation,
        healer_note.as_ref(),
        &mut report,
        nothing_kept,
        now,
    )?;
    // Config validation refused an unknown price with a daily limit, so
    // `None` here means no limit was asked for.
    let price = config.price();
    report.cost_usd = cost_usd(&report.usage, price.as_ref());
    if !report.consumed.is_empty() || !report.effects.sent.is_empty() {
        record_exchange(home, &report, &messages, now)?;
    }
    report.save(home)?;
    Ok(report)
}

/// What this tick was asked and said, for `hearth ask`'s hot memory (one
/// agent, two doors): the inbox, the reply, and every tool call in
/// readable form (a `send`'s body in full).
fn record_exchange(
    home: &Home,
    report: &TickReport,
    inbox: &[inbox::InboxMessage],
    now: DateTime<Utc>,
) -> Result<(), ExchangeError> {
    use crate::conversation::sessions;
    let asked: Vec<&str> = inbox.iter().map(|m| m.text.trim()).collect();
    let line = sessions::Line {
        v: sessions::VERSION,
        id: format!("tick-{}", report.tick),
        time: now,
        kind: "tick".into(),
        asked: asked.join("\n\n"),
        said: crate::exchange::record::said(&report.reply, &report.actions),
        outside: report.effects.tainted_by.clone(),
        ..Default::default()
    };
    sessions::append(home, &line)?;
    Ok(())
}

/// Keeps a broken `messages.json` beside the restored one and flares.
fn keep_broken(home: &Home, broken: &Broken, now: DateTime<Utc>) -> Result<(), ExchangeError> {
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
    let title = format!("{} did not parse", rel::MESSAGES);
    let flare = Letter::flare("state", &title, body);
    outbox::post(home, &flare, now)?;
    Ok(())
}

/// A heal's note that does not parse: kept beside it, and the operator told
/// (the agent misses what the heal would have said; the operator need not).
fn set_note_aside(home: &Home, problem: &str, now: DateTime<Utc>) -> Result<(), ExchangeError> {
    let kept = HealerNote::set_aside(home, now).map_err(|e| ExchangeError::Io {
        context: format!("could not move the broken {problem} aside"),
        source: e,
    })?;
    tracing::warn!("{problem}; moved it to {kept}");
    let body = format!(
        "{problem}\n\nThe note a heal leaves for the next tick did not parse, so the agent \
         was not told about the heal this time. The file was moved to {kept} (nothing was \
         deleted); see `git log -- state/` for the heal itself.\n"
    );
    let title = format!("{} did not parse", rel::HEALER_NOTE);
    let flare = Letter::flare("state", &title, body);
    outbox::post(home, &flare, now)?;
    Ok(())
}
