//! Between ticks: when the next tick is due, and the wait for it — woken
//! early by an inbox message or a stop signal, and keeping the recall index
//! up to date with what the memory watcher sees meanwhile.

use std::collections::BTreeSet;
use std::time::Duration;

use chrono::{DateTime, Utc};

use super::systemd::SdNotify;
use super::wake::Wake;
use super::{schedule, Supervisor};
use crate::exchange::ledger::TickRecord;
use crate::mailbox::inbox;
use crate::run_state::phase::Phase;

/// Quiet time after memory events before re-indexing, so an editor's burst
/// of writes is indexed once, and well within the 1 s freshness promise.
const MEMORY_SETTLE: Duration = Duration::from_millis(100);
/// Quiet time after an inbox event before ticking, so a message still being
/// copied in is read whole.
const INBOX_SETTLE: Duration = Duration::from_millis(150);

/// How often a waiting supervisor looks for a peer's home that was missing
/// (a directory that does not exist cannot be watched): a few `stat`s.
const MISSING_PEER_RECHECK: Duration = Duration::from_secs(1);

impl Supervisor<'_> {
    /// The first tick's time ([`schedule::first_due`]).
    pub(super) fn first_due(&self) -> DateTime<Utc> {
        // A message waiting already (left while no supervisor ran, or
        // come before the inbox was watched) is answered now, as one that
        // arrives while we wait would be.
        let waits = inbox::pending(self.home).is_ok_and(|p| !p.is_empty());
        schedule::first_due(
            self.options.clock.now(),
            self.options.ticks.is_some(),
            waits,
            self.last_tick.as_ref().map(|t| t.end),
            self.interval(),
        )
    }

    /// The interval between ticks ([`schedule::interval`]).
    pub(super) fn interval(&self) -> chrono::Duration {
        schedule::interval(
            self.options.interval,
            self.options.ticks,
            self.config.tick.interval_s,
        )
    }

    /// The next tick's time after `record` ([`schedule::next_due`]).
    pub(super) fn next_due(
        &self,
        record: &TickRecord,
        sleep_until: Option<DateTime<Utc>>,
    ) -> DateTime<Utc> {
        // Arrived while the tick ran, after it read the inbox.
        let waits = inbox::pending(self.home).is_ok_and(|p| !p.is_empty());
        let interval = self.interval();
        let pulled = schedule::pulled_into_the_cache(
            record,
            interval,
            self.config.tick.cache_aware,
            self.config.price(),
        );
        let now = self.options.clock.now();
        schedule::next_due(record, sleep_until, now, waits, interval, pulled)
    }

    /// The wait's end: the interval's `due`, or a job's run before it (a
    /// pinned clock, which never reaches a scheduled time, waits only for
    /// the runs `hearth jobs run` asks for).
    fn with_jobs(&mut self, due: DateTime<Utc>) -> DateTime<Utc> {
        let job = self.next_job_due();
        let now = self.options.clock.now();
        match job {
            Some(at) if self.options.clock.is_pinned() && at > now => due,
            Some(at) => due.min(at.max(now)),
            None => due,
        }
    }

    /// The wait begins: a `hearth.toml` saved meanwhile re-plans
    /// `interval_due` (returned), `status` says it waits (a put-off commit
    /// among it), the index catches up and hand edits are committed.
    fn before_the_wait(&mut self, mut interval_due: DateTime<Utc>) -> DateTime<Utc> {
        if self.wake.take_config_pending() {
            interval_due = self.replan(interval_due);
        }
        self.set_phase(Phase::Waiting, None, Some(interval_due));
        // What the watcher saw (and, after a start, everything: edits made
        // while no supervisor ran) reaches the index before the wait.
        self.wake.take_memory_pending();
        self.update_recall_index();
        // Saves made while the tick ran are the operator's too: committed
        // now, not at the next tick.
        self.commit_hand_edits();
        interval_due
    }

    /// Sleeps until `interval_due` (re-planned in place when a saved
    /// `hearth.toml` changes the interval) or a job's run before it, an
    /// inbox message, or a stop signal (returned).
    pub(super) fn wait_until(&mut self, interval_due: &mut DateTime<Utc>) -> Option<i32> {
        *interval_due = self.before_the_wait(*interval_due);
        let mut due = self.with_jobs(*interval_due);
        if due != *interval_due {
            self.set_phase(Phase::Waiting, None, Some(due));
        }
        // A peer handed off while the tick ran (its wake came then).
        if self.wake.take_peer_pending() && self.take_handoffs() > 0 {
            tracing::info!("a peer handed off during the tick; ticking now");
            return None;
        }
        let clock = self.options.clock;
        if clock.is_simulated() {
            // A simulated month: the wait is a move of the clock. What
            // arrived meanwhile (a stop, memory edits) is still seen; an
            // inbox message waits for the tick that is due anyway.
            clock.advance_to(due);
            let stop = self.stop_requested();
            if self.wake.take_memory_pending() {
                self.update_recall_index();
            }
            return stop;
        }
        // A pinned clock (HEARTH_NOW) does not move, so its wait is kept
        // in real time: the interval still passes between ticks.
        let deadline = |due: DateTime<Utc>| {
            std::time::Instant::now() + (due - clock.now()).to_std().unwrap_or(Duration::ZERO)
        };
        let mut real_deadline = deadline(due);
        loop {
            if let Some(n) = &self.options.sd_notify {
                n.keep_alive();
            }
            let left = if clock.is_pinned() {
                real_deadline.saturating_duration_since(std::time::Instant::now())
            } else {
                (due - clock.now()).to_std().unwrap_or(Duration::ZERO)
            };
            if left.is_zero() {
                // Due: a stop request that came in meanwhile (even during
                // start-up) still wins over the tick. Inbox events are
                // dropped: the tick reads the inbox now.
                return self.stop_requested();
            }
            let mut timeout = left;
            if let Some(every) = self
                .options
                .sd_notify
                .as_ref()
                .and_then(SdNotify::wake_every)
            {
                timeout = timeout.min(every);
            }
            if self.peers.any_missing() {
                timeout = timeout.min(MISSING_PEER_RECHECK);
            }
            match self.wake.next(timeout) {
                Some(Wake::Stop(signal)) => return Some(signal),
                Some(first @ (Wake::Memory | Wake::Inbox)) => {
                    // Let a burst of saves, or a message still being copied
                    // in, settle; what arrived meanwhile (a stop request,
                    // a message, memory changes) is not dropped with it.
                    std::thread::sleep(match first {
                        Wake::Inbox => INBOX_SETTLE,
                        _ => MEMORY_SETTLE,
                    });
                    if let Some(Wake::Stop(signal)) = self.wake.drain_inbox() {
                        return Some(signal);
                    }
                    if self.wake.take_memory_pending() || first == Wake::Memory {
                        self.update_recall_index();
                        // A save by hand is committed as the operator's
                        // within moments, not at the next tick (an hour
                        // away, say): `git log` shows it as it happened.
                        self.commit_hand_edits();
                    }
                    // Late events from the last tick moving messages out
                    // are not arrivals: only a waiting message is.
                    if inbox::pending(self.home).is_ok_and(|p| !p.is_empty()) {
                        tracing::info!("inbox message arrived; ticking now");
                        return None;
                    }
                }
                Some(Wake::Peer) => {
                    if self.take_handoffs() > 0 {
                        tracing::info!("a peer handed off; ticking now");
                        return None;
                    }
                }
                // A peer's home that has appeared is watched from now on,
                // and what it handed off meanwhile taken.
                None if self.peers.any_missing() && self.peers.appeared() => {
                    if self.take_handoffs() > 0 {
                        tracing::info!("a peer handed off; ticking now");
                        return None;
                    }
                }
                Some(wake @ (Wake::Config | Wake::Jobs)) => {
                    std::thread::sleep(MEMORY_SETTLE);
                    if wake == Wake::Config {
                        *interval_due = self.replan(*interval_due);
                    } else {
                        // A job saved (committed as the operator's first)
                        // or a run asked for: the wait ends at the new time.
                        self.commit_hand_edits();
                    }
                    let replanned = self.with_jobs(*interval_due);
                    if replanned != due {
                        due = replanned;
                        real_deadline = deadline(due);
                        self.set_phase(Phase::Waiting, None, Some(due));
                    }
                }
                Some(Wake::Child) | None => {}
            }
        }
    }

    /// `hearth.toml` was saved: read it now, and when `[tick] interval_s`
    /// changed, the tick planned on the old interval moves to the new one
    /// (counted from the last tick's end, never before now). A wait that
    /// is not the interval's keeps its time: the agent's own sleep and the
    /// budget's wait (later than the interval) and a backoff after an
    /// outage. A shorter interval only brings a tick sooner; a longer one
    /// postpones only the tick planned on the interval itself.
    fn replan(&mut self, due: DateTime<Utc>) -> DateTime<Utc> {
        let before = self.interval();
        self.reload_config();
        let after = self.interval();
        let Some(last) = &self.last_tick else {
            return due;
        };
        let planned = last.end + before;
        if after == before || last.backoff_ms.is_some() || due > planned {
            return due;
        }
        let replanned = if due == planned {
            last.end + after
        } else {
            due.min(last.end + after)
        };
        let replanned = replanned.max(self.options.clock.now());
        if replanned != due {
            tracing::info!(
                "[tick] interval_s is now {} s: the next tick is due at {}",
                after.num_seconds(),
                crate::clock::to_second(replanned)
            );
        }
        replanned
    }

    /// Brings the recall index up to date with what the memory watcher saw
    /// (only those files, unless it could not say); a failure costs only
    /// freshness (recall catches up itself), so it is logged.
    pub(super) fn update_recall_index(&self) {
        // Read before the changes are taken: every change the token counts
        // is then among them (the watcher records paths before counting).
        if self.disk.is_some() {
            // No room to write it; what changed stays pending till there is.
            return;
        }
        let as_of = crate::memory::watched::token(self.home);
        let changes = self.wake.take_memory_changes();
        if !changes.rescan && changes.paths.is_empty() {
            return; // nothing seen since the last update
        }
        let rels: Option<BTreeSet<String>> = (!changes.rescan)
            .then(|| {
                changes
                    .paths
                    .iter()
                    .map(|p| {
                        p.strip_prefix(self.home.root())
                            .ok()
                            .map(|_| self.home.relative(p))
                    })
                    .collect()
            })
            .flatten();
        let updated =
            crate::recall::index::RecallIndex::open(self.home).and_then(|mut index| match &rels {
                Some(rels) => index.reconcile_paths(self.home, rels, as_of),
                None => index.reconcile(self.home),
            });
        match updated {
            Ok(done) if done.indexed + done.removed > 0 => tracing::debug!(
                "recall index: {} file(s) indexed, {} removed",
                done.indexed,
                done.removed
            ),
            Ok(_) => {}
            Err(e) => {
                tracing::warn!("recall index not updated: {e}");
                // The paths taken are not lost: the next update looks at
                // everything.
                self.wake.rescan_memory_later();
            }
        }
    }
}
