//! The supervisor's side of a full disk ([`super::disk`]): look for room
//! before a tick, pause instead of dying when a write finds none, say so
//! once, and finish what was cut short when there is room again.

use crate::mailbox::cause::Clearing;
use chrono::{DateTime, Utc};

use super::disk::{self, DiskLook};
use super::recovery::Cut;
use super::{LoopTurn, Supervisor, SupervisorError};
use crate::mailbox::outbox;

impl Supervisor<'_> {
    /// The least room a tick needs, in bytes (`[tick] min_free_mb`).
    fn min_free(&self) -> u64 {
        self.config.tick.min_free_mb.saturating_mul(1 << 20)
    }

    /// `None` when the disk has room for a tick, else what the turn is
    /// instead (no room; or the run's end, when finishing the cut tick
    /// exhausted healing). When room returns after an episode: the tick it
    /// cut short is finished, the flare is written if it could not be
    /// before, and the next hand-edit commit looks at everything.
    pub(super) fn room_for_a_tick(&mut self) -> Result<Option<LoopTurn>, SupervisorError> {
        let now = self.options.clock.now();
        let free = crate::run_state::room::free_bytes(self.home.root()).ok();
        let new = self.disk.is_none();
        let min_free = self.min_free();
        match disk::look(&mut self.disk, free, min_free, now) {
            DiskLook::Room => Ok(None),
            DiskLook::Full => {
                if new {
                    tracing::warn!(
                        "the disk holding {} has {} MiB free, under [tick] min_free_mb = {}: \
                         ticks pause until there is room",
                        self.home.root().display(),
                        free.unwrap_or(0) >> 20,
                        self.config.tick.min_free_mb
                    );
                }
                self.flare_disk_full(now);
                Ok(Some(LoopTurn::NoRoom))
            }
            DiskLook::Resume(episode) => {
                tracing::info!(
                    "the disk has room again; ticks resume (paused since {})",
                    crate::clock::to_second(episode.since)
                );
                if !episode.flared {
                    let flare =
                        episode.flare(self.home.root(), self.config.tick.min_free_mb, Some(now));
                    match outbox::post(self.home, &flare, now) {
                        Ok(rel) => {
                            tracing::warn!("flare: {rel}");
                            self.set_disk_flared();
                            self.announce_new_flares();
                        }
                        Err(e) => tracing::error!("could not write the disk flare: {e}"),
                    }
                }
                self.wake.hand_edits_failed();
                self.notices
                    .clear(Clearing::DiskHasRoom, "the disk has room again");
                if episode.interrupted {
                    if let Some(current) = &mut self.disk {
                        current.interrupted = false;
                    }
                    self.last_tick = super::last_recorded_tick(self.home);
                    let verdict = self.recover_unfinished_tick(Cut::DiskFull)?;
                    if let Some(outcome) = self.act(verdict)? {
                        return Ok(Some(LoopTurn::Return(outcome)));
                    }
                }
                Ok(None)
            }
        }
    }

    /// A tick was committed: a full-disk episode, if one went on, is over.
    pub(super) fn disk_episode_over(&mut self) {
        if let Some(episode) = disk::ended(&mut self.disk) {
            tracing::info!(
                "a tick was committed again; the disk was full from {}",
                crate::clock::to_second(episode.since)
            );
            self.notices
                .clear(Clearing::DiskHasRoom, "the disk has room again");
        }
    }

    fn set_disk_flared(&mut self) {
        if let Some(current) = &mut self.disk {
            current.flared = true;
        }
    }

    /// A write failed for want of room: ticks pause (the tick in progress
    /// is finished once there is room), where the supervisor used to die.
    pub(super) fn pause_for_room(&mut self, error: &SupervisorError) {
        let now = self.options.clock.now();
        if self.disk.is_none() {
            tracing::warn!("the disk is full ({error}): ticks pause until there is room");
        }
        disk::failed_write(&mut self.disk, error.to_string(), now);
        self.flare_disk_full(now);
    }

    /// Whether `error` is the disk's: it says so, or it came while the
    /// disk has no room. libgit2 does not always say: a large blob it could
    /// not write surfaces later as "object not found" or "index does not
    /// contain", which the supervisor took for a fault of its own and
    /// exited on.
    pub(super) fn for_want_of_room(&self, error: &SupervisorError) -> bool {
        disk::is_disk_full(error) || self.disk_is_short(None)
    }

    /// Runs `step` until it does not fail for want of room, pausing (one
    /// flare, systemd told the supervisor is up) and looking again between
    /// tries: `Err(signal)` when a stop came meanwhile.
    pub(super) fn until_room<T>(
        &mut self,
        mut step: impl FnMut(&mut Self) -> Result<T, SupervisorError>,
    ) -> Result<Result<T, i32>, SupervisorError> {
        loop {
            match step(self) {
                Ok(done) => return Ok(Ok(done)),
                Err(e) if self.for_want_of_room(&e) => {
                    self.pause_for_room(&e);
                    if let Some(n) = &self.options.sd_notify {
                        n.ready("hearth waiting for room on the disk");
                    }
                    let mut due = self.retry_for_room();
                    if let Some(signal) = self.wait_until(&mut due) {
                        return Ok(Err(signal));
                    }
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Whether a tick that just failed may have failed for want of room.
    pub(super) fn disk_is_short(&self, note: Option<&str>) -> bool {
        let said_so = note.is_some_and(disk::says_disk_full);
        said_so
            || crate::run_state::room::free_bytes(self.home.root())
                .is_ok_and(|free| free < self.min_free())
    }

    /// Writes the episode's flare if it is not written yet; a disk with no
    /// room at all refuses it, and it is tried again at each look.
    fn flare_disk_full(&mut self, now: DateTime<Utc>) {
        let min_free_mb = self.config.tick.min_free_mb;
        let Some(episode) = &mut self.disk else {
            return;
        };
        if episode.flared {
            return;
        }
        let flare = episode.flare(self.home.root(), min_free_mb, None);
        if let Ok(rel) = outbox::post(self.home, &flare, now) {
            episode.flared = true;
            tracing::warn!("flare: {rel}");
            self.announce_new_flares();
        }
    }
}
