//! A service that starts on a broken `hearth.toml` never dies without a
//! word. Under systemd a supervisor that exited on it would be restarted
//! five times in ten minutes and then left stopped, with only the journal
//! knowing why. Instead it comes up, writes one `config` flare naming the
//! file, line and fix, says so in `hearth status` (its phase is
//! `config-broken`), ticks nothing, and reads the file again every second:
//! once it parses, the supervisor starts as it would have — the same as a
//! file that breaks while it runs. At a terminal (`--ticks N`) the error is
//! still the command's.

use crate::mailbox::cause::Cause;
use std::time::Duration;

/// How long a save of `hearth.toml` must stand before it is taken.
const SETTLE: Duration = Duration::from_millis(150);

use super::wake::{Wake, Wakeups};
use super::RunOptions;
use crate::config::notify::NotifyConfig;
use crate::config::{Config, ConfigError};
use crate::home::Home;
use crate::mailbox::outbox::{self, Letter};
use crate::run_state::phase::{self, Phase, SupervisorState};

/// How often the file is read again.
const RECHECK: Duration = Duration::from_secs(1);

/// What the wait ended with.
pub(super) enum Waited {
    /// The file parses: start with it.
    Parses(Box<Config>),
    /// Told to stop (the signal) before it did.
    Stopped(i32),
}

/// Waits, flared and visible, until `hearth.toml` parses; `broken` is the
/// first error read.
pub(super) fn until_it_parses(
    home: &Home,
    options: &RunOptions,
    wake: &Wakeups,
    broken: ConfigError,
) -> Waited {
    let mut said: Option<String> = None;
    let mut error = broken;
    let mut route = NoticeRoute::for_broken(home);
    let since = options.clock.now();
    loop {
        let shown = error.to_string();
        if said.as_deref() != Some(shown.as_str()) {
            route = NoticeRoute::for_broken(home);
            say(home, options, &error, &route);
            said = Some(shown);
        }
        if let Some(n) = &options.sd_notify {
            n.keep_alive();
        }
        // A receiver that was down when the notice was made gets it once
        // it is back (the queue keeps its backoff).
        deliver_queued(home, options, &route);
        let mut timeout = RECHECK;
        if let Some(every) = options.sd_notify.as_ref().and_then(|n| n.wake_every()) {
            timeout = timeout.min(every);
        }
        if let Some(Wake::Stop(signal)) = wake.next(timeout) {
            // The stop is the operator's, and recorded as one: the next
            // start does not take the time since for a gap of unknown cause.
            super::gap::record_stop(
                home,
                &super::gap::LastStop {
                    at: options.clock.now(),
                    reason: format!(
                        "stopped by signal {signal} while hearth.toml did not parse (since {})",
                        crate::clock::to_second(since)
                    ),
                    by_operator: true,
                },
            );
            phase::clear_state(home);
            return Waited::Stopped(signal);
        }
        match settled(home) {
            Ok(config) => {
                tracing::info!("{} parses again: starting", home.config_path().display());
                return Waited::Parses(Box::new(config));
            }
            Err(e) => error = e,
        }
    }
}

/// `hearth.toml` as it stands once a save has settled: a file written in
/// place is empty for a moment (and an empty file parses: every key has a
/// default), so the text must read the same twice, a moment apart.
fn settled(home: &Home) -> Result<Config, ConfigError> {
    let path = home.config_path();
    let mut before = std::fs::read(&path).ok();
    loop {
        std::thread::sleep(SETTLE);
        let config = Config::load(&path)?;
        let now = std::fs::read(&path).ok();
        if now == before {
            return Ok(config);
        }
        before = now; // still being written: look again
    }
}

/// The log line, the flare (one per broken version, and not while one
/// about the same error is unread), systemd's status, and the phase.
fn say(home: &Home, options: &RunOptions, error: &ConfigError, route: &NoticeRoute) {
    let now = options.clock.now();
    tracing::error!(
        "{error}; waiting for it to be fixed (hint: {})",
        error.hint()
    );
    let shown = error.to_string();
    let line = error
        .quoted_line()
        .map(|l| format!("    {l}\n\n"))
        .unwrap_or_default();
    let body = format!(
        "The supervisor started, and hearth.toml does not parse:\n\n    {shown}\n\n{line}\
         To fix: {}. Nothing ticks meanwhile and nothing is lost: inbox messages wait in \
         inbox/. The file is read again every second; once it parses, ticking starts by \
         itself (no restart needed).\n{}",
        error.hint(),
        route.says()
    );
    if let NoticeRoute {
        from: RouteFrom::Nowhere,
        ..
    } = route
    {
        tracing::error!("{}", route.says().trim());
    }
    // A restart on the same broken file says nothing new: the unread
    // flare stands.
    if !flare_says(home, &shown) {
        let flare = Letter::flare(Cause::Config, "hearth.toml does not parse at start", body);
        match outbox::post(home, &flare, now) {
            Ok(rel) => tracing::warn!("flare: {rel}"),
            Err(e) => tracing::error!("could not write the config flare: {e}"),
        }
    }
    tell_off_the_box(home, options, route, now);
    if let Some(n) = &options.sd_notify {
        n.ready(&format!("waiting: hearth.toml does not parse ({shown})"));
    }
    let state = SupervisorState {
        pid: std::process::id(),
        started: now,
        phase: Phase::ConfigBroken,
        tick: None,
        next_due: None,
    };
    if let Err(e) = phase::write_state(home, &state) {
        tracing::warn!("{e}");
    }
}

