//! `hearth status [--json] [--check]`

use std::path::Path;

use chrono::SecondsFormat;
use hearth::config::collab::FoundingPolicy;
use hearth::supervisor::runtime::Phase;
use hearth::supervisor::status;

use super::{CommandError, Env, Exit};

#[derive(clap::Args)]
pub struct Args {
    /// Print JSON.
    #[arg(long)]
    json: bool,
    /// Say only how the home is, and exit 0 (healthy), 1 (something waits
    /// for you) or 2 (the agent is not working): for monitoring.
    #[arg(long)]
    check: bool,
}

pub fn run(env: &Env, flag: Option<&Path>, args: Args) -> Result<Exit, CommandError> {
    let home = env.open_home(flag)?;
    let status = status::status(&home, env.clock.now());
    let checked = match status.verdict.health {
        status::Health::Healthy => Exit::Success,
        status::Health::Attention => Exit::Error,
        status::Health::Trouble => Exit::Panic,
    };
    if args.json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&status).expect("status serialises")
        );
        return Ok(if args.check { checked } else { Exit::Success });
    }
    if args.check {
        let word = match status.verdict.health {
            status::Health::Healthy => "healthy",
            status::Health::Attention => "attention",
            status::Health::Trouble => "trouble",
        };
        match status.verdict.reasons.as_slice() {
            [] => outln!("{word}"),
            reasons => outln!("{word}: {}", reasons.join("; ")),
        }
        return Ok(checked);
    }
    let now = env.clock.now();
    print_ticking(&status, now)?;
    print_spend(&status)?;
    print_waiting(&status, now)?;
    Ok(Exit::Success)
}

/// The supervisor, the last and next tick, a failure streak, a panic.
fn print_ticking(
    status: &status::Status,
    now: chrono::DateTime<chrono::Utc>,
) -> Result<(), CommandError> {
    outln!("home:       {}", status.home);
    let running = match status.pid {
        Some(pid) => format!("running (pid {pid})"),
        None => "running".to_string(),
    };
    let supervisor = match (status.running, status.phase) {
        (false, _) => "not running".to_string(),
        (true, Some(Phase::DiskFull)) => {
            format!("{running}, paused: the disk holding the home is full")
        }
        (true, Some(Phase::ConfigBroken)) => format!(
            "{running}, waiting: hearth.toml does not parse (nothing ticks until it does; \
             the flare in outbox/ says what to fix)"
        ),
        (true, Some(Phase::GitLocked)) => format!(
            "{running}, waiting for another git to let go of its lock \
             (a commit is put off; nothing is lost)"
        ),
        (true, Some(phase)) => format!("{running}, {}", format!("{phase:?}").to_lowercase()),
        (true, None) => running,
    };
    outln!("supervisor: {supervisor}");
    match &status.last_tick {
        Some(t) => outln!(
            "last tick:  {} — exit {} ({}), ended {}",
            t.tick,
            t.exit,
            t.class.as_str(),
            t.end.to_rfc3339_opts(SecondsFormat::Secs, true)
        ),
        None => outln!("last tick:  none yet"),
    }
    match status.next_due {
        Some(due) => {
            let secs = (due - now).num_seconds().max(0);
            outln!(
                "next tick:  {} (in {}m {}s)",
                due.to_rfc3339_opts(SecondsFormat::Secs, true),
                secs / 60,
                secs % 60
            );
        }
        None if status.phase == Some(Phase::DiskFull) => {
            outln!("next tick:  once the disk has room")
        }
        None if status.running && status.phase == Some(Phase::ConfigBroken) => {
            outln!("next tick:  once hearth.toml parses")
        }
        None if status.running => outln!("next tick:  running now"),
        None => outln!("next tick:  when the supervisor runs (`hearth run`)"),
    }
    if status.failure_streak > 0 {
        outln!(
            "failures:   {} failed ticks in a row",
            status.failure_streak
        );
        for cause in &status.failure_causes {
            outln!("            {cause}");
        }
    }
    if let Some(panic) = &status.panic {
        outln!(
            "PANIC:      since {}: {}",
            panic.since.to_rfc3339_opts(SecondsFormat::Secs, true),
            panic.reason
        );
        outln!("            fix the cause, then `hearth heal --resume` and start hearth again");
    }
    Ok(())
}

