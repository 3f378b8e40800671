//! The home's metrics in the Prometheus text format (exposition format
//! 0.0.4): printed by `hearth metrics`, and written by the supervisor after
//! every tick to `[metrics] textfile` for node_exporter's textfile collector
//! (a daemon that should not open a port). Counters come from the ledger
//! (every segment), so they only grow; gauges from what `hearth status`
//! reads. Rendering is a pure function of plain values.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use chrono::{DateTime, Utc};

use super::status::Status;
use crate::exchange::ledger::TickRecord;

/// What the ledger adds up to: the counters.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Totals {
    /// Ticks by class (`ok`, `crash`…).
    pub ticks: BTreeMap<&'static str, u64>,
    /// Seconds the ticks ran, in all.
    pub tick_seconds: f64,
    /// Tokens by kind: `input` (uncached), `cache_read`, `cache_write`
    /// (both lifetimes), `output`.
    pub tokens: BTreeMap<&'static str, u64>,
    /// Dollars the ticks cost.
    pub cost_usd: f64,
}

impl Totals {
    /// The totals of `records`.
    pub fn of<'a>(records: impl IntoIterator<Item = &'a TickRecord>) -> Totals {
        let mut totals = Totals::default();
        for record in records {
            totals.add(record);
        }
        totals
    }

    /// The counters a textfile written earlier holds (this module's own
    /// format), for when the ledger cannot be read: counters never go
    /// back to zero behind Prometheus's back.
    pub fn from_text(text: &str) -> Option<Totals> {
        const KINDS: [&str; 4] = ["input", "cache_write", "cache_read", "output"];
        let mut totals = Totals::default();
        let mut seen = false;
        for line in text.lines().filter(|l| !l.starts_with('#')) {
            let Some((name, value)) = line.rsplit_once(' ') else {
                continue;
            };
            let Ok(value) = value.parse::<f64>() else {
                continue;
            };
            let label = |key: &str| {
                name.split_once(&format!("{{{key}=\""))
                    .and_then(|(_, rest)| rest.split_once('"'))
                    .map(|(v, _)| v.to_string())
            };
            if name.starts_with("hearth_ticks_total{") {
                if let Some(class) = label("class").and_then(|c| CLASSES.iter().find(|k| **k == c))
                {
                    totals.ticks.insert(class, value as u64);
                }
            } else if name.starts_with("hearth_tokens_total{") {
                if let Some(kind) = label("kind").and_then(|k| KINDS.iter().find(|x| **x == k)) {
                    totals.tokens.insert(kind, value as u64);
                }
            } else if name == "hearth_tick_duration_seconds_sum" {
                totals.tick_seconds = value;
            } else if name == "hearth_spend_usd_total" {
                totals.cost_usd = value;
            } else {
                continue;
            }
            seen = true;
        }
        seen.then_some(totals)
    }

    /// Counts one more tick.
    pub fn add(&mut self, record: &TickRecord) {
        *self.ticks.entry(record.class.as_str()).or_default() += 1;
        self.tick_seconds += (record.end - record.start).num_milliseconds().max(0) as f64 / 1000.0;
        let t = &record.tokens;
        for (kind, n) in [
            ("input", t.input),
            ("cache_read", t.cache_read),
            ("cache_write", t.cache_write + t.cache_write_1h),
            ("output", t.output),
        ] {
            *self.tokens.entry(kind).or_default() += n;
        }
        self.cost_usd += record.cost_usd;
    }
}

/// The gauges that are not in [`Status`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Gauges {
    /// Inbox messages waiting for a tick.
    pub inbox_waiting: usize,
    /// Heals the healer counts toward its limit now.
    pub heals_in_window: usize,
}

/// Every class a tick can end in, so each series exists from the start
/// (a counter that appears late looks like a reset to `increase()`).
const CLASSES: [&str; 8] = [
    "ok",
    "skipped",
    "context-insufficiency",
    "coverage-gap",
    "dispatch-miss",
    "model-limitation",
    "contract-violation",
    "crash",
];

