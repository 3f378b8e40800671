//! `/` — the last 24 hours as `hearth day` tells them — and `/ticks/N`,
//! one tick's ledger line and commit.

use chrono::Duration;
use maud::{html, Markup};

use super::{short, stamp, Frame};
use crate::home::Home;

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
                            @match event.tick {
                                Some(n) => a href=(frame.to(&format!("/ticks/{n}"))) { (event.who) },
                                None => (event.who),
                            }
                        }
                        td { (event.what) }
                    }
                }
            }
        }
        @for problem in &day.problems { p class="attention" { "cannot read: " (problem) } }
        @for named in &frame.status.unsandboxed {
            p class="attention" { "Unsandboxed: " (named) " runs with hearth's own rights (sandbox = \"none\", your choice)." }
        }
    };
    frame.page("today", body)
}

/// `/ticks/N`: one tick's ledger line and its commit — subject and patch
/// (`None`: there is no such tick).
pub fn tick(frame: &Frame, home: &Home, n: u64) -> Option<Markup> {
    let shown = match crate::view::tick::tick(home, n) {
        Ok(shown) => shown?,
        Err(e) => {
            let body = html! { p class="trouble" { "Cannot read the ledger: " (e.to_string()) } };
            return Some(frame.page(&format!("tick {n}"), body));
        }
    };
    let record = &shown.record;
    let body = html! {
        @match &shown.commit {
            Some(commit) => p { "Commit " code { (short(&commit.id)) } ": " (commit.subject) },
            None => p class="attention" { "No commit of this tick is on main (not made yet, or the history was rewritten since)." },
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
        @if let Some(patch) = shown.commit.as_ref().and_then(|c| c.patch.as_ref()) {
            h2 { "Its commit" } pre { code { (patch.trim_end()) } }
        }
    };
    Some(frame.page(&format!("tick {n}"), body))
}
