//! What wakes the supervisor: a message landing in `inbox/` (inotify via
//! notify, not polling), a stop signal, or a child's exit (SIGCHLD). All
//! arrive as [`Wake`] events on one channel, so the main loop waits on one
//! thing with one timeout.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::Duration;

// The `notify` crate: file events from inotify (not `crate::notify`,
// hearth's notices off the box, nor systemd's sd_notify).
use ::notify as file_events;
use file_events::{EventKind, RecursiveMode, Watcher};
use signal_hook::consts::{SIGCHLD, SIGINT, SIGTERM};
use signal_hook::iterator::{Handle, Signals};

use crate::home::Home;
use crate::mailbox::inbox;
use crate::memory::watched::Changes;

/// Why the supervisor's wait ended early.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wake {
    /// A file that looks like a message appeared in `inbox/`.
    Inbox,
    /// Something changed under `memory/` or `state/archive/` (the recall
    /// index should catch up).
    Memory,
    /// SIGTERM or SIGINT.
    Stop(i32),
    /// A child process ended (SIGCHLD): the tick, or another.
    Child,
    /// Something changed in a peer's `outbox/`: a handoff, perhaps.
    Peer,
    /// `hearth.toml` was saved: a changed interval re-plans the wait.
    Config,
    /// A job's file changed, or `hearth jobs run` asked for a run: the
    /// wait re-plans.
    Jobs,
}

/// What wakes the supervisor: signals, and file events in the home.
pub struct Wakeups {
    rx: Receiver<Wake>,
    signals: Handle,
    _watcher: Option<file_events::RecommendedWatcher>,
    _memory_watcher: Option<file_events::RecommendedWatcher>,
    _config_watcher: Option<file_events::RecommendedWatcher>,
    _jobs_watcher: Option<file_events::RecommendedWatcher>,
    /// A memory event was drained unseen: the index needs a look.
    memory_pending: std::cell::Cell<bool>,
    /// A peer event came while a tick ran: its handoffs wait to be taken.
    peer_pending: std::cell::Cell<bool>,
    /// `hearth.toml` was saved while a tick ran: the wait re-plans.
    config_pending: std::cell::Cell<bool>,
    memory_changes: Arc<Mutex<Changes>>,
    /// The same events, kept for the next hand-edit commit.
    hand_edits: Arc<Mutex<Changes>>,
    /// Sends [`Wake::Peer`] from the peers' watcher.
    tx: std::sync::mpsc::Sender<Wake>,
    _peers_watcher: Option<file_events::RecommendedWatcher>,
}

impl Wakeups {
    /// Starts listening. A watcher that cannot start (inotify limits) is
    /// logged and the supervisor falls back to its interval.
    pub fn start(home: &Home) -> std::io::Result<Wakeups> {
        let (tx, rx) = mpsc::channel();
        // SIGCHLD ends the wait for a tick the moment it exits; polling
        // alone made every tick last a multiple of the poll (25 ms).
        let mut signals = Signals::new([SIGTERM, SIGINT, SIGCHLD])?;
        let handle = signals.handle();
        let signal_tx = tx.clone();
        std::thread::Builder::new()
            .name("hearth-signals".into())
            .spawn(move || {
                for signal in signals.forever() {
                    let wake = match signal {
                        SIGCHLD => Wake::Child,
                        stop => Wake::Stop(stop),
                    };
                    if signal_tx.send(wake).is_err() {
                        break;
                    }
                }
            })?;

        // What changed while no supervisor ran is unknown: the first index
        // update and the first hand-edit commit look at everything.
        let memory_changes = Arc::new(Mutex::new(Changes::everything()));
        let hand_edits = Arc::new(Mutex::new(Changes::everything()));
        let memory_watcher = watch_memory(
            home,
            tx.clone(),
            [memory_changes.clone(), hand_edits.clone()],
        );
        let inbox_dir = home.inbox_dir();
        std::fs::create_dir_all(&inbox_dir)?;
        let inbox_tx = tx.clone();
        let watcher = file_events::recommended_watcher(
            move |event: file_events::Result<file_events::Event>| {
                let tx = &inbox_tx;
                let Ok(event) = event else { return };
                let arrival = !matches!(event.kind, EventKind::Access(_) | EventKind::Remove(_));
                if arrival && event.paths.iter().any(|p| inbox::is_message(p)) {
                    let _ = tx.send(Wake::Inbox);
                }
            },
        )
        .and_then(|mut w| {
            w.watch(&inbox_dir, RecursiveMode::NonRecursive)?;
            Ok(w)
        });
        let watcher = match watcher {
            Ok(w) => Some(w),
            Err(e) => {
                tracing::warn!(
                    "cannot watch {} ({e}); new messages wait for the next interval",
                    inbox_dir.display()
                );
                None
            }
        };
        let config_watcher = watch_config(home, tx.clone());
        let jobs_watcher = watch_jobs(home, tx.clone());
        Ok(Wakeups {
            rx,
            signals: handle,
            _watcher: watcher,
            _memory_watcher: memory_watcher,
            _config_watcher: config_watcher,
            _jobs_watcher: jobs_watcher,
            memory_pending: std::cell::Cell::new(false),
            peer_pending: std::cell::Cell::new(false),
            config_pending: std::cell::Cell::new(false),
            memory_changes,
            hand_edits,
            tx,
            _peers_watcher: None,
        })
    }

