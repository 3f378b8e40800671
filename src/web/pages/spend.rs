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

/// A chart's vertical axis: its top, and where the cap stands — on the
/// plot when it is near the data, else named above it (a cap 100 times
/// today's spend drawn to scale flattens the data to a line at the foot).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Axis {
    /// The value at the top of the plot.
    top: f64,
    /// The cap, when it is drawn on the plot.
    cap_on_plot: Option<f64>,
    /// The cap, when it is too far above the data to draw.
    cap_above: Option<f64>,
}

/// How far above the data the cap may be and still be drawn.
const CAP_IN_VIEW: f64 = 4.0;

/// The axis for data whose largest value is `largest`, against `cap`:
/// pure, so a chart's scale is tested without drawing it.
fn axis(largest: f64, cap: Option<f64>) -> Axis {
    let largest = largest.max(0.0);
    if largest == 0.0 {
        // Nothing spent: the plot shows the cap's height, or a cent.
        return Axis {
            top: round_up(cap.unwrap_or(0.01)),
            cap_on_plot: cap,
            cap_above: None,
        };
    }
    match cap {
        Some(c) if c <= largest.max(f64::MIN_POSITIVE) * CAP_IN_VIEW => Axis {
            top: round_up(largest.max(c)),
            cap_on_plot: Some(c),
            cap_above: None,
        },
        cap => Axis {
            top: round_up(largest),
            cap_on_plot: None,
            cap_above: cap,
        },
    }
}

/// `x` rounded up to 1, 2 or 5 times a power of ten (at least $0.0001):
/// an axis a reader takes in at a glance.
fn round_up(x: f64) -> f64 {
    let x = x.max(0.0001);
    let power = 10f64.powf(x.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * power)
        .find(|step| *step >= x * (1.0 - 1e-9))
        .unwrap_or(10.0 * power)
}

/// A dollar figure as short as the axis needs.
fn tick_label(x: f64) -> String {
    if x >= 1.0 {
        format!("${x:.2}")
    } else {
        format!(
            "${}",
            format!("{x:.4}")
                .trim_end_matches('0')
                .trim_end_matches('.')
        )
    }
}

/// Where the plot puts `dollars` on `axis` (the top 12 units are for
/// labels).
fn plot_y(axis: &Axis, dollars: f64) -> f64 {
    const TOP_ROOM: f64 = 12.0;
    H - dollars.clamp(0.0, axis.top) / axis.top * (H - TOP_ROOM)
}

/// The axis's labels, and the cap's line or its note.
fn frame_of(axis: &Axis) -> Markup {
    let top = plot_y(axis, axis.top);
    html! {
        line x1="0" x2=(W) y1=(format!("{top:.1}")) y2=(format!("{top:.1}")) stroke="#eee" {}
        text x="2" y=(format!("{:.1}", top - 2.0)) font-size="9" fill="#666" { (tick_label(axis.top)) }
        line x1="0" x2=(W) y1=(H) y2=(H) stroke="#999" {}
        @if let Some(c) = axis.cap_on_plot {
            @let at = plot_y(axis, c);
            line x1="0" x2=(W) y1=(format!("{at:.1}")) y2=(format!("{at:.1}")) stroke="#a11" stroke-dasharray="4 3" {}
            text x=(W - 2.0) y=(format!("{:.1}", at - 2.0)) font-size="9" fill="#a11" text-anchor="end" { "cap " (usd(c)) }
        }
    }
}

/// What the chart's caption says of the cap.
fn cap_note(axis: &Axis) -> String {
    match (axis.cap_on_plot, axis.cap_above) {
        (Some(c), _) => format!("the dashed line is the cap, {}", usd(c)),
        (None, Some(c)) => format!(
            "the cap, {}, is far above the plot (the axis ends at {})",
            usd(c),
            tick_label(axis.top)
        ),
        (None, None) => "no daily cap".into(),
    }
}