/// What the day and the last 24 hours cost, and the model API's outage.
fn print_spend(status: &status::Status) -> Result<(), CommandError> {
    // One figure, with its parts when there is more than one door's.
    let parts = status.spent_today;
    let doors = [
        ("ticks", parts.ticks),
        ("asks", parts.asks),
        ("recall", parts.calls),
    ];
    let spending: Vec<String> = doors
        .iter()
        .filter(|(_, usd)| *usd > 0.0)
        .map(|(door, usd)| format!("{door} ${usd:.2}"))
        .collect();
    let by_door = if spending.len() > 1 {
        format!(" ({})", spending.join(", "))
    } else {
        String::new()
    };
    match status.daily_usd {
        Some(cap) if cap > 0.0 => outln!(
            "spend:      ${:.2} today (UTC){by_door} of [budget] daily_usd = ${cap:.2}",
            status.spent_today_usd
        ),
        Some(_) => outln!(
            "spend:      ${:.2} today (UTC){by_door}, no daily limit",
            status.spent_today_usd
        ),
        // hearth.toml does not parse: a running supervisor keeps the cap
        // of the last configuration that did, which this process cannot see.
        None => outln!(
            "spend:      ${:.2} today (UTC); the daily limit is unknown while hearth.toml does \
             not parse (a running supervisor keeps the last one that did)",
            status.spent_today_usd
        ),
    }
    if let Some(day) = &status.last_24h {
        let ratio = status
            .cache_hit_ratio_24h
            .map_or("no input sent".to_string(), |r| {
                format!("{:.0}% of the input read from the cache", 100.0 * r)
            });
        let month = status.projected_month_usd.map_or(String::new(), |m| {
            format!("; a month at this rate: ${m:.2}")
        });
        outln!(
            "last 24 h:  ticks ${:.2} over {} ticks, {ratio}{month}",
            day.usd,
            day.ticks
        );
    }
    if let Some(warning) = &status.cache_warning {
        outln!("CACHE:      {warning}");
    }
    if let Some(o) = &status.outage {
        outln!(
            "OUTAGE:     the model API has failed since {} ({} ticks): {}",
            o.since.to_rfc3339_opts(SecondsFormat::Secs, true),
            o.ticks,
            o.last_error
        );
    }
    Ok(())
}

/// The configuration's error, the push, and what waits for the operator.
fn print_waiting(
    status: &status::Status,
    now: chrono::DateTime<chrono::Utc>,
) -> Result<(), CommandError> {
    if let Some(e) = &status.config_error {
        outln!("CONFIG:     {e}");
    }
    if let Some(push) = &status.push {
        let behind = status
            .unpushed
            .map(|n| format!("; {n} commit(s) not on {} yet", push.remote))
            .unwrap_or_default();
        match &push.last_ok {
            Some(at) => outln!(
                "push:       last pushed to {} at {}{behind}",
                push.remote,
                at.to_rfc3339_opts(SecondsFormat::Secs, true)
            ),
            None => outln!("push:       nothing pushed to {} yet{behind}", push.remote),
        }
        if let (Some(since), Some(error)) = (&push.failing_since, &push.last_error) {
            outln!(
                "PUSH FAILING since {}: {error}",
                since.to_rfc3339_opts(SecondsFormat::Secs, true)
            );
        }
    }
    if !status.unread_flares.is_empty() {
        outln!(
            "flares:     {} unread (`hearth flares`; `hearth flares --ack --all` marks them read)",
            status.unread_flares.len()
        );
        for f in status.unread_flares.iter().take(5) {
            outln!("            {} {}: {}", f.created, f.flare, f.subject);
        }
    }
    for late in &status.jobs_late {
        outln!("JOB:        {late} (see `hearth jobs`)");
    }
    for d in &status.notify_failing {
        outln!(
            "NOTIFY:     {} {} at {} (try {}): {}",
            d.target,
            d.outcome.to_uppercase(),
            hearth::clock::to_second(d.time),
            d.attempt,
            d.detail
        );
    }
    for peer in &status.local_peers {
        outln!(
            "peer:       peer {} ({}): on this host{}",
            peer.peer,
            peer.path,
            if peer.readable {
                ""
            } else {
                ", NOT READABLE (see problems)"
            }
        );
    }
    for peer in &status.peers {
        outln!("peer:       {}", peer.line(now));
    }
    if let Some(founding) = status.founding {
        let what = match founding {
            FoundingPolicy::Ask => "a collaboration a peer founds here waits for your word",
            FoundingPolicy::Open => "a collaboration a peer founds here is taken at once",
        };
        outln!("founding:   {} ({what})", founding.as_str());
    }
    print_decisions(status)?;
    for problem in &status.problems {
        outln!("problem:    {problem}");
    }
    Ok(())
}

/// What waits for the operator's decision: proposals, and calls of acting
/// tools that outside words asked for.
fn print_decisions(status: &status::Status) -> Result<(), CommandError> {
    if status.proposals_waiting > 0 {
        outln!(
            "proposals:  {} waiting for you (`hearth proposals`)",
            status.proposals_waiting
        );
    }
    if status.requests_waiting > 0 {
        outln!(
            "requests:   {} calls of acting tools waiting for you (`hearth proposals requests`)",
            status.requests_waiting
        );
    }
    Ok(())
}
