//! The pages, rendered from the read room's models (`crate::view`) and
//! the home's records: never a figure of their own. Every page says the
//! commit it was rendered from and the verdict (`<meta name=
//! "hearth-commit">`, `<meta name="hearth-verdict">`, and in its header
//! and footer). Everything the agent, a peer or a stranger wrote — memory,
//! subjects, flare titles, file names — reaches the page through maud,
//! which escapes it: shown as text, never run.

use chrono::{DateTime, Duration, SecondsFormat, Utc};
use maud::{html, Markup, DOCTYPE};

use crate::exchange::ledger::{Ledger, TickRecord};
use crate::home::Home;
use crate::view::status::Status;
use crate::view::status_text::{health_word, verdict_line};

/// The stylesheet, compiled in (`/style.css`): no inline style, so the
/// policy can forbid it.
pub const STYLE: &str = "body{font:16px/1.45 system-ui,sans-serif;margin:0 auto;max-width:46rem;\
padding:0 .75rem;color:#222}header,footer{font-size:.85rem;color:#555;padding:.5rem 0}\
nav a{margin-right:.75rem}.healthy{color:#176a2c}.attention{color:#8a5a00}.trouble{color:#a11}\
table{border-collapse:collapse;width:100%}td,th{text-align:left;padding:.25rem .35rem;\
border-bottom:1px solid #ddd;vertical-align:top;overflow-wrap:anywhere}code{font-size:.9em}\
input,button{font-size:1rem;padding:.4rem}form{margin:.3rem 0}\
pre{overflow-x:auto;background:#f6f6f6;padding:.5rem;font-size:.85rem}\
@media (max-width:600px){table,tbody,tr,td{display:block}tr.head{display:none}\
tr{border-bottom:1px solid #ddd;padding:.4rem 0}td{border:0;padding:.1rem 0}}";

/// The page's one script (`/live.js`), compiled in.
pub const LIVE_JS: &str = include_str!("assets/live.js");

/// What every page shows around its body.
pub struct Frame {
    /// The commit the page is rendered from (none: a home with no commit).
    pub commit: Option<String>,
    /// The home's status (its verdict at the top).
    pub status: Status,
    /// When it was rendered.
    pub now: DateTime<Utc>,
}

impl Frame {
    /// The frame of `home` as of `now`.
    pub fn of(home: &Home, now: DateTime<Utc>) -> Frame {
        Frame {
            commit: crate::repo::Repo::open(home.root())
                .ok()
                .and_then(|r| r.head()),
            status: crate::view::status::status(home, now),
            now,
        }
    }

    fn page(&self, title: &str, body: Markup) -> Markup {
        let health = health_word(self.status.verdict.health);
        let commit = self.commit.as_deref().unwrap_or("none");
        let tick = self.status.last_tick.as_ref().map(|t| t.tick);
        html! {
            (DOCTYPE)
            html lang="en" {
                head {
                    meta charset="utf-8";
                    meta name="viewport" content="width=device-width, initial-scale=1";
                    meta name="hearth-commit" content=(commit);
                    meta name="hearth-verdict" content=(health);
                    title { (title) " · hearth" }
                    link rel="stylesheet" href="/style.css";
                    script src="/live.js" defer {}
                }
                body {
                    header {
                        nav {
                            a href="/" { "today" }
                            a href="/incidents" { "incidents" }
                            a href="/proposals" { "proposals" }
                            a href="/jobs" { "jobs" }
                            a href="/spend" { "spend" }
                        }
                        p class=(health) { strong { (verdict_line(&self.status)) } }
                        p id="live" {}
                    }
                    main { h1 { (title) } (body) }
                    footer {
                        "rendered from commit " code { (short(commit)) }
                        @if let Some(tick) = tick { " after tick " (tick) }
                        " at " (stamp(self.now))
                    }
                }
            }
        }
    }
}

fn short(commit: &str) -> &str {
    &commit[..commit.len().min(12)]
}

fn stamp(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// The login page (`failed`: the last token was wrong; `wait`: too many
/// were).
pub fn login(failed: bool, wait: bool) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { "log in · hearth" }
                link rel="stylesheet" href="/style.css";
            }
            body {
                main {
                    h1 { "hearth" }
                    @if wait { p class="trouble" { "Too many wrong tokens just now: try again in a minute." } }
                    @else if failed { p class="trouble" { "That is not the token." } }
                    form method="post" action="/login" {
                        label { "Token (HEARTH_WEB_TOKEN) " input type="password" name="token" autocomplete="current-password"; }
                        " " button type="submit" { "Log in" }
                    }
                }
            }
        }
    }
}

