//! Packing the history on a thread of its own. An incremental pack takes a
//! moment, but the full repack (past `[git] pack_max_packs`) of a long
//! history takes minutes with libgit2 — on the main loop that was minutes
//! without ticks. The pack is built apart and put in place under the
//! commit lock (see `repo::pack`), so the main loop's commits and it
//! exclude each other only for the swap.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::config::Config;
use crate::home::lock::CommitLock;
use crate::home::Home;
use crate::repo::{reflog, PackPolicy, Repo, RepoError};

/// One pack at a time; a request while one runs is dropped (the next tick
/// asks again).
pub(super) struct Packer {
    root: PathBuf,
    busy: Arc<AtomicBool>,
}

impl Packer {
    pub(super) fn new(home: &Home) -> Packer {
        Packer {
            root: home.root().to_path_buf(),
            busy: Arc::new(AtomicBool::new(false)),
        }
    }

    /// Packs if `[git] pack_loose` loose objects have piled up. A failure
    /// costs disk space, not a tick: logged, and tried again after the
    /// next tick.
    pub(super) fn request(&self, config: &Config) {
        if self.busy.swap(true, Ordering::SeqCst) {
            return;
        }
        let policy = PackPolicy {
            loose_max: config.git.pack_loose.max(1),
            packs_max: config.git.pack_max_packs.max(2),
        };
        let (root, busy) = (self.root.clone(), Arc::clone(&self.busy));
        let spawned = std::thread::Builder::new()
            .name("hearth-pack".into())
            .spawn(move || {
                pack_if_due(&root, policy);
                busy.store(false, Ordering::SeqCst);
            });
        if let Err(e) = spawned {
            self.busy.store(false, Ordering::SeqCst);
            tracing::warn!("could not start packing the history ({e}); will try again");
        }
    }
}

impl Packer {
    /// Waits for a pack in progress to end (`hearth run --ticks N` leaves
    /// the home packed; a stop signal does not wait: a pack cut short
    /// leaves only its staging directory).
    pub(super) fn wait(&self) {
        while self.busy.load(Ordering::SeqCst) {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
}

fn pack_if_due(root: &std::path::Path, policy: PackPolicy) {
    let started = std::time::Instant::now();
    let home = match Home::open(root) {
        Ok(home) => home,
        Err(e) => {
            tracing::warn!("could not pack the history (will try again): {e}");
            return;
        }
    };
    let lock = || {
        CommitLock::acquire(&home).map_err(|e| RepoError::Locked {
            path: root.to_path_buf(),
            message: e.to_string(),
        })
    };
    let packed = Repo::open(root).and_then(|repo| {
        let done = repo.pack_if_due(policy, lock)?;
        if done.objects > 0 {
            expire_reflogs(&repo, lock)?;
        }
        Ok(done)
    });
    match packed {
        Ok(done) if done.objects > 0 => tracing::info!(
            "packed the history: {} objects into one {} pack, {} loose objects and {} packs removed ({} ms)",
            done.objects,
            if done.full { "full" } else { "new" },
            done.loose_removed,
            done.packs_removed,
            started.elapsed().as_millis()
        ),
        Ok(_) => {}
        Err(e) => tracing::warn!("could not pack the history (will try again): {e}"),
    }
}

/// After a pack (every few hundred commits): reflog entries older than
/// [`reflog::KEEP_DAYS`] go, as `git gc` would drop them. libgit2 stamps
/// them with the system's clock, so the cutoff is taken from it too (not
/// from a pinned or simulated clock).
fn expire_reflogs<G>(
    repo: &Repo,
    lock: impl Fn() -> Result<G, RepoError>,
) -> Result<(), RepoError> {
    let now: chrono::DateTime<chrono::Utc> = crate::clock::file_time_now().into();
    let _lock = lock()?;
    let expired = repo.expire_reflogs(now - chrono::Duration::days(reflog::KEEP_DAYS))?;
    if expired > 0 {
        tracing::info!(
            "expired {expired} reflog entries older than {} days",
            reflog::KEEP_DAYS
        );
    }
    Ok(())
}