/// One metric family: its name, type, help and samples. A sample's
/// "labels" may also be a suffix (`_sum`, `_count`): what follows the
/// family's name on its line.
struct Family {
    name: &'static str,
    kind: &'static str,
    help: &'static str,
    samples: Vec<(String, String)>,
}

fn gauge(name: &'static str, help: &'static str, samples: Vec<(String, String)>) -> Family {
    Family {
        name,
        kind: "gauge",
        help,
        samples,
    }
}

fn counter(name: &'static str, help: &'static str, samples: Vec<(String, String)>) -> Family {
    Family {
        name,
        kind: "counter",
        help,
        samples,
    }
}

/// One unlabelled sample.
fn one(value: impl ToString) -> Vec<(String, String)> {
    vec![(String::new(), value.to_string())]
}

/// A sample per label value, `key="value"`, its count or zero.
fn by<'a>(
    key: &str,
    values: impl IntoIterator<Item = &'a str>,
    count: impl Fn(&str) -> u64,
) -> Vec<(String, String)> {
    values
        .into_iter()
        .map(|v| (format!("{{{key}=\"{}\"}}", escape(v)), count(v).to_string()))
        .collect()
}

/// The metrics text.
pub fn render(totals: &Totals, status: &Status, gauges: &Gauges, now: DateTime<Utc>) -> String {
    let mut out = String::new();
    let families = ticks_and_spend(totals, status)
        .into_iter()
        .chain(the_home_now(status, gauges, now));
    for Family {
        name,
        kind,
        help,
        samples,
    } in families
    {
        let _ = writeln!(out, "# HELP {name} {help}");
        let _ = writeln!(out, "# TYPE {name} {kind}");
        for (labels, value) in samples {
            let _ = writeln!(out, "{name}{labels} {value}");
        }
    }
    out
}

/// Whether a supervisor runs, what the ticks did and what they cost.
fn ticks_and_spend(totals: &Totals, status: &Status) -> Vec<Family> {
    let recorded: u64 = totals.ticks.values().sum();
    let count = |map: &BTreeMap<&str, u64>, key: &str| map.get(key).copied().unwrap_or(0);
    let mut families = vec![
        gauge(
            "hearth_supervisor_up",
            "Whether a supervisor holds the home's run lock (1) or not (0).",
            one(u8::from(status.running)),
        ),
        counter(
            "hearth_ticks_total",
            "Ticks recorded in the ledger, by how they ended.",
            by("class", CLASSES, |c| count(&totals.ticks, c)),
        ),
        Family {
            name: "hearth_tick_duration_seconds",
            kind: "summary",
            help: "How long the ticks ran.",
            samples: vec![
                ("_sum".into(), number(totals.tick_seconds)),
                ("_count".into(), recorded.to_string()),
            ],
        },
        counter(
            "hearth_tokens_total",
            "Tokens the ticks sent and received, by kind: input (uncached), cache_write, cache_read, output.",
            by("kind", ["input", "cache_write", "cache_read", "output"], |k| {
                count(&totals.tokens, k)
            }),
        ),
        counter(
            "hearth_spend_usd_total",
            "Dollars the ticks cost, at [budget.prices].",
            one(number(totals.cost_usd)),
        ),
        gauge(
            "hearth_spend_today_usd",
            "Dollars spent today (UTC) by ticks and asks, as the budget gate counts them.",
            one(number(status.spent_today_usd)),
        ),
        gauge(
            "hearth_budget_daily_usd",
            "[budget] daily_usd (0: no limit).",
            one(number(status.daily_usd.unwrap_or(0.0))),
        ),
    ];
    if let Some(last) = &status.last_tick {
        let ran = (last.end - last.start).num_milliseconds().max(0) as f64 / 1000.0;
        families.push(gauge(
            "hearth_last_tick_timestamp_seconds",
            "When the newest tick ended, in seconds since the epoch.",
            one(last.end.timestamp()),
        ));
        families.push(gauge(
            "hearth_last_tick_duration_seconds",
            "How long the newest tick ran.",
            one(number(ran)),
        ));
    }
    families
}