/// `/`: the last 24 hours as `hearth day` tells them (and says so), each
/// tick linked.
pub fn today(frame: &Frame, home: &Home) -> Markup {
    let since = frame.now - Duration::hours(24);
    let day = crate::view::day::day(home, since, frame.now);
    let body = html! {
        p {
            "Since " (day.since.format("%Y-%m-%d %H:%M UTC")) " (the last 24 hours): "
            (day.ticks) " ticks (" (day.answered) " answered the inbox, " (day.failed) " failed, "
            (day.idle) " idle), " (day.asks) " asks, "
            (format!("${:.2}", day.spend_usd)) " spent"
            @if day.spent.calls > 0.0 { (format!(" (${:.2} of it by recall's rerank)", day.spent.calls)) }
        }
        @if day.events.is_empty() { p { "Nothing happened." } }
        @else {
            table {
                tr class="head" { th { "when" } th { "who" } th { "what" } }
                @for event in &day.events {
                    tr {
                        td { (event.at.format("%m-%d %H:%M")) }
                        td {
                            @match tick_of(&event.who) {
                                Some(n) => a href=(format!("/ticks/{n}")) { (event.who) },
                                None => (event.who),
                            }
                        }
                        td { (event.what) }
                    }
                }
            }
        }
        @for problem in &day.problems { p class="attention" { "cannot read: " (problem) } }
    };
    frame.page("today", body)
}

/// The first tick a day line names (`tick 12`, `ticks 13–104`).
fn tick_of(who: &str) -> Option<u64> {
    let rest = who
        .strip_prefix("ticks ")
        .or_else(|| who.strip_prefix("tick "))?;
    rest.split(|c: char| !c.is_ascii_digit())
        .next()?
        .parse()
        .ok()
}

/// `/incidents`: what is open, with its flares; with `acts`, each can be
/// acknowledged (no reminder; its flares marked read).
pub fn incidents(frame: &Frame, home: &Home, acts: bool) -> Markup {
    let record = crate::notify::incidents::Incidents::load(home);
    let body = match record {
        Err(e) => html! { p class="trouble" { "cannot read: " (e.to_string()) } },
        Ok(record) if record.open.is_empty() => html! { p { "No incident is open." } },
        Ok(record) => html! {
            table {
                tr class="head" { th { "opened" } th { "cause" } th { "what" } th { "flares" } }
                @for i in record.open.values() {
                    tr {
                        td { (stamp(i.opened)) }
                        td { (i.kind.to_string()) " (" (i.severity.as_str()) ")" }
                        td {
                            (i.title)
                            @if i.acked { " — acknowledged" }
                            @else if acts {
                                form method="post" action="/incidents/acknowledge" {
                                    input type="hidden" name="key" value=(i.key);
                                    button type="submit" { "Acknowledge" }
                                }
                            }
                        }
                        td { (i.count) }
                    }
                }
            }
        },
    };
    frame.page("incidents", body)
}

/// `/proposals`: what waits for the operator, and what became of the rest,
/// each linked to its page — where, with `acts`, it is decided, its diff
/// in view (a proposal is never accepted from a line of a list).
pub fn proposals(frame: &Frame, home: &Home, acts: bool) -> Markup {
    let body = match crate::proposals::list(home) {
        Err(e) => html! { p class="trouble" { "cannot read: " (e.to_string()) } },
        Ok(list) if list.is_empty() => html! { p { "No proposal yet." } },
        Ok(list) => html! {
            @if acts {
                p { "Open one to read its diff and decide." }
            } @else {
                p { "Decide with " code { "hearth proposals accept N" } " or " code { "reject N" } " on the server (this page was started without --allow-act)." }
            }
            table {
                tr class="head" { th { "#" } th { "status" } th { "title" } th { "files" } th { "rests on" } }
                @for p in list.iter().rev() {
                    tr {
                        td { (p.n) }
                        td { (p.status.as_str()) }
                        td {
                            a href=(format!("/proposals/{}", p.n)) { (p.title) }
                            br; small { "by " (p.by) ", commit " code { (short(&p.commit)) } }
                        }
                        td { @for f in &p.files { code { (f) } br; } }
                        td { @for o in p.outside.as_slice() { (o) br; } }
                    }
                }
            }
        },
    };
    frame.page("proposals", body)
}

