//! `/incidents`: what is open, with its flares.

use maud::{html, Markup};

use super::{stamp, Frame};
use crate::home::Home;

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
                                form method="post" action=(frame.to("/incidents/acknowledge")) {
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
