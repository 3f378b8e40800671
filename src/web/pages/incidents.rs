//! `/incidents`: what is open, each with its flares, and the recent
//! flares whatever became of them — each flare's words shown as text (a
//! flare quotes what went wrong, outside words included).

use std::collections::HashMap;

use maud::{html, Markup};

use super::{stamp, Frame};
use crate::home::Home;
use crate::mailbox::flares::{self, Flare};

/// How many recent flares are shown.
const RECENT: usize = 20;

/// One flare: its subject, when, read or not, its tick, and its text
/// folded away.
fn flare_row(frame: &Frame, home: &Home, f: &Flare) -> Markup {
    html! {
        details {
            summary {
                (f.created) " — " (f.subject)
                @if f.read { " (read)" }
                @if let Some(t) = f.tick { " · " a href=(frame.to(&format!("/ticks/{t}"))) { "tick " (t) } }
            }
            pre { code { (flares::body_of(home, f)) } }
        }
    }
}

/// `/incidents`: what is open, with its flares; with `acts`, each can be
/// acknowledged (no reminder; its flares marked read). Then the recent
/// flares, newest first.
pub fn incidents(frame: &Frame, home: &Home, acts: bool) -> Markup {
    let record = crate::notify::incidents::Incidents::load(home);
    let all = flares::list(home);
    let by_id: HashMap<&str, &Flare> = all.iter().map(|f| (f.id.as_str(), f)).collect();
    let open = match record {
        Err(e) => html! { p class="trouble" { "cannot read: " (e.to_string()) } },
        Ok(record) if record.open.is_empty() => html! { p { "No incident is open." } },
        Ok(record) => html! {
            @for i in record.open.values() {
                h2 class=(if i.acked { "" } else { "attention" }) { (i.title) }
                p {
                    (i.kind.to_string()) " (" (i.severity.as_str()) "), opened " (stamp(i.opened))
                    ", last " (stamp(i.last)) "; " (i.count) " flares"
                    @if i.acked { " — acknowledged" }
                }
                @if acts && !i.acked {
                    form method="post" action=(frame.to("/incidents/acknowledge")) {
                        input type="hidden" name="key" value=(i.key);
                        button type="submit" { "Acknowledge" }
                    }
                }
                @for id in i.flares.iter().rev() {
                    @if let Some(f) = by_id.get(id.as_str()) { (flare_row(frame, home, f)) }
                }
            }
        },
    };
    let body = html! {
        (open)
        h2 { "Recent flares" }
        @if all.is_empty() { p { "No flare yet." } }
        @for f in all.iter().take(RECENT) { (flare_row(frame, home, f)) }
    };
    frame.page("incidents", body)
}
