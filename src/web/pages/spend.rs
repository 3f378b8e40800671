//! `/spend`: what the agent cost, as `view::spend` reads it — 30 days
//! against the daily cap, today's burn-down, each of today's ticks with
//! its cache share, recall's rerank calls — drawn as server-rendered SVG
//! (no chart library in the browser, no script).

use chrono::Timelike;
use maud::{html, Markup};

use super::Frame;
use crate::home::Home;
use crate::view::spend::{spend as read, SpendView};

/// The charts' drawing box.
const W: f64 = 300.0;
const H: f64 = 120.0;

fn usd(x: f64) -> String {
    format!("${x:.2}")
}

fn fine(x: f64) -> String {
    format!("${x:.4}")
}

/// `/spend`.
pub fn spend(frame: &Frame, home: &Home) -> Markup {
    let view = read(home, frame.now);
    let cap = frame.status.daily_usd.filter(|c| *c > 0.0);
    let today = view.today.total();
    let body = html! {
        p {
            "Today (UTC): " strong { (usd(today)) }
            @match cap {
                Some(c) => { " of " (usd(c)) " ([budget] daily_usd); " (usd((c - today).max(0.0))) " left" }
                None => { ", no daily limit" }
            }
            " — ticks " (usd(view.today.ticks)) ", asks " (usd(view.today.asks)) ", recall " (usd(view.today.calls)) "."
        }
        h2 { "Today, call by call" }
        (burn_down(&view, cap, frame))
        h2 { "The last 30 days" }
        (days(&view, cap))
        h2 { "Today's ticks" }
        @if view.ticks.is_empty() { p { "No tick today." } }
        @else {
            table {
                tr class="head" { th { "tick" } th { "cost" } th { "sent" } th { "from cache" } }
                @for t in view.ticks.iter().rev().take(100) {
                    tr {
                        td { a href=(frame.to(&format!("/ticks/{}", t.tick))) { "tick " (t.tick) } " " small { (t.end.format("%H:%M")) } }
                        td { (fine(t.cost_usd)) }
                        td { (t.sent) " tokens" }
                        td { @match t.cache_share { Some(s) => (format!("{:.0}%", s * 100.0)), None => "—" } }
                    }
                }
            }
        }
        h2 { "Recall's rerank calls today" }
        @if view.calls.is_empty() { p { "None." } }
        @else {
            table {
                @for c in &view.calls {
                    tr { td { (c.time.format("%H:%M:%S")) } td { (c.door) } td { (c.model) } td { (fine(c.cost_usd)) } }
                }
            }
        }
        @for problem in &view.problems { p class="attention" { "cannot read: " (problem) } }
    };
    frame.page("spend", body)
}

/// Today from midnight: what is left of the cap after each paid call (a
/// burn-down), or the running total when there is no cap.
fn burn_down(view: &SpendView, cap: Option<f64>, frame: &Frame) -> Markup {
    let top = view
        .steps
        .last()
        .map_or(0.0, |s| s.total)
        .max(cap.unwrap_or(0.0))
        .max(0.01);
    let x = |secs: f64| secs / 86_400.0 * W;
    let y = |dollars: f64| H - dollars.clamp(0.0, top) / top * (H - 4.0);
    let shown = |total: f64| cap.map_or(total, |c| c - total);
    let mut points = vec![format!("0,{:.1}", y(shown(0.0)))];
    for step in &view.steps {
        let at = f64::from(step.at.num_seconds_from_midnight());
        points.push(format!("{:.1},{:.1}", x(at), y(shown(step.total))));
    }
    let now = x(f64::from(frame.now.num_seconds_from_midnight()));
    let last = view.steps.last().map_or(0.0, |s| s.total);
    points.push(format!("{now:.1},{:.1}", y(shown(last))));
    let label = match cap {
        Some(_) => "what is left of today's cap, hour by hour (UTC)",
        None => "today's running total, hour by hour (UTC)",
    };
    html! {
        svg xmlns="http://www.w3.org/2000/svg" viewBox=(format!("0 0 {W} {H}")) width="100%" role="img" aria-label=(label) {
            @if let Some(c) = cap {
                @let top_line = y(c);
                line x1="0" x2=(W) y1=(format!("{top_line:.1}")) y2=(format!("{top_line:.1}")) stroke="#ccc" {}
            }
            line x1="0" x2=(W) y1=(H) y2=(H) stroke="#a11" {}
            polyline points=(points.join(" ")) fill="none" stroke="#4a7" stroke-width="2" {}
        }
        p { small { (label) "; " (view.steps.len()) " paid calls." } }
    }
}

/// The last 30 days door by door, against the cap.
fn days(view: &SpendView, cap: Option<f64>) -> Markup {
    let top = view
        .days
        .iter()
        .map(|(_, s)| s.total())
        .fold(cap.unwrap_or(0.0), f64::max)
        .max(0.01);
    let bar = W / view.days.len().max(1) as f64;
    html! {
        svg xmlns="http://www.w3.org/2000/svg" viewBox=(format!("0 0 {W} {H}")) width="100%" role="img" aria-label="spend per day, last 30 days" {
            @for (i, (_, spent)) in view.days.iter().enumerate() {
                @let tall = spent.total() / top * (H - 4.0);
                rect x=(format!("{:.1}", i as f64 * bar + 1.0)) y=(format!("{:.1}", H - tall)) width=(format!("{:.1}", bar - 2.0)) height=(format!("{tall:.1}")) fill="#4a7" {}
            }
            @if let Some(c) = cap {
                @let y = H - c / top * (H - 4.0);
                line x1="0" x2=(W) y1=(format!("{y:.1}")) y2=(format!("{y:.1}")) stroke="#a11" stroke-dasharray="4 3" {}
            }
        }
        table {
            tr class="head" { th { "day" } th { "ticks" } th { "asks" } th { "recall" } th { "all" } }
            @for (day, spent) in view.days.iter().rev().filter(|(_, s)| s.total() > 0.0) {
                tr {
                    td { (day) }
                    td { (fine(spent.ticks)) }
                    td { (fine(spent.asks)) }
                    td { (fine(spent.calls)) }
                    td { (fine(spent.total())) }
                }
            }
        }
    }
}
