//! What the supervisor re-reads and says as it goes: `hearth.toml` before
//! each tick (the last good one kept while it does not parse, said once per
//! broken version), and its phase for `hearth status`.

use crate::mailbox::cause::Cause;
use crate::mailbox::cause::Clearing;
use std::time::Duration;

use chrono::{DateTime, Utc};

use super::Supervisor;
use crate::config::Config;
use crate::mailbox::outbox::{self, Letter};
use crate::run_state::phase::{self, Phase, SupervisorState};

impl Supervisor<'_> {
    /// Keeps the last good config when `hearth.toml` stops parsing, and
    /// says so once per broken version of the file.
    pub(super) fn reload_config(&mut self) {
        let path = self.home.config_path();
        match Config::load(&path) {
            Ok(config) => {
                if config != self.config {
                    tracing::info!("reloaded {}", path.display());
                }
                self.repo
                    .set_lock_wait(Duration::from_secs(config.git.lock_wait_s));
                if config.metrics.textfile != self.config.metrics.textfile {
                    if crate::view::metrics::Textfile::inside_home(
                        self.home,
                        &config.metrics.textfile,
                    ) {
                        // Not followed: it would be committed every tick.
                        tracing::error!(
                            "[metrics] textfile = \"{}\" is inside the home; still writing {}",
                            config.metrics.textfile,
                            self.config.metrics.textfile
                        );
                    } else {
                        self.metrics = crate::view::metrics::Textfile::open(
                            self.home,
                            &config.metrics.textfile,
                        );
                    }
                }
                self.notices.reconfigure(&config);
                let was_broken = self.said.config_was_broken();
                self.config = config;
                self.said.config_parses();
                if was_broken {
                    self.notices
                        .clear(Clearing::ConfigParses, "hearth.toml parses again");
                }
                // A peer added (or removed) is watched from now on.
                self.watch_peers();
            }
            Err(e) => {
                let text = std::fs::read_to_string(&path).unwrap_or_default();
                if !self.said.broken_config(&text) {
                    return;
                }
                tracing::error!("{e}; keeping the last good configuration");
                let line = e
                    .quoted_line()
                    .map(|l| format!("    {l}\n\n"))
                    .unwrap_or_default();
                let body = format!(
                    "hearth.toml stopped parsing while the supervisor runs:\n\n    {e}\n\n{line}\
                     The supervisor keeps running on the last configuration that parsed. \
                     Fix the file; the next tick picks the fix up."
                );
                let flare = Letter::flare(Cause::Config, "hearth.toml does not parse", body);
                match outbox::post(self.home, &flare, self.options.clock.now()) {
                    Ok(rel) => tracing::warn!("flare: {rel}"),
                    Err(e) => tracing::error!("could not write the config flare: {e}"),
                }
            }
        }
    }

    /// Says what the supervisor does (for `hearth status`); a failure is
    /// logged, but not over and over while the disk is full.
    pub(super) fn set_phase(
        &self,
        phase: Phase,
        tick: Option<u64>,
        next_due: Option<DateTime<Utc>>,
    ) {
        let phase = match phase {
            Phase::Waiting if self.disk.is_some() => Phase::DiskFull,
            Phase::Waiting if self.git_wait.is_some() => Phase::GitLocked,
            phase => phase,
        };
        let written = phase::write_state(
            self.home,
            &SupervisorState {
                pid: std::process::id(),
                started: self.started,
                phase,
                tick,
                next_due,
            },
        );
        if let (Err(e), None) = (written, &self.disk) {
            tracing::warn!("{e}");
        }
    }
}