/// `/proposals/N`: one proposal as `hearth proposals show N` tells it —
/// why, what it rests on, each file's diff, and who wrote each line it
/// removes — with its decision forms under `acts` (`None`: no such one).
pub fn proposal(frame: &Frame, home: &Home, n: u64, acts: bool) -> Option<Markup> {
    let (p, diff) = crate::proposals::show(home, n).ok()?;
    let body = html! {
        p { (p.status.as_str()) ", made by " (p.by) " at " (stamp(p.created)) ", from main at " code { (short(&p.base)) } }
        p { "Why: " (p.why.trim()) }
        @for source in p.outside.as_slice() { p class="attention" { "Rests on outside content: " (source) } }
        @if let Some(reason) = &p.reason { p { "Rejected because: " (reason) } }
        @if !p.conflicts.is_empty() { p class="trouble" { "Conflicts with main in: " (p.conflicts.join(", ")) } }
        @if acts && p.status.waiting() { (decide(p.n, &p.commit)) }
        @for f in &diff {
            h2 { code { (f.path) } " +" (f.added) " −" (f.removed) }
            pre { code { (f.patch.trim_end()) } }
            @if !f.removed_lines.is_empty() {
                p { "Who wrote the lines it removes:" }
                table {
                    @for r in &f.removed_lines {
                        tr {
                            td { (r.line) }
                            td { code { (r.text) } }
                            td {
                                @match &r.origin {
                                    Some(o) => {
                                        (o.author) " in " code { (short(&o.commit)) }
                                        @if let Some(t) = o.tick { ", tick " (t) }
                                        @if let Some(q) = o.proposal { ", proposal " (q) }
                                    }
                                    None => "the history cannot say",
                                }
                            }
                        }
                    }
                }
            }
        }
    };
    Some(frame.page(&format!("proposal {}: {}", p.n, p.title), body))
}

/// The two forms that decide proposal `n` as shown at `commit`.
fn decide(n: u64, commit: &str) -> Markup {
    html! {
        form method="post" action=(format!("/proposals/{n}/accept")) {
            input type="hidden" name="commit" value=(commit);
            button type="submit" { "Accept" }
        }
        form method="post" action=(format!("/proposals/{n}/reject")) {
            input type="hidden" name="commit" value=(commit);
            input type="text" name="reason" placeholder="why (optional)" maxlength="300";
            " " button type="submit" { "Reject" }
        }
    }
}

/// `/ticks/N`: one tick's ledger line and its commit — subject and patch
/// (`None`: there is no such tick).
pub fn tick(frame: &Frame, home: &Home, n: u64) -> Option<Markup> {
    let ledger = Ledger::read_all(&home.ticks_path()).ok()?;
    let record: &TickRecord = ledger.records.iter().find(|r| r.tick == n)?;
    let repo = crate::repo::Repo::open(home.root()).ok();
    let commit = repo.as_ref().and_then(|r| r.tick_commit(n, record.end));
    let patch = match (&repo, &commit) {
        (Some(repo), Some((id, _))) => repo.commit_patch(id, 64 * 1024).ok(),
        _ => None,
    };
    let body = html! {
        @match &commit {
            Some((id, subject)) => p { "Commit " code { (short(id)) } ": " (subject) },
            None => p class="attention" { "Its commit is not in the last day of history (or not made yet)." },
        }
        table {
            tr { th { "started" } td { (stamp(record.start)) } }
            tr { th { "ended" } td { (stamp(record.end)) " — exit " (record.exit) " (" (record.class.as_str()) ")" } }
            tr { th { "did" } td { (record.what_it_did()) } }
            tr { th { "tokens" } td { (record.tokens.sent()) " sent, " (record.tokens.output) " out" } }
            tr { th { "cost" } td { (format!("${:.4}", record.cost_usd)) } }
            @if let Some(note) = &record.note { tr { th { "note" } td { (note) } } }
            @if !record.outside.is_empty() {
                tr { th { "outside" } td { @for o in record.outside.as_slice() { (o) br; } } }
            }
            @if !record.unbacked.is_empty() {
                tr { th { "said, not done" } td { @for u in &record.unbacked { (u) br; } } }
            }
        }
        @if let Some(patch) = &patch { h2 { "Its commit" } pre { code { (patch.trim_end()) } } }
    };
    Some(frame.page(&format!("tick {n}"), body))
}

