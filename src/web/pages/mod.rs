//! The pages, rendered from the read room's models (`crate::view`) and
//! the home's records: never a figure of their own. Every page says the
//! commit it was rendered from and the verdict (`<meta name=
//! "hearth-commit">`, `<meta name="hearth-verdict">`, and in its header
//! and footer). Everything the agent, a peer or a stranger wrote — memory,
//! subjects, flare titles, file names — reaches the page through maud,
//! which escapes it: shown as text, never run.

mod homes;
mod incidents;
mod jobs;
mod memory;
mod proposals;
mod spend;
mod talk;
mod today;

pub use homes::index;
pub use incidents::incidents;
pub use jobs::{job, jobs};
pub use memory::{memory, memory_file, recall};
pub use proposals::{proposal, proposals, request};
pub use spend::spend;
pub use talk::talk;
pub use today::{tick, today};

use chrono::{DateTime, SecondsFormat, Utc};
use maud::{html, Markup, DOCTYPE};

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
tr.outside{background:#fff3dc}form.recall{margin:.25rem 0}h1{font-size:1.5rem;overflow-wrap:anywhere}\
div.said{border-left:3px solid #bbb;padding:.1rem .6rem;margin:.6rem 0}div.agent{border-color:#176a2c}div.unread{background:#eef7ee}div.outside{border-color:#c80;background:#fff3dc}p.who{margin:.2rem 0;font-size:.85rem;color:#555}pre.words{white-space:pre-wrap;overflow-wrap:anywhere;background:none;padding:0;font:inherit;margin:.2rem 0}textarea{width:100%;box-sizing:border-box;font:inherit;display:block}@media (max-width:600px){table,tbody,tr,td{display:block}tr.head{display:none}\
tr{border-bottom:1px solid #ddd;padding:.4rem 0}td{border:0;padding:.1rem 0}}";

/// The script every page loads (`/live.js`), compiled in.
pub const LIVE_JS: &str = include_str!("../assets/live.js");

/// The thread's script (`/talk.js`): an ask's answer streamed into the
/// page as text.
pub const TALK_JS: &str = include_str!("../assets/talk.js");

/// What every page shows around its body.
pub struct Frame {
    /// The commit the page is rendered from (none: a home with no commit).
    pub commit: Option<String>,
    /// The home's status (its verdict at the top).
    pub status: Status,
    /// When it was rendered.
    pub now: DateTime<Utc>,
    /// Where the home's pages are: empty for the one home served,
    /// `/h/NAME` for one of `--homes`.
    pub base: String,
}

impl Frame {
    /// The frame of `home`, served under `base`, as of `now`.
    pub fn of(home: &Home, base: &str, now: DateTime<Utc>) -> Frame {
        Frame {
            commit: crate::repo::Repo::open(home.root())
                .ok()
                .and_then(|r| r.head()),
            status: crate::view::status::status(home, now),
            now,
            base: base.to_string(),
        }
    }

    /// The address of this home's page `path` (`/jobs`).
    pub fn to(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    fn page(&self, title: &str, body: Markup) -> Markup {
        self.page_with_script(title, "", body)
    }

    /// [`Frame::page`] loading one more script of the page's own
    /// (`/talk.js`), none when `script` is empty.
    fn page_with_script(&self, title: &str, script: &str, body: Markup) -> Markup {
        let health = health_word(self.status.verdict.health);
        let commit = self.commit.as_deref().unwrap_or("none");
        let tick = self.status.last_tick.as_ref().map(|t| t.tick);
        let meta = html! {
            meta name="hearth-commit" content=(commit);
            meta name="hearth-verdict" content=(health);
            meta name="hearth-base" content=(self.base);
            script src="/live.js" defer {}
            @if !script.is_empty() { script src=(script) defer {} }
        };
        let body = html! {
                    header {
                        nav {
                            a href=(self.to("/")) { "today" }
                            a href=(self.to("/talk")) { "talk" }
                            a href=(self.to("/incidents")) { "incidents" }
                            a href=(self.to("/proposals")) { "proposals" }
                            a href=(self.to("/jobs")) { "jobs" }
                            a href=(self.to("/spend")) { "spend" }
                            a href=(self.to("/memory/")) { "memory" }
                            @if !self.base.is_empty() { a href="/" { "all homes" } }
                        }
                        form method="get" action=(self.to("/recall")) class="recall" {
                            input type="search" name="q" placeholder="recall…" aria-label="recall";
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
        };
        document(title, meta, body)
    }
}

/// A whole page: `head` with the stylesheet, what `meta` adds, and the
/// title, around `body`.
fn document(title: &str, meta: Markup, body: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                (meta)
                title { (title) " · hearth" }
                link rel="stylesheet" href="/style.css";
            }
            body { (body) }
        }
    }
}

/// What a name escapes in a link's path: all but letters, digits, `-`,
/// `_`, `.`, `~` and `/`, so `#`, `?`, `%`, spaces and quotes in a file's
/// or a job's name never change where the link leads (the server decodes
/// a path once).
const IN_PATH: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~')
    .remove(b'/');

/// `name` as a link's path writes it.
fn in_link(name: &str) -> String {
    percent_encoding::utf8_percent_encode(name, IN_PATH).to_string()
}

/// A commit's first twelve characters.
fn short(commit: &str) -> &str {
    &commit[..commit.len().min(12)]
}

/// A time as the pages write it (RFC 3339, seconds, UTC).
fn stamp(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// The login page (`failed`: the last token was wrong; `wait`: too many
/// were), which opens `next` (a path of this page) once logged in.
pub fn login(failed: bool, next: Option<&str>) -> Markup {
    let body = html! {
        main {
            h1 { "hearth" }
            @if failed { p class="trouble" { "That is not the token." } }
            form method="post" action="/login" {
                @if let Some(next) = next { input type="hidden" name="next" value=(next); }
                label { "Token (HEARTH_WEB_TOKEN) " input type="password" name="token" autocomplete="current-password"; }
                " " button type="submit" { "Log in" }
            }
        }
    };
    document("log in", html! {}, body)
}

/// A page for a path the page does not have.
pub fn not_found(frame: &Frame) -> Markup {
    frame.page("not here", html! { p { "There is no such page." } })
}
