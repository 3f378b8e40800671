//! A supervised home's boot, kept warm for `hearth ask`. Finding every
//! `core: true` and `must_read: true` memory means a stat of every memory
//! file — on 10,000 files, most of an ask's start-up. While a supervisor
//! runs it watches `memory/` anyway, so it keeps a token in
//! `.hearth/memory-seq` that changes with every event under `memory/` or
//! `state/archive/` (and with every supervisor start); a boot assembled
//! under token T stays true while the token is still T. Beside the token it
//! publishes which memories are core (`memory::watched`), so even a boot
//! after an edit reads only those. Without a supervisor there is no token,
//! and every boot scans.
//!
//! The token is read *before* the scan it labels, so an edit during the
//! scan leaves a snapshot whose token is already stale.

use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};

use super::Boot;
use crate::config::BootConfig;
use crate::home::layout::rel;
use crate::home::Home;
use crate::json_file::{self, JsonFile};
use crate::memory::watched::{self, Changes, Claims, Published};
use crate::model::SystemBlock;
use crate::stamp::fnv1a;

#[derive(Serialize, Deserialize)]
struct Snapshot {
    token: String,
    config: u64,
    system: Vec<SystemBlock>,
    required_reads: Vec<String>,
}

impl JsonFile for Snapshot {
    const VERSION: u32 = 1;
}

/// The supervisor's side: a fresh epoch at start, a new count per event,
/// and the core claims of `memory/` kept current from the events' paths.
///
/// The watcher's callback only records paths, counts and signals; a thread
/// of its own re-examines the paths and publishes the token with the
/// claims, coalescing a burst of events into one write. (Writing from the
/// callback starved the watcher under an editor saving in a loop: notify's
/// event loop drains inotify before it serves a new `watch`.)
pub struct Sequence {
    inner: Arc<Inner>,
    tx: Sender<()>,
}

/// What the callback and the publishing thread share.
struct Inner {
    home: Home,
    epoch: u64,
    count: AtomicU64,
    /// What events named since the thread last published.
    pending: Mutex<Changes>,
    claims: Mutex<Claims>,
}

impl Inner {
    /// Applies what is pending to the claims and writes them with the token.
    fn publish(&self) {
        let mut claims = self.claims.lock().unwrap_or_else(|e| e.into_inner());
        // The count first: every event it covers has put its paths in
        // `pending` before counting itself.
        let token = format!("{:x}-{}", self.epoch, self.count.load(Ordering::SeqCst));
        let taken = std::mem::take(&mut *self.pending.lock().unwrap_or_else(|e| e.into_inner()));
        if taken.rescan {
            *claims = Claims::scan(&self.home);
        } else {
            claims.update(&self.home, &taken.paths);
        }
        let published = Published {
            token,
            claims: claims.clone(),
        };
        let bytes = serde_json::to_vec(&published).expect("claims serialise");
        let path = self.home.path(rel::MEMORY_SEQ);
        if let Err(e) = crate::atomic::replace_unsynced(&path, &bytes) {
            tracing::debug!("memory sequence not written: {e}");
        }
    }
}

impl Sequence {
    /// A new epoch (a supervisor start: what changed while none ran is
    /// unknown, so every earlier snapshot is stale). Nothing is vouched for
    /// until [`Sequence::watching`] once the watch is in place.
    pub fn new(home: &Home) -> Sequence {
        let inner = Arc::new(Inner {
            home: home.clone(),
            epoch: RandomState::new().hash_one(std::process::id()),
            count: AtomicU64::new(0),
            pending: Mutex::new(Changes::everything()),
            claims: Mutex::new(Claims::default()),
        });
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let seq = Sequence {
            inner: Arc::clone(&inner),
            tx,
        };
        seq.withdraw();
        let spawned = std::thread::Builder::new()
            .name("hearth-memory-seq".into())
            .spawn(move || {
                // Ends when the watcher (and with it the sender) is dropped.
                while rx.recv().is_ok() {
                    while rx.try_recv().is_ok() {}
                    inner.publish();
                }
            });
        if let Err(e) = spawned {
            tracing::debug!("memory sequence not kept ({e}); every boot scans");
        }
        seq
    }

    /// The watch on `memory/` is in place: the whole memory is scanned and
    /// published now, before the supervisor goes on, so the first tick
    /// and the index's first update find a token.
    pub fn watching(&self) {
        self.inner.count.fetch_add(1, Ordering::SeqCst);
        self.inner.publish();
    }

    /// Vouches for nothing: without a watch on `memory/`, every boot scans.
    pub fn withdraw(&self) {
        match std::fs::remove_file(self.inner.home.path(rel::MEMORY_SEQ)) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => tracing::debug!("memory sequence not removed: {e}"),
        }
    }

    /// Something changed at `paths` (absolute; an empty list: somewhere
    /// unknown, look at everything): recorded and counted here, the claims
    /// and token published by the sequence's thread right after.
    pub fn changed(&self, paths: &[PathBuf]) {
        (self.inner.pending.lock())
            .unwrap_or_else(|e| e.into_inner())
            .note(paths);
        self.inner.count.fetch_add(1, Ordering::SeqCst);
        let _ = self.tx.send(());
    }
}

fn config_digest(config: &BootConfig) -> u64 {
    fnv1a(serde_json::to_string(config).unwrap_or_default().as_bytes())
}

/// The system blocks and required reads of the boot labelled `token`, if
/// one was kept and nothing under `memory/` changed since.
pub fn load(
    home: &Home,
    config: &BootConfig,
    token: &str,
) -> Option<(Vec<SystemBlock>, Vec<String>)> {
    let snap: Snapshot = json_file::load(&home.path(rel::BOOT_SNAPSHOT)).ok()??;
    (snap.token == token && snap.config == config_digest(config))
        .then_some((snap.system, snap.required_reads))
}

/// Keeps `boot`, assembled under `token`. A cache: a failure, or a power
/// loss that takes it (it is not fsynced), costs only speed.
pub fn save(home: &Home, config: &BootConfig, token: &str, boot: &Boot) {
    let snap = Snapshot {
        token: token.to_string(),
        config: config_digest(config),
        system: boot.system.clone(),
        required_reads: boot.required_reads.clone(),
    };
    if let Err(e) = json_file::save_unsynced(&home.path(rel::BOOT_SNAPSHOT), &snap) {
        tracing::debug!("boot snapshot not saved: {e}");
    }
}

/// The boot's system blocks and required reads: warm from the snapshot when
/// a supervisor vouches nothing changed, else assembled (and kept).
pub fn system_and_required(home: &Home, config: &BootConfig) -> (Vec<SystemBlock>, Vec<String>) {
    let token = watched::token(home);
    if let Some(warm) = token.as_deref().and_then(|t| load(home, config, t)) {
        return warm;
    }
    let boot = super::boot(home, config);
    if let Some(t) = &token {
        save(home, config, t, &boot);
    }
    (boot.system, boot.required_reads)
}
