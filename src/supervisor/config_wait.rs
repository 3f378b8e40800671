//! A service that starts on a broken `hearth.toml` never dies without a
//! word. Under systemd a supervisor that exited on it would be restarted
//! five times in ten minutes and then left stopped, with only the journal
//! knowing why. Instead it comes up, writes one `config` flare naming the
//! file, line and fix, says so in `hearth status` (its phase is
//! `config-broken`), ticks nothing, and reads the file again every second:
//! once it parses, the supervisor starts as it would have — the same as a
//! file that breaks while it runs. At a terminal (`--ticks N`) the error is
//! still the command's.

use std::time::Duration;

use super::runtime::{self, Phase, SupervisorState};
use super::wake::{Wake, Wakeups};
use super::RunOptions;
use crate::config::{Config, ConfigError};
use crate::home::Home;
use crate::mailbox::outbox::{self, Letter};

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
    loop {
        let shown = error.to_string();
        if said.as_deref() != Some(shown.as_str()) {
            say(home, options, &error);
            said = Some(shown);
        }
        if let Some(n) = &options.notifier {
            n.keep_alive();
        }
        let mut timeout = RECHECK;
        if let Some(every) = options.notifier.as_ref().and_then(|n| n.wake_every()) {
            timeout = timeout.min(every);
        }
        if let Some(Wake::Stop(signal)) = wake.next(timeout) {
            return Waited::Stopped(signal);
        }
        match Config::load(&home.config_path()) {
            Ok(config) => {
                tracing::info!("{} parses again: starting", home.config_path().display());
                return Waited::Parses(Box::new(config));
            }
            Err(e) => error = e,
        }
    }
}

/// The log line, the flare (one per broken version, and not while one
/// about the same error is unread), systemd's status, and the phase.
fn say(home: &Home, options: &RunOptions, error: &ConfigError) {
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
         itself (no restart needed).\n",
        error.hint()
    );
    // A restart on the same broken file says nothing new: the unread
    // flare stands.
    if !flare_says(home, &shown) {
        let flare = Letter::flare("config", "hearth.toml does not parse at start", body);
        match outbox::post(home, &flare, now) {
            Ok(rel) => tracing::warn!("flare: {rel}"),
            Err(e) => tracing::error!("could not write the config flare: {e}"),
        }
    }
    if let Some(n) = &options.notifier {
        n.ready(&format!("waiting: hearth.toml does not parse ({shown})"));
    }
    let state = SupervisorState {
        pid: std::process::id(),
        started: now,
        phase: Phase::ConfigBroken,
        tick: None,
        next_due: None,
    };
    if let Err(e) = runtime::write_state(home, &state) {
        tracing::warn!("{e}");
    }
}

/// Whether an unread `config` flare already says `shown`.
fn flare_says(home: &Home, shown: &str) -> bool {
    crate::mailbox::flares::list(home)
        .into_iter()
        .filter(|f| f.flare == "config" && !f.read)
        .any(|f| std::fs::read_to_string(home.path(&f.path)).is_ok_and(|text| text.contains(shown)))
}
