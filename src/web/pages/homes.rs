//! `/` of `hearth web --homes DIR`: every home under DIR with its
//! verdict, each linked to its pages under `/h/NAME/`.

use chrono::{DateTime, Utc};
use maud::{html, Markup};

use crate::home::Home;
use crate::view::status::{status, Health};
use crate::view::status_text::{health_word, verdict_line};

/// The index of `homes` (name, home) as of `now`; its verdict meta is the
/// worst of theirs.
pub fn index(homes: &[(String, Home)], now: DateTime<Utc>) -> Markup {
    let rows: Vec<(&str, crate::view::status::Status)> = homes
        .iter()
        .map(|(name, home)| (name.as_str(), status(home, now)))
        .collect();
    let worst = rows
        .iter()
        .map(|(_, s)| s.verdict.health)
        .max_by_key(|h| match h {
            Health::Healthy => 0,
            Health::Attention => 1,
            Health::Trouble => 2,
        })
        .unwrap_or(Health::Healthy);
    let meta = html! { meta name="hearth-verdict" content=(health_word(worst)); };
    let body = html! {
        main {
            h1 { "homes" }
            @if rows.is_empty() { p { "No home here (a directory with a hearth.toml)." } }
            table {
                @for (name, s) in &rows {
                    tr {
                        td { a href=(format!("/h/{name}/")) { (name) } }
                        td class=(health_word(s.verdict.health)) { (verdict_line(s)) }
                    }
                }
            }
        }
        footer { "rendered at " (super::stamp(now)) }
    };
    super::document("homes", meta, body)
}
