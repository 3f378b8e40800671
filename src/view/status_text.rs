//! `hearth status` as text: the one rendering of [`Status`] the CLI prints
//! and the MCP door's `status` tool answers with, so the two cannot say
//! different things (the JSON of both is the same `Status`). The verdict
//! comes first: it is what a reader looks for.

use std::fmt::Write as _;

use chrono::{DateTime, SecondsFormat, Utc};

use super::status::{Health, Status};
use crate::config::collab::FoundingPolicy;
use crate::run_state::phase::Phase;

/// Writes one line to `out` (a `String` cannot fail to take it).
macro_rules! w {
    ($out:expr, $($arg:tt)*) => {{
        let _ = writeln!($out, $($arg)*);
    }};
}

/// The word for a verdict's health.
pub fn health_word(health: Health) -> &'static str {
    match health {
        Health::Healthy => "healthy",
        Health::Attention => "attention",
        Health::Trouble => "trouble",
    }
}

/// The verdict in one line: its word, then its reasons.
pub fn verdict_line(status: &Status) -> String {
    match status.verdict.reasons.as_slice() {
        [] => health_word(status.verdict.health).to_string(),
        reasons => format!(
            "{}: {}",
            health_word(status.verdict.health),
            reasons.join("; ")
        ),
    }
}

/// The whole status as text, as of `now`.
pub fn render(status: &Status, now: DateTime<Utc>) -> String {
    let mut out = String::new();
    w!(out, "health:     {}", verdict_line(status));
    print_ticking(&mut out, status, now);
    print_spend(&mut out, status);
    print_waiting(&mut out, status, now);
    out
}

/// The supervisor, the last and next tick, a failure streak, a panic.
fn print_ticking(out: &mut String, status: &Status, now: DateTime<Utc>) {
    w!(out, "home:       {}", status.home);
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
    w!(out, "supervisor: {supervisor}");
    match &status.last_tick {
        Some(t) => w!(
            out,
            "last tick:  {} — exit {} ({}), ended {}",
            t.tick,
            t.exit,
            t.class.as_str(),
            t.end.to_rfc3339_opts(SecondsFormat::Secs, true)
        ),
        None => w!(out, "last tick:  none yet"),
    }
    match status.next_due {
        Some(due) => {
            let secs = (due - now).num_seconds().max(0);
            w!(
                out,
                "next tick:  {} (in {}m {}s)",
                due.to_rfc3339_opts(SecondsFormat::Secs, true),
                secs / 60,
                secs % 60
            );
        }
        None if status.phase == Some(Phase::DiskFull) => {
            w!(out, "next tick:  once the disk has room")
        }
        None if status.running && status.phase == Some(Phase::ConfigBroken) => {
            w!(out, "next tick:  once hearth.toml parses")
        }
        None if status.running => w!(out, "next tick:  running now"),
        None => w!(out, "next tick:  when the supervisor runs (`hearth run`)"),
    }
    if status.failure_streak > 0 {
        w!(
            out,
            "failures:   {} failed ticks in a row",
            status.failure_streak
        );
        for cause in &status.failure_causes {
            w!(out, "            {cause}");
        }
    }
    if let Some(panic) = &status.panic {
        w!(
            out,
            "PANIC:      since {}: {}",
            panic.since.to_rfc3339_opts(SecondsFormat::Secs, true),
            panic.reason
        );
        w!(
            out,
            "            fix the cause, then `hearth heal --resume` and start hearth again"
        );
    }
}

