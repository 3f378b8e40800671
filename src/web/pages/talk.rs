//! `/talk`: the thread with the agent — what the operator said and
//! asked, what the agent answered and sent, newest last, unread letters
//! marked, each linked to its tick — and, with `--allow-act`, the forms
//! to say, ask (the answer streams in as text, `/talk.js`) and mark read.
//! Every word is shown as text.

use maud::{html, Markup};

use super::{stamp, Frame};
use crate::home::Home;
use crate::view::talk::{self, ThreadEntry, Voice};

/// Who and how, in a few words.
fn label(said: &Voice) -> &'static str {
    match said {
        Voice::Told => "you said",
        Voice::Waiting => "you said (waiting for a tick)",
        Voice::Asked => "you asked",
        Voice::Answered { whole: true } => "the agent answered",
        Voice::Answered { whole: false } => "the agent answered (cut off)",
        Voice::Letter { .. } => "the agent wrote",
    }
}

fn entry(frame: &Frame, e: &ThreadEntry) -> Markup {
    let class = match (e.said.by_agent(), e.unread, e.outside.is_some()) {
        (_, _, true) => "said outside",
        (true, true, _) => "said agent unread",
        (true, false, _) => "said agent",
        (false, _, _) => "said operator",
    };
    html! {
        div class=(class) {
            p class="who" {
                strong { (label(&e.said)) }
                @if e.unread { " · " strong class="attention" { "unread" } }
                " · " (stamp(e.time))
                @if let Some(t) = e.tick { " · " a href=(frame.to(&format!("/ticks/{t}"))) { "tick " (t) } }
            }
            @if let Some(from) = &e.outside {
                p class="attention" { "Outside words (" (from) "): the agent reads them as quoted data, never as yours." }
            }
            @if let Voice::Letter { subject, .. } = &e.said {
                @if !subject.is_empty() { p { strong { (subject) } } }
            }
            pre class="words" { (e.text) }
            @if let Some(rest) = &e.cut_from { p { "… the rest is in " code { (rest) } } }
        }
    }
}

/// The agent's replies to mail not proven yours, each whole, waiting for
/// your word (`--allow-act`: Send, as `hearth mail send`).
fn held(frame: &Frame, home: &Home, acts: bool) -> Markup {
    let held = crate::mail::reply::held(home);
    html! {
        @if !held.is_empty() {
            h2 { "Replies waiting for your word" }
            @for h in &held {
                div class="said outside" {
                    p class="who" {
                        strong { "the agent would send to " (h.to) } " · " code { (h.letter) }
                    }
                    p class="attention" { "Not sent: " (h.verdict) }
                    pre class="words" { (h.body) }
                    @if acts {
                        form method="post" action=(frame.to("/talk/send")) {
                            input type="hidden" name="letter" value=(h.letter);
                            button type="submit" { "Send it to " (h.to) }
                        }
                    }
                }
            }
        }
    }
}

/// `/talk` (`?before=N`: the page before).
pub fn talk(frame: &Frame, home: &Home, before: Option<u64>, acts: bool) -> Markup {
    let thread = talk::thread(home, before);
    let unread = thread.unread_letters();
    let body = html! {
        @for problem in &thread.problems { p class="trouble" { (problem) } }
        @if let Some(older) = thread.older {
            p { a href=(frame.to(&format!("/talk?before={older}"))) { "← earlier" } }
        }
        @if thread.entries.is_empty() { p { "Nothing has been said yet." } }
        @for e in &thread.entries { (entry(frame, e)) }
        @if thread.at.is_some() { p { a href=(frame.to("/talk")) { "newest →" } } }
        @if thread.at.is_none() { (held(frame, home, acts)) }
        @if acts {
            @if let (false, Some(newest)) = (unread.is_empty(), thread.newest()) {
                form method="post" action=(frame.to("/talk/read")) {
                    input type="hidden" name="through" value=(newest.to_rfc3339());
                    @if let Some(at) = thread.at { input type="hidden" name="before" value=(at); }
                    button type="submit" { "Mark " (unread.len()) " read" }
                }
            }
            form method="post" action=(frame.to("/talk/say")) {
                label { "Say (the next tick reads it)" textarea name="text" rows="3" required {} }
                button type="submit" { "Say" }
            }
            form method="post" action=(frame.to("/talk/ask")) id="ask" {
                label { "Ask (answered now)" textarea name="text" rows="3" required {} }
                button type="submit" { "Ask" }
            }
            pre class="words" id="answer" hidden {}
        } @else {
            p { "This page is read-only: start it with --allow-act to say and ask from here." }
        }
    };
    frame.page_with_script("talk", "/talk.js", body)
}
