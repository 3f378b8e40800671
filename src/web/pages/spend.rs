//! `/spend`: what the agent cost, day by day and today, as the budget
//! counts it.

use chrono::Duration;
use maud::{html, Markup};

use super::Frame;
use crate::home::Home;

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