/// What the day and the last 24 hours cost, and the model API's outage.
fn print_spend(out: &mut String, status: &Status) {
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
        Some(cap) if cap > 0.0 => w!(
            out,
            "spend:      ${:.2} today (UTC){by_door} of [budget] daily_usd = ${cap:.2}",
            status.spent_today_usd
        ),
        Some(_) => w!(
            out,
            "spend:      ${:.2} today (UTC){by_door}, no daily limit",
            status.spent_today_usd
        ),
        // hearth.toml does not parse: a running supervisor keeps the cap
        // of the last configuration that did, which this process cannot see.
        None => {
            w!(
                out,
            "spend:      ${:.2} today (UTC); the daily limit is unknown while hearth.toml does \
             not parse (a running supervisor keeps the last one that did)",
            status.spent_today_usd
        )
        }
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
        w!(
            out,
            "last 24 h:  ticks ${:.2} over {} ticks, {ratio}{month}",
            day.usd,
            day.ticks
        );
    }
    if let Some(warning) = &status.cache_warning {
        w!(out, "CACHE:      {warning}");
    }
    if let Some(o) = &status.outage {
        w!(
            out,
            "OUTAGE:     the model API has failed since {} ({} ticks): {}",
            o.since.to_rfc3339_opts(SecondsFormat::Secs, true),
            o.ticks,
            o.last_error
        );
    }
}

/// The configuration's error, the push, the flares, jobs, notices and
/// peers, and what waits for the operator.
fn print_waiting(out: &mut String, status: &Status, now: DateTime<Utc>) {
    if let Some(e) = &status.config_error {
        w!(out, "CONFIG:     {e}");
    }
    print_push(out, status);
    print_mail(out, status);
    if !status.unread_flares.is_empty() {
        w!(
            out,
            "flares:     {} unread (`hearth flares`; `hearth flares --ack --all` marks them read)",
            status.unread_flares.len()
        );
        for f in status.unread_flares.iter().take(5) {
            w!(out, "            {} {}: {}", f.created, f.flare, f.subject);
        }
    }
    for late in &status.jobs_late {
        w!(out, "JOB:        {late} (see `hearth jobs`)");
    }
    for named in &status.unsandboxed {
        w!(
            out,
            "unsandboxed: {named} runs with hearth's rights (sandbox = \"none\", your choice)"
        );
    }
    for d in &status.notify_failing {
        w!(
            out,
            "NOTIFY:     {} {} at {} (try {}): {}",
            d.target,
            d.outcome.to_uppercase(),
            crate::clock::to_second(d.time),
            d.attempt,
            d.detail
        );
    }
    for peer in &status.local_peers {
        w!(
            out,
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
        w!(out, "peer:       {}", peer.line(now));
    }
    if let Some(founding) = status.founding {
        let what = match founding {
            FoundingPolicy::Ask => "a collaboration a peer founds here waits for your word",
            FoundingPolicy::Open => "a collaboration a peer founds here is taken at once",
        };
        w!(out, "founding:   {} ({what})", founding.as_str());
    }
    print_decisions(out, status);
    for problem in &status.problems {
        w!(out, "problem:    {problem}");
    }
}

/// What waits for the operator's decision: proposals, and calls of acting
/// tools that outside words asked for.
fn print_decisions(out: &mut String, status: &Status) {
    if status.proposals_waiting > 0 {
        w!(
            out,
            "proposals:  {} waiting for you (`hearth proposals`)",
            status.proposals_waiting
        );
    }
    if status.requests_waiting > 0 {
        w!(
            out,
            "requests:   {} calls of acting tools waiting for you (`hearth proposals requests`)",
            status.requests_waiting
        );
    }
}

/// What the mail watch last said.
fn print_mail(out: &mut String, status: &Status) {
    if let Some(mail) = &status.mail {
        w!(out, "{}", mail.line());
    }
}

/// Where the off-box copy stands: its last push, what is not on it yet,
/// and since when pushing fails.
fn print_push(out: &mut String, status: &Status) {
    let Some(push) = &status.push else {
        return;
    };
    let behind = status
        .unpushed
        .map(|n| format!("; {n} commit(s) not on {} yet", push.remote))
        .unwrap_or_default();
    match &push.last_ok {
        Some(at) => w!(
            out,
            "push:       last pushed to {} at {}{behind}",
            push.remote,
            at.to_rfc3339_opts(SecondsFormat::Secs, true)
        ),
        None => w!(
            out,
            "push:       nothing pushed to {} yet{behind}",
            push.remote
        ),
    }
    if let (Some(since), Some(error)) = (&push.failing_since, &push.last_error) {
        w!(
            out,
            "PUSH FAILING since {}: {error}",
            since.to_rfc3339_opts(SecondsFormat::Secs, true)
        );
    }
}