/// Today from midnight: the running total after each paid call, each a
/// dot, scaled to the day's spend; the cap drawn where it falls, or named.
fn burn_down(view: &SpendView, cap: Option<f64>, frame: &Frame) -> Markup {
    let spent = view.steps.last().map_or(0.0, |s| s.total);
    let axis = axis(spent, cap);
    let x = |secs: f64| secs / 86_400.0 * W;
    let mut points = vec![format!("0,{:.1}", plot_y(&axis, 0.0))];
    let mut dots = Vec::new();
    let mut before = 0.0;
    for step in &view.steps {
        // A staircase: the total holds until the next call adds to it.
        let at = x(f64::from(step.at.num_seconds_from_midnight()));
        let y = plot_y(&axis, step.total);
        points.push(format!("{at:.1},{:.1}", plot_y(&axis, before)));
        points.push(format!("{at:.1},{y:.1}"));
        dots.push((at, y));
        before = step.total;
    }
    let now = x(f64::from(frame.now.num_seconds_from_midnight()));
    points.push(format!("{now:.1},{:.1}", plot_y(&axis, spent)));
    let label = "today's running total, call by call, hour by hour (UTC)";
    html! {
        svg xmlns="http://www.w3.org/2000/svg" viewBox=(format!("0 0 {W} {H}")) width="100%" role="img" aria-label=(label) {
            (frame_of(&axis))
            polyline points=(points.join(" ")) fill="none" stroke="#4a7" stroke-width="2" {}
            @for (cx, cy) in &dots {
                circle cx=(format!("{cx:.1}")) cy=(format!("{cy:.1}")) r="2" fill="#4a7" {}
            }
        }
        p { small { (label) "; " (view.steps.len()) " paid calls; " (cap_note(&axis)) "." } }
    }
}

/// The last 30 days door by door, scaled to the busiest day; the cap
/// drawn where it falls, or named.
fn days(view: &SpendView, cap: Option<f64>) -> Markup {
    let busiest = view.days.iter().map(|(_, s)| s.total()).fold(0.0, f64::max);
    let axis = axis(busiest, cap);
    let bar = W / view.days.len().max(1) as f64;
    html! {
        svg xmlns="http://www.w3.org/2000/svg" viewBox=(format!("0 0 {W} {H}")) width="100%" role="img" aria-label="spend per day, last 30 days" {
            (frame_of(&axis))
            @for (i, (_, spent)) in view.days.iter().enumerate() {
                @let y = plot_y(&axis, spent.total());
                // A day that spent anything shows at least a sliver.
                @let tall = if spent.total() > 0.0 { (H - y).max(1.5) } else { 0.0 };
                rect x=(format!("{:.1}", i as f64 * bar + 1.0)) y=(format!("{:.1}", H - tall)) width=(format!("{:.1}", bar - 2.0)) height=(format!("{tall:.1}")) fill="#4a7" {}
            }
        }
        p { small { "spend per day, oldest left; " (cap_note(&axis)) "." } }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cap_far_above_the_data_is_named_not_drawn_and_the_axis_fits_the_data() {
        // $0.03 spent against a $5 cap: the plot is scaled to the spend.
        let far = axis(0.03, Some(5.0));
        assert_eq!(far.top, 0.05);
        assert_eq!((far.cap_on_plot, far.cap_above), (None, Some(5.0)));
        assert!(plot_y(&far, 0.03) < H / 2.0, "today's spend fills the plot");
        assert!(cap_note(&far).contains("far above"));
        // Near the cap: drawn where it falls, the axis reaching past it.
        let near = axis(3.2, Some(5.0));
        assert_eq!(near.top, 5.0);
        assert_eq!(near.cap_on_plot, Some(5.0));
        let over = axis(7.5, Some(5.0));
        assert_eq!((over.top, over.cap_on_plot), (10.0, Some(5.0)));
        // Nothing spent: the cap stands on the plot, or a cent's axis.
        assert_eq!(axis(0.0, Some(10.0)).cap_on_plot, Some(10.0));
        let none = axis(0.0, None);
        assert_eq!((none.top, none.cap_above), (0.01, None));
    }

    #[test]
    fn an_axis_ends_on_one_two_or_five() {
        assert_eq!(round_up(0.031), 0.05);
        assert_eq!(round_up(0.012), 0.02);
        assert_eq!(round_up(1.0), 1.0);
        assert_eq!(round_up(3.2), 5.0);
        assert_eq!(round_up(0.0), 0.0001);
        assert_eq!(tick_label(0.05), "$0.05");
        assert_eq!(tick_label(0.0002), "$0.0002");
        assert_eq!(tick_label(20.0), "$20.00");
    }
}
