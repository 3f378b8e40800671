//! A full disk is the host's trouble, not the agent's: ticks pause, the
//! operator hears of it once, and nothing is lost.
//!
//! Before each tick the supervisor asks the filesystem that holds the home
//! how much room is left; under `[tick] min_free_mb` no tick starts (a
//! tick whose work cannot be saved would still cost a model call). A write
//! that fails for want of room anywhere in a tick's life (the marker, the
//! ledger, the commit) pauses ticks the same way instead of ending the
//! supervisor, which used to die on it and, under systemd, die again on
//! every restart. While the disk is full the supervisor looks again every
//! [`RETRY`] (or at an inbox message); once there is room it finishes the
//! interrupted tick as a start-up after a crash would (recorded, given
//! back its inbox messages, committed), commits the hand edits, and goes
//! on. A tick that failed because the disk was full is marked `disk_full`
//! on its ledger line and the healer does not count it.
//!
//! One `disk` flare per episode: written as soon as it can be (at once
//! when the disk is merely low, else when room returns, then saying how
//! long it lasted), and logged at once either way.

use crate::mailbox::cause::Cause;
use std::path::Path;
use std::time::Duration;

use chrono::{DateTime, Utc};

use crate::mailbox::outbox::Letter;
use crate::run_state::room::FLOOR;

/// How often a supervisor waiting for room looks again.
pub const RETRY: Duration = Duration::from_secs(300);

/// The least wait between looks for room: `run --ticks N` has an interval
/// of 0, and a wait of 0 spun a core at 100% while the disk was full.
pub const RETRY_FLOOR: Duration = Duration::from_secs(1);

/// How long to wait before looking for room again, at `interval`:
/// [`RETRY`], or the interval if shorter, never less than [`RETRY_FLOOR`].
pub fn retry_after(interval: chrono::Duration) -> chrono::Duration {
    look_again_after(RETRY, interval)
}

/// A paused supervisor's wait before it looks again (for room, for git):
/// `most`, or the interval if shorter, never less than [`RETRY_FLOOR`].
pub fn look_again_after(most: Duration, interval: chrono::Duration) -> chrono::Duration {
    let most = chrono::Duration::from_std(most).unwrap_or_default();
    let floor = chrono::Duration::from_std(RETRY_FLOOR).unwrap_or_default();
    most.min(interval).max(floor)
}

/// Whether `error`, or anything it was caused by, is the disk being full
/// (`ENOSPC`) or the user's quota spent (`EDQUOT`). libgit2 reports
/// these only as text, so the text is looked at too.
pub fn is_disk_full(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut next = Some(error);
    while let Some(e) = next {
        if let Some(io) = e.downcast_ref::<std::io::Error>() {
            if matches!(io.raw_os_error(), Some(libc::ENOSPC) | Some(libc::EDQUOT)) {
                return true;
            }
        }
        if says_disk_full(&e.to_string()) {
            return true;
        }
        next = e.source();
    }
    false
}

/// Whether an error's text is the system's word for a full disk or a spent
/// quota (how libgit2 and a tick's failure note carry it).
pub fn says_disk_full(text: &str) -> bool {
    text.contains("No space left on device") || text.contains("Disk quota exceeded")
}

/// A full-disk episode in progress.
#[derive(Debug, Clone, PartialEq)]
pub struct DiskFull {
    /// When it was first seen.
    pub since: DateTime<Utc>,
    /// Free bytes when last looked at (`None`: the filesystem would not say).
    pub free: Option<u64>,
    /// The write that failed, when one did.
    pub error: Option<String>,
    /// Whether the `disk` flare is written.
    pub flared: bool,
    /// Whether a tick was cut short, to be finished once there is room.
    pub interrupted: bool,
}

impl DiskFull {
    /// The `disk` flare: while it lasts (`over` is `None`) or once it is
    /// over, for an episode whose flare could not be written meanwhile.
    pub fn flare(&self, home: &Path, min_free_mb: u64, over: Option<DateTime<Utc>>) -> Letter {
        let cause = match (&self.error, self.free) {
            (Some(error), _) => format!("A write failed: {error}"),
            (None, Some(free)) => format!(
                "{:.1} MiB are free, under [tick] min_free_mb = {min_free_mb} (a tick \
                 never starts with less than 1).",
                free as f64 / f64::from(1 << 20)
            ),
            (None, None) => "The filesystem would not say how much room is left.".into(),
        };
        let state = match over {
            None => format!(
                "Ticks are paused since {}. Nothing is lost: hand edits and inbox messages \
                 wait, and ticks resume by themselves within {} minutes of there being room \
                 (at least {min_free_mb} MiB free), or at the next inbox message.",
                crate::clock::to_second(self.since),
                RETRY.as_secs() / 60
            ),
            Some(end) => format!(
                "Ticks were paused from {} to {}; this flare could not be written until \
                 there was room again. Nothing was lost; ticks have resumed.",
                crate::clock::to_second(self.since),
                crate::clock::to_second(end)
            ),
        };
        Letter::flare(
            Cause::Disk,
            "the disk holding the home is full",
            format!(
                "The filesystem that holds {} has no room for hearth's writes.\n\n{cause}\n\n\
                 {state}\n\nFree some space on it (`df -h {}` shows how much is left).",
                home.display(),
                home.display()
            ),
        )
    }
}