/// `/jobs`: each job's schedule in words, its next run, whether it is late
/// and how its last runs ended, with what their commits showed (the
/// model's words never count).
pub fn jobs(frame: &Frame, home: &Home) -> Markup {
    let timeout =
        crate::config::Config::load(&home.config_path()).map_or(600, |c| c.tick.timeout_s);
    let grace = Duration::seconds(i64::try_from(timeout).unwrap_or(i64::MAX / 2) + 60);
    let (views, problems, notes) = crate::jobs::overview::overview(home, frame.now, grace);
    let body = html! {
        @if views.is_empty() && problems.is_empty() { p { "No job (jobs/NAME.toml)." } }
        @for v in &views {
            h2 { (v.job.name) }
            p {
                (v.job.when())
                @if let Some(next) = v.next { "; next " (stamp(next)) }
            }
            @if let Some(trouble) = v.trouble() { p class="attention" { (trouble) } }
            @if !v.history.is_empty() {
                table {
                    @for run in v.history.iter().rev().take(10) {
                        tr {
                            td { (stamp(run.start)) }
                            td { (run.outcome.as_str()) }
                            td {
                                @for e in &run.evidence { (e) br; }
                                @for m in &run.missing { "missing " (m) br; }
                                @if let Some(cause) = &run.cause { (cause) }
                            }
                        }
                    }
                }
            }
        }
        @for problem in &problems { p class="trouble" { (problem.to_string()) } }
        @for note in &notes { p class="attention" { (note) } }
    };
    frame.page("jobs", body)
}

/// `/spend`: the last 30 UTC days against the daily cap, door by door, as
/// the budget counts them (`exchange::Spent`, the one definition), drawn
/// as a server-rendered SVG: no chart library in the browser.
pub fn spend(frame: &Frame, home: &Home) -> Markup {
    use crate::exchange::Spent;
    let budget = crate::budget::Budget::load_or_empty(home);
    let lines = crate::conversation::sessions::read(home);
    let days: Vec<(chrono::NaiveDate, Spent)> = (0..30)
        .rev()
        .map(|back| {
            let at = frame.now - Duration::days(back);
            (
                at.date_naive(),
                Spent::today_with(&budget, &lines, home, at),
            )
        })
        .collect();
    let cap = frame.status.daily_usd.filter(|c| *c > 0.0);
    let top = days
        .iter()
        .map(|(_, s)| s.total())
        .fold(cap.unwrap_or(0.0), f64::max)
        .max(0.01);
    let (w, h) = (300.0, 120.0);
    let bar = w / days.len() as f64;
    let body = html! {
        p {
            "Today (UTC): " (format!("${:.2}", frame.status.spent_today_usd))
            @match cap { Some(c) => { " of " (format!("${c:.2}")) " ([budget] daily_usd)" } None => { ", no daily limit" } }
        }
        svg xmlns="http://www.w3.org/2000/svg" viewBox=(format!("0 0 {w} {h}")) width="100%" role="img" aria-label="spend per day, last 30 days" {
            @for (i, (_, spent)) in days.iter().enumerate() {
                @let tall = spent.total() / top * (h - 4.0);
                rect x=(format!("{:.1}", i as f64 * bar + 1.0)) y=(format!("{:.1}", h - tall)) width=(format!("{:.1}", bar - 2.0)) height=(format!("{tall:.1}")) fill="#4a7" {}
            }
            @if let Some(c) = cap {
                @let y = h - c / top * (h - 4.0);
                line x1="0" x2=(w) y1=(format!("{y:.1}")) y2=(format!("{y:.1}")) stroke="#a11" stroke-dasharray="4 3" {}
            }
        }
        table {
            tr class="head" { th { "day" } th { "ticks" } th { "asks" } th { "recall" } th { "all" } }
            @for (day, spent) in days.iter().rev().filter(|(_, s)| s.total() > 0.0) {
                tr {
                    td { (day) }
                    td { (format!("${:.4}", spent.ticks)) }
                    td { (format!("${:.4}", spent.asks)) }
                    td { (format!("${:.4}", spent.calls)) }
                    td { (format!("${:.4}", spent.total())) }
                }
            }
        }
    };
    frame.page("spend", body)
}

/// A page for a path the page does not have.
pub fn not_found(frame: &Frame) -> Markup {
    frame.page("not here", html! { p { "There is no such page." } })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_day_line_links_the_tick_it_names() {
        assert_eq!(tick_of("tick 12"), Some(12));
        assert_eq!(tick_of("ticks 13–104"), Some(13));
        assert_eq!(tick_of("ask"), None);
        assert_eq!(tick_of("proposal 3"), None);
    }
}