/// What waits, what is wrong, and what the healer has done, now.
fn the_home_now(status: &Status, gauges: &Gauges, now: DateTime<Utc>) -> Vec<Family> {
    let mut flares: BTreeMap<&str, u64> = BTreeMap::new();
    for flare in &status.unread_flares {
        let kind = if flare.flare.is_empty() {
            "letter"
        } else {
            flare.flare.as_str()
        };
        *flares.entry(kind).or_default() += 1;
    }
    let mut families = vec![
        gauge(
            "hearth_inbox_messages",
            "Inbox messages waiting for a tick.",
            one(gauges.inbox_waiting),
        ),
        gauge(
            "hearth_flares_unread",
            "Flares the operator has not marked read, by kind.",
            by("kind", flares.keys().copied(), |k| flares[k]),
        ),
        gauge(
            "hearth_failure_streak",
            "Failed ticks in a row now.",
            one(status.failure_streak),
        ),
        gauge(
            "hearth_heals_in_window",
            "Heals the healer counts toward its limit now.",
            one(gauges.heals_in_window),
        ),
        gauge(
            "hearth_panic",
            "Whether healing is exhausted and the supervisor waits for a human (1).",
            one(u8::from(status.panic.is_some())),
        ),
        gauge(
            "hearth_outage",
            "Whether the model API is failing now (1).",
            one(u8::from(status.outage.is_some())),
        ),
    ];
    if let Some(outage) = &status.outage {
        families.push(gauge(
            "hearth_outage_duration_seconds",
            "How long the model API outage in progress has lasted.",
            one((now - outage.since).num_seconds().max(0)),
        ));
    }
    families.push(gauge(
        "hearth_proposals_waiting",
        "Proposals waiting for the operator's decision.",
        one(status.proposals_waiting),
    ));
    families.push(gauge(
        "hearth_requests_waiting",
        "Calls of acting tools an exchange that read outside content asked for, waiting for the operator.",
        one(status.requests_waiting),
    ));
    if let Some(oldest) = status.oldest_proposal {
        families.push(gauge(
            "hearth_proposal_oldest_age_seconds",
            "How long the oldest proposal still waiting has waited.",
            one((now - oldest).num_seconds().max(0)),
        ));
    }
    families.push(gauge(
        "hearth_jobs_late",
        "Jobs that have not run when they were due, or whose schedule never fires.",
        one(status.jobs_late.len()),
    ));
    families.push(gauge(
        "hearth_notify_failing",
        "Whether the last delivery to a [notify] target failed (1), by target.",
        status
            .notify_failing
            .iter()
            .map(|d| {
                (
                    format!("{{target=\"{}\"}}", escape(&d.target)),
                    "1".to_string(),
                )
            })
            .collect(),
    ));
    families.extend(peer_families(status));
    if let Some(unpushed) = status.unpushed {
        families.push(gauge(
            "hearth_commits_unpushed",
            "Commits the remote-tracking branch lacks ([git] push).",
            one(unpushed),
        ));
    }
    families
}

/// The peers on other hosts: whether fetching them fails now, and when
/// it last worked (a peer never fetched has no sample there).
fn peer_families(status: &Status) -> Vec<Family> {
    let label = |peer: &str| format!("{{peer=\"{}\"}}", escape(peer));
    vec![
        gauge(
            "hearth_peer_fetch_failing",
            "Whether fetching a peer on another host fails now (1), by peer.",
            status
                .peers
                .iter()
                .map(|p| {
                    (
                        label(&p.peer),
                        u8::from(p.failing_since.is_some()).to_string(),
                    )
                })
                .collect(),
        ),
        gauge(
            "hearth_peer_last_fetch_timestamp_seconds",
            "When a fetch of a peer on another host last worked, in seconds since the epoch.",
            status
                .peers
                .iter()
                .filter_map(|p| Some((label(&p.peer), p.last_ok?.timestamp().to_string())))
                .collect(),
        ),
    ]
}

