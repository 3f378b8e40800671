//! `/proposals`, `/proposals/N`: what waits for the operator's word, and
//! one proposal with its diff and who wrote each line it removes.

use maud::{html, Markup};

use super::{short, stamp, Frame};
use crate::home::Home;
use crate::proposals::requests::{self, ToolRequestState};

/// `/proposals`: what waits for the operator, and what became of the rest,
/// each linked to its page — where, with `acts`, it is decided, its diff
/// in view (a proposal is never accepted from a line of a list).
pub fn proposals(frame: &Frame, home: &Home, acts: bool) -> Markup {
    let listed = match crate::proposals::list(home) {
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
                            a href=(frame.to(&format!("/proposals/{}", p.n))) { (p.title) }
                            br; small { "by " (p.by) ", commit " code { (short(&p.commit)) } }
                        }
                        td { @for f in &p.files { code { (f) } br; } }
                        td { @for o in p.outside.as_slice() { (o) br; } }
                    }
                }
            }
        },
    };
    let body = html! { (listed) h2 { "Requests" } (requests(frame, home, acts)) };
    frame.page("proposals", body)
}

/// The requests to run a tool (or take a founding), waiting first, each
/// linked to its page, where it is decided with its arguments in view.
fn requests(frame: &Frame, home: &Home, acts: bool) -> Markup {
    match requests::list(home) {
        Err(e) => html! { p class="trouble" { "cannot read: " (e.to_string()) } },
        Ok(list) if list.is_empty() => html! { p { "No request yet." } },
        Ok(mut list) => {
            list.sort_by_key(|r| (r.status != ToolRequestState::Open, std::cmp::Reverse(r.n)));
            html! {
                @if !acts {
                    p { "Decide with " code { "hearth proposals approve N" } " or " code { "decline N" } " on the server." }
                }
                table {
                    tr class="head" { th { "#" } th { "status" } th { "asks" } th { "by" } }
                    @for r in &list {
                        tr {
                            td { (r.n) }
                            td { (r.status.as_str()) }
                            td {
                                a href=(frame.to(&format!("/requests/{}", r.n))) { (r.tool) }
                                br; small { code { (requests::arguments_shown(&r.arguments, 120)) } }
                            }
                            td { (r.by) }
                        }
                    }
                }
            }
        }
    }
}

/// `/requests/N`: one request as its flare tells it — the tool, its
/// manifest and digest, the outside content behind it, its arguments in
/// full (outside words, shown as text) — with approve and decline under
/// `acts` (`None`: no such one).
pub fn request(frame: &Frame, home: &Home, n: u64, acts: bool) -> Option<Markup> {
    let r = requests::list(home).ok()?.into_iter().find(|r| r.n == n)?;
    let arguments = serde_json::to_string_pretty(&r.arguments).unwrap_or_default();
    let body = html! {
        p { (r.status.as_str()) ", asked by " (r.by) " at " (stamp(r.created)) }
        table {
            tr { th { "tool" } td { code { (r.tool) } " of " code { (r.file) } } }
            tr { th { "digest" } td { code { (r.digest) } } }
            @if let Some(dir) = &r.workdir { tr { th { "runs in" } td { code { (dir) } } } }
            tr { th { "because it read" } td { @for o in r.outside.as_slice() { (o) br; } } }
            @if let Some(reason) = &r.reason { tr { th { "declined" } td { (reason) } } }
        }
        h2 { "Arguments (outside words: read them as such)" }
        pre { code { (arguments) } }
        @if let Some(result) = &r.result { h2 { "What it said" } pre { code { (result) } } }
        @if acts && r.status == ToolRequestState::Open {
            form method="post" action=(frame.to(&format!("/requests/{n}/approve"))) {
                input type="hidden" name="digest" value=(r.digest);
                button type="submit" { "Approve: run it once, as you" }
            }
            form method="post" action=(frame.to(&format!("/requests/{n}/decline"))) {
                input type="hidden" name="digest" value=(r.digest);
                input type="text" name="reason" placeholder="why (optional)" maxlength="300";
                " " button type="submit" { "Decline" }
            }
        }
    };
    Some(frame.page(&format!("request {n}: {}", r.tool), body))
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
        @if acts && p.status.waiting() { (decide(frame, p.n, &p.commit)) }
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
fn decide(frame: &Frame, n: u64, commit: &str) -> Markup {
    html! {
        form method="post" action=(frame.to(&format!("/proposals/{n}/accept"))) {
            input type="hidden" name="commit" value=(commit);
            button type="submit" { "Accept" }
        }
        form method="post" action=(frame.to(&format!("/proposals/{n}/reject"))) {
            input type="hidden" name="commit" value=(commit);
            input type="text" name="reason" placeholder="why (optional)" maxlength="300";
            " " button type="submit" { "Reject" }
        }
    }
}