/// The operator hears of it where they are: with no supervisor loop yet,
/// the notice is queued and tried here, once, by `route`; what the
/// receiver did not take waits in the queue for the supervisor's courier.
fn tell_off_the_box(
    home: &Home,
    options: &RunOptions,
    route: &NoticeRoute,
    now: chrono::DateTime<chrono::Utc>,
) {
    use crate::notify::{courier, incidents, targets};
    let targets = targets::targets(&route.notify, &options.notify_secrets);
    match incidents::notice_new_flares(home, now) {
        Ok(notices) => {
            let queued = courier::enqueue(home, &notices, &targets, route.notify.min_severity, now);
            if let Err(e) = queued {
                tracing::error!("the config notice could not be queued: {e}");
            }
        }
        Err(e) => tracing::error!("the config notice could not be queued: {e}"),
    }
    deliver_queued(home, options, route);
}

/// One round of the queue's due deliveries, to `route`'s targets.
fn deliver_queued(home: &Home, options: &RunOptions, route: &NoticeRoute) {
    let targets = crate::notify::targets::targets(&route.notify, &options.notify_secrets);
    let retry = Duration::from_millis(route.notify.retry_ms);
    if let Err(e) = crate::notify::courier::deliver_due(home, &targets, retry, options.clock.now())
    {
        tracing::debug!("notices could not be delivered: {e}");
    }
}

/// Where the notices of a `hearth.toml` that does not parse go: the one
/// incident the operator most needs to hear of always has somewhere to go
/// when it can.
#[derive(Debug, Clone)]
pub struct NoticeRoute {
    /// The `[notify]` its notices are sent by.
    pub notify: NotifyConfig,
    /// Which file that came from.
    pub from: RouteFrom,
}

/// Which `hearth.toml` a [`NoticeRoute`] was read from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RouteFrom {
    /// The broken file's own `[notify]`, which parses and names a target.
    TheFile,
    /// The last committed `hearth.toml` that parsed (its short commit id):
    /// the broken file's `[notify]` does not parse, or names no target.
    Committed(String),
    /// Neither: the notices stay on the box.
    Nowhere,
}

/// How far back the history is searched for a `hearth.toml` that parsed.
const COMMITTED_DEPTH: usize = 500;

impl NoticeRoute {
    /// The route for the home's `hearth.toml` as it is now.
    pub fn for_broken(home: &Home) -> NoticeRoute {
        let path = home.config_path();
        let text = std::fs::read(&path)
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default();
        let own = NotifyConfig::salvage(&text);
        if let Some(notify) = own.clone().filter(NotifyConfig::any_target) {
            return NoticeRoute {
                notify,
                from: RouteFrom::TheFile,
            };
        }
        let parses = |bytes: &[u8]| {
            std::str::from_utf8(bytes).is_ok_and(|t| Config::parse(&path, t).is_ok())
        };
        let committed = crate::repo::Repo::open(home.root())
            .ok()
            .and_then(|repo| {
                repo.last_good_version(crate::home::layout::rel::CONFIG, COMMITTED_DEPTH, parses)
                    .ok()
                    .flatten()
            })
            .and_then(|(bytes, commit)| {
                let text = String::from_utf8(bytes).ok()?;
                let config = Config::parse(&path, &text).ok()?;
                Some((config.notify, commit))
            })
            .filter(|(notify, _)| notify.any_target());
        match committed {
            Some((notify, commit)) => NoticeRoute {
                notify,
                from: RouteFrom::Committed(commit),
            },
            None => NoticeRoute {
                notify: own.unwrap_or_default(),
                from: RouteFrom::Nowhere,
            },
        }
    }

    /// What the config flare says of where it is sent.
    pub fn says(&self) -> String {
        match &self.from {
            RouteFrom::TheFile => String::new(),
            RouteFrom::Committed(commit) => format!(
                "\n[notify] in this file cannot be read (or names no target), so this notice is \
                 sent to the targets of the last committed hearth.toml that parsed (commit \
                 {commit}).\n"
            ),
            RouteFrom::Nowhere => "\n[notify] in this file cannot be read, and no committed \
                 hearth.toml that parses names a target: this notice stays on the box (the \
                 outbox, `hearth flares`, `hearth status`).\n"
                .to_string(),
        }
    }
}

/// Whether an unread `config` flare already says `shown`.
fn flare_says(home: &Home, shown: &str) -> bool {
    crate::mailbox::flares::list(home)
        .into_iter()
        .filter(|f| f.cause() == Cause::Config && !f.read)
        .any(|f| std::fs::read_to_string(home.path(&f.path)).is_ok_and(|text| text.contains(shown)))
}