/// A float as the format writes it: no exponent for the small values
/// here, and no trailing zeros to speak of.
fn number(value: f64) -> String {
    if value.fract() == 0.0 && value.abs() < 1e15 {
        format!("{value:.0}")
    } else {
        format!("{value}")
    }
}

/// A label value, escaped as the text format asks.
fn escape(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// The metrics of `home` now, reading every ledger segment (for `hearth
/// metrics`; the supervisor keeps its totals as it goes).
pub fn of_home(home: &crate::home::Home, now: DateTime<Utc>) -> std::io::Result<String> {
    let ledger = crate::exchange::ledger::Ledger::read_all(&home.ticks_path())?;
    let totals = Totals::of(&ledger.records);
    Ok(render(
        &totals,
        &super::status::status(home, now),
        &gauges(home),
        now,
    ))
}

fn gauges(home: &crate::home::Home) -> Gauges {
    let (healer, _) = crate::healer::state::HealerState::load_or_fresh(home);
    Gauges {
        inbox_waiting: crate::mailbox::inbox::pending(home).map_or(0, |p| p.len()),
        heals_in_window: healer.heals.len(),
    }
}

/// `[metrics] textfile`, kept up by the supervisor: its totals grow with
/// each tick instead of the ledger being read again.
pub struct Textfile {
    path: std::path::PathBuf,
    totals: Totals,
}

impl Textfile {
    /// For `[metrics] textfile` (empty: none), with the ledger's totals.
    pub fn open(home: &crate::home::Home, textfile: &str) -> Option<Textfile> {
        if textfile.is_empty() {
            return None;
        }
        let totals = match crate::exchange::ledger::Ledger::read_all(&home.ticks_path()) {
            Ok(ledger) => Totals::of(&ledger.records),
            Err(e) => {
                // The last good counters, from the file itself, never zero.
                let kept = std::fs::read_to_string(textfile)
                    .ok()
                    .and_then(|text| Totals::from_text(&text));
                match kept {
                    Some(totals) => {
                        tracing::warn!("{e}; the metrics go on from what {textfile} last said");
                        totals
                    }
                    None => {
                        tracing::warn!("{e}; the metrics start from zero");
                        Totals::default()
                    }
                }
            }
        };
        Some(Textfile {
            path: textfile.into(),
            totals,
        })
    }

    /// Whether `textfile` would land inside the home (through any symlink
    /// along its directory): then hearth would commit it as a hand edit
    /// after every tick.
    pub fn inside_home(home: &crate::home::Home, textfile: &str) -> bool {
        let path = std::path::Path::new(textfile);
        let Some(dir) = path.parent() else {
            return false;
        };
        let (Ok(dir), Ok(root)) = (dir.canonicalize(), home.root().canonicalize()) else {
            return path.starts_with(home.root());
        };
        dir.starts_with(root)
    }

    /// Counts a tick just recorded.
    pub fn add(&mut self, record: &TickRecord) {
        self.totals.add(record);
    }

    /// Writes the file atomically (node_exporter must never read half of
    /// it); `up` false at exit. A failure is logged, never fatal.
    pub fn write(&self, home: &crate::home::Home, up: bool, now: DateTime<Utc>) {
        let mut status = super::status::status(home, now);
        status.running = up;
        let text = render(&self.totals, &status, &gauges(home), now);
        if let Err(e) = crate::atomic::write(&self.path, text.as_bytes()) {
            tracing::warn!("[metrics] textfile not written: {e}");
        }
    }
}