    /// A sender of wakes, for a thread that learns of something the main
    /// loop should act on (a fetch that brought a peer's new commits: the
    /// mirror's watch alone could fire before it is set up).
    pub fn sender(&self) -> std::sync::mpsc::Sender<Wake> {
        self.tx.clone()
    }

    /// Watches the peers' directories named (read only) for handoffs; one
    /// that cannot be watched is named, and looked at before each tick
    /// anyway.
    pub fn watch_peers(&mut self, outboxes: &[(String, PathBuf)]) {
        self._peers_watcher = None;
        if outboxes.is_empty() {
            return;
        }
        let tx = self.tx.clone();
        let watcher = file_events::recommended_watcher(
            move |event: file_events::Result<file_events::Event>| {
                if event
                    .is_ok_and(|e| !matches!(e.kind, EventKind::Access(_) | EventKind::Remove(_)))
                {
                    let _ = tx.send(Wake::Peer);
                }
            },
        );
        let mut watcher = match watcher {
            Ok(w) => w,
            Err(e) => {
                tracing::warn!("cannot watch the peers' outboxes ({e}); handoffs are looked for before each tick");
                return;
            }
        };
        for (peer, outbox) in outboxes {
            if let Err(e) = watcher.watch(outbox, RecursiveMode::NonRecursive) {
                tracing::warn!(
                    "cannot watch peer {peer}'s {} ({e}); its handoffs are looked for before each tick",
                    outbox.display()
                );
            }
        }
        self._peers_watcher = Some(watcher);
    }

    /// The next event within `timeout`, if any.
    pub fn next(&self, timeout: Duration) -> Option<Wake> {
        match self.rx.recv_timeout(timeout) {
            Ok(wake) => Some(wake),
            Err(RecvTimeoutError::Timeout) | Err(RecvTimeoutError::Disconnected) => None,
        }
    }

    /// Keeps a peer event that came while a tick ran, for after it.
    pub fn note_peer(&self) {
        self.peer_pending.set(true);
    }

    /// Whether a peer event came while nobody took handoffs (and forgets
    /// it).
    pub fn take_peer_pending(&self) -> bool {
        self.peer_pending.replace(false)
    }

    /// Whether `hearth.toml` was saved while the last tick ran.
    pub fn take_config_pending(&self) -> bool {
        self.config_pending.replace(false)
    }

    /// Drops queued inbox and memory events (the tick that just ran saw
    /// those files); keeps a stop request, and notes a peer event (a
    /// handoff that came during the tick is taken after it).
    pub fn drain_inbox(&self) -> Option<Wake> {
        let mut stop = None;
        while let Ok(wake) = self.rx.try_recv() {
            match wake {
                Wake::Stop(_) => stop = Some(wake),
                Wake::Memory => self.memory_pending.set(true),
                Wake::Peer => self.peer_pending.set(true),
                Wake::Config => self.config_pending.set(true),
                // A job's due time is read from its file and the
                // requests on disk at each wait: nothing to keep.
                Wake::Inbox | Wake::Child | Wake::Jobs => {}
            }
        }
        stop
    }
}

/// Watches `memory/`, `state/archive/` and `collaborations/` (what recall
/// indexes) recursively. Every path an event
/// names is kept — editors save by rename, delete and recreate, so both
/// names of a rename count — and the update that follows compares each
/// file's content with the index; what no event can name (an overflow)
/// asks for a full reconcile.
/// Watches the home's top level for saves of `hearth.toml` (an editor
/// writes a new file and renames it over the old: the directory is watched,
/// not the file). Without it, a changed interval waits for the tick already
/// planned; that is logged, and nothing else is lost.
fn watch_config(home: &Home, tx: mpsc::Sender<Wake>) -> Option<file_events::RecommendedWatcher> {
    let config = home.config_path();
    let name = config.file_name()?.to_owned();
    let watched =
        file_events::recommended_watcher(move |event: file_events::Result<file_events::Event>| {
            let Ok(event) = event else { return };
            let saved = !matches!(event.kind, EventKind::Access(_) | EventKind::Remove(_));
            if saved && event.paths.iter().any(|p| p.file_name() == Some(&name)) {
                let _ = tx.send(Wake::Config);
            }
        })
        .and_then(|mut w| {
            w.watch(home.root(), RecursiveMode::NonRecursive)?;
            Ok(w)
        });
    watched
        .map_err(|e| {
            tracing::warn!(
                "cannot watch {} ({e}); a changed interval applies after the next tick",
                config.display()
            )
        })
        .ok()
}

