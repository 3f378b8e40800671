//! `/incidents`: what is open, each with its flares, and the recent
//! flares whatever became of them — each flare's words shown as text (a
//! flare quotes what went wrong, outside words included).

use maud::{html, Markup};

use super::{stamp, Frame};
use crate::home::Home;
use crate::view::incidents::FlareShown;

/// How many recent flares are shown.
const RECENT: usize = 20;

/// One flare: its subject, when, read or not, its tick, and its text
/// folded away.
fn flare_row(frame: &Frame, shown: &FlareShown) -> Markup {
    let f = &shown.flare;
    html! {
        details {
            summary {
                (f.created) " — " (f.subject)
                @if f.read { " (read)" }
                @if let Some(t) = f.tick { " · " a href=(frame.to(&format!("/ticks/{t}"))) { "tick " (t) } }
            }
            pre { code { (shown.body) } }
        }
    }
}

/// `/incidents`: what is open, with its flares; with `acts`, each can be
/// acknowledged (no reminder; its flares marked read). Then the recent
/// flares, newest first.
pub fn incidents(frame: &Frame, home: &Home, acts: bool) -> Markup {
    let view = crate::view::incidents::incidents(home, RECENT);
    let open = match &view.open {
        Err(e) => html! { p class="trouble" { "cannot read: " (e.to_string()) } },
        Ok(open) if open.is_empty() => html! { p { "No incident is open." } },
        Ok(open) => html! {
            @for o in open {
                @let i = &o.incident;
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
                @for f in &o.flares { (flare_row(frame, f)) }
            }
        },
    };
    let body = html! {
        (open)
        h2 { "Recent flares" }
        @if view.recent.is_empty() { p { "No flare yet." } }
        @for f in &view.recent { (flare_row(frame, f)) }
    };
    frame.page("incidents", body)
}