/// What the supervisor makes of a look at the disk before a tick.
#[derive(Debug, Clone, PartialEq)]
pub enum DiskLook {
    /// Room enough, and no episode is going on.
    Room,
    /// Room again during this episode: a tick may try. The episode lasts
    /// until a tick is committed ([`ended`]), so a disk that only seems to
    /// have room (no inodes left, a quota) is one episode, not one a try.
    Resume(DiskFull),
    /// Full: no tick now.
    Full,
}

/// Folds a look at the free space into the episode in progress; pure, so
/// the decision is tested without filling a disk. `free` is `None` when
/// the filesystem would not say, which is taken as room (a tick that then
/// fails to write starts an episode through [`failed_write`]).
pub fn look(
    current: &mut Option<DiskFull>,
    free: Option<u64>,
    min_free: u64,
    now: DateTime<Utc>,
) -> DiskLook {
    let full = free.is_some_and(|f| f < min_free.max(FLOOR));
    if !full {
        return match current {
            Some(episode) => DiskLook::Resume(episode.clone()),
            None => DiskLook::Room,
        };
    }
    let episode = current.get_or_insert_with(|| DiskFull {
        since: now,
        free,
        error: None,
        flared: false,
        interrupted: false,
    });
    episode.free = free;
    DiskLook::Full
}

/// Starts (or continues) an episode because a write failed for want of room.
pub fn failed_write(current: &mut Option<DiskFull>, error: String, now: DateTime<Utc>) {
    let episode = current.get_or_insert_with(|| DiskFull {
        since: now,
        free: None,
        error: None,
        flared: false,
        interrupted: false,
    });
    episode.error = Some(error);
    episode.interrupted = true;
}

/// A tick was committed: the episode, if one was going on, is over.
pub fn ended(current: &mut Option<DiskFull>) -> Option<DiskFull> {
    current.take()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wait_for_room_is_the_interval_at_most_five_minutes_and_never_zero() {
        let min = chrono::Duration::minutes;
        assert_eq!(retry_after(min(15)), min(5));
        assert_eq!(retry_after(min(2)), min(2));
        // `run --ticks N`: interval 0 spun a core while the disk was full.
        assert_eq!(retry_after(min(0)), chrono::Duration::seconds(1));
    }

    fn at(min: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_800_000_000 + min * 60, 0).unwrap()
    }

    const MIB: u64 = 1 << 20;

    #[test]
    fn an_episode_starts_under_the_minimum_and_lasts_until_a_tick_is_committed() {
        let mut current = None;
        assert_eq!(
            look(&mut current, Some(100 * MIB), 50 * MIB, at(0)),
            DiskLook::Room
        );
        assert_eq!(
            look(&mut current, Some(10 * MIB), 50 * MIB, at(1)),
            DiskLook::Full
        );
        assert_eq!(look(&mut current, Some(0), 50 * MIB, at(6)), DiskLook::Full);
        let DiskLook::Resume(episode) = look(&mut current, Some(60 * MIB), 50 * MIB, at(11)) else {
            panic!("room again must let a tick try");
        };
        assert_eq!(episode.since, at(1), "since its first sight");
        assert_eq!(episode.free, Some(0));
        assert!(!episode.interrupted);
        // The tick that tried failed to write: the same episode goes on.
        failed_write(&mut current, "No space left on device".into(), at(12));
        assert_eq!(current.as_ref().unwrap().since, at(1));
        assert!(matches!(
            look(&mut current, Some(60 * MIB), 50 * MIB, at(17)),
            DiskLook::Resume(_)
        ));
        assert_eq!(ended(&mut current).unwrap().since, at(1));
        assert_eq!(look(&mut current, None, 50 * MIB, at(18)), DiskLook::Room);
    }

    #[test]
    fn a_minimum_of_zero_still_keeps_a_floor() {
        let mut current = None;
        // With no floor, a disk with 0 bytes free would "have room" and
        // every look would start a tick that cannot write.
        assert_eq!(look(&mut current, Some(0), 0, at(0)), DiskLook::Full);
        assert_eq!(
            look(&mut current, Some(FLOOR - 1), 0, at(1)),
            DiskLook::Full
        );
        assert!(matches!(
            look(&mut current, Some(FLOOR), 0, at(2)),
            DiskLook::Resume(_)
        ));
    }

    #[test]
    fn a_failed_write_is_an_episode_that_remembers_the_cut_tick() {
        let mut current = None;
        failed_write(&mut current, "No space left on device".into(), at(3));
        // The filesystem may have room again by the next look.
        let DiskLook::Resume(episode) = look(&mut current, Some(1 << 30), MIB, at(8)) else {
            panic!("room again must let a tick try");
        };
        assert!(episode.interrupted);
        assert_eq!(episode.since, at(3));
        let text = episode.flare(Path::new("/h"), 64, Some(at(8))).body;
        assert!(text.contains("No space left on device"), "{text}");
        assert!(text.contains("could not be written until"), "{text}");
    }

    #[test]
    fn disk_full_is_found_through_causes_and_libgit2_text() {
        let enospc = std::io::Error::from_raw_os_error(libc::ENOSPC);
        assert!(is_disk_full(&enospc));
        let wrapped = crate::atomic::WriteError {
            path: "/h/x".into(),
            source: enospc,
        };
        assert!(is_disk_full(&wrapped));
        let git = git2::Error::from_str("failed to write out file: No space left on device");
        assert!(is_disk_full(&git));
        let other = std::io::Error::from_raw_os_error(libc::EACCES);
        assert!(!is_disk_full(&other));
    }
}