/// Watches `jobs/` and the requests of `hearth jobs run` (both made here
/// when missing, so a job written later is seen at once). Without it a
/// new or changed job waits for the wait planned before it.
fn watch_jobs(home: &Home, tx: mpsc::Sender<Wake>) -> Option<file_events::RecommendedWatcher> {
    let dirs = [
        home.path(crate::home::layout::rel::JOBS),
        home.path(crate::home::layout::rel::JOB_REQUESTS),
    ];
    let watched =
        file_events::recommended_watcher(move |event: file_events::Result<file_events::Event>| {
            if event.is_ok_and(|e| !matches!(e.kind, EventKind::Access(_))) {
                let _ = tx.send(Wake::Jobs);
            }
        })
        .and_then(|mut w| {
            for dir in &dirs {
                let _ = std::fs::create_dir_all(dir);
                w.watch(dir, RecursiveMode::NonRecursive)?;
            }
            Ok(w)
        });
    watched
        .map_err(|e| {
            tracing::warn!("cannot watch jobs/ ({e}); a changed job applies after the next tick")
        })
        .ok()
}

fn watch_memory(
    home: &Home,
    tx: std::sync::mpsc::Sender<Wake>,
    consumers: [Arc<Mutex<Changes>>; 2],
) -> Option<file_events::RecommendedWatcher> {
    let dirs = [
        home.memory_dir(),
        home.archive_dir(),
        home.path(crate::home::layout::rel::COLLABORATIONS),
    ];
    let memory_dir = home.memory_dir();
    // Every event (or one that cannot say where) makes the warm boot and
    // the index's "current" mark stale, and updates the core claims.
    let sequence = Arc::new(crate::boot::snapshot::Sequence::new(home));
    let watched = Arc::clone(&sequence);
    let watcher =
        file_events::recommended_watcher(move |event: file_events::Result<file_events::Event>| {
            let named = match &event {
                Ok(event) if matches!(event.kind, EventKind::Access(_)) => return,
                Ok(event) if !event.need_rescan() => event.paths.clone(),
                _ => Vec::new(),
            };
            // The paths are recorded before the sequence counts the event, so
            // whoever reads a token finds every path it covers already taken.
            for changes in &consumers {
                changes
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .note(&named);
            }
            watched.changed(&named);
            let _ = tx.send(Wake::Memory);
        });
    let mut watcher = match watcher {
        Ok(w) => w,
        Err(e) => {
            tracing::warn!("cannot watch memory/ ({e}); recall catches up when it runs");
            return None;
        }
    };
    for dir in dirs {
        let watching = std::fs::create_dir_all(&dir)
            .map_err(file_events::Error::io)
            .and_then(|()| watcher.watch(&dir, RecursiveMode::Recursive));
        match watching {
            // The token starts only once edits under memory/ are seen.
            Ok(()) if dir == memory_dir => sequence.watching(),
            Ok(()) => {}
            Err(e) => tracing::warn!(
                "cannot watch {} ({e}); recall catches up when it runs",
                dir.display()
            ),
        }
    }
    Some(watcher)
}

impl Wakeups {
    /// Whether memory changed while events were being drained (and clears it).
    pub fn take_memory_pending(&self) -> bool {
        self.memory_pending.replace(false)
    }

    /// The memory changes seen so far (and forgets them). Without a memory
    /// watcher, every look is a full rescan.
    pub fn take_memory_changes(&self) -> Changes {
        self.take(&self.memory_changes)
    }

    /// The paths under `memory/` and `state/archive/` that changed since the
    /// last hand-edit commit, or None when only a look at every file will
    /// do (no watcher, an event that could not say where, the first look
    /// after a start). Taking them is forgetting them: a commit that then
    /// fails calls [`Wakeups::hand_edits_failed`].
    pub fn take_hand_edits(&self) -> Option<BTreeSet<PathBuf>> {
        let taken = self.take(&self.hand_edits);
        (!taken.rescan).then_some(taken.paths)
    }

    /// The hand-edit commit failed: the next one looks at every file.
    pub fn hand_edits_failed(&self) {
        look_at_everything(&self.hand_edits);
    }

    /// The changes taken could not be applied: the next look is a full one.
    pub fn rescan_memory_later(&self) {
        look_at_everything(&self.memory_changes);
    }

    fn take(&self, changes: &Mutex<Changes>) -> Changes {
        if self._memory_watcher.is_none() {
            return Changes::everything();
        }
        std::mem::take(&mut *changes.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

fn look_at_everything(changes: &Mutex<Changes>) {
    *changes.lock().unwrap_or_else(|e| e.into_inner()) = Changes::everything();
}

impl Drop for Wakeups {
    fn drop(&mut self) {
        self.signals.close();
    }
}
