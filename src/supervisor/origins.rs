//! Keeping the line origins every judgment and citation reads
//! (`Repo::update_line_origins`) up to HEAD, on a thread of its own: the
//! first replay of a long history takes seconds and must not hold up a
//! tick; after that each tick's commit is replayed in milliseconds. (A
//! judge replays what is left when it opens; the store's lock keeps one
//! replay at a time.)

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::home::Home;
use crate::provenance::origins::REPLAYED;
use crate::repo::Repo;

/// One replay at a time; a request during one is folded into another pass.
pub(super) struct Origins {
    root: PathBuf,
    busy: Arc<AtomicBool>,
    again: Arc<AtomicBool>,
}

impl Origins {
    pub(super) fn new(home: &Home) -> Origins {
        Origins {
            root: home.root().to_path_buf(),
            busy: Arc::new(AtomicBool::new(false)),
            again: Arc::new(AtomicBool::new(false)),
        }
    }

    /// HEAD moved (or the supervisor started): replay up to it. A request
    /// that races the end of a replay may wait for the next one; the store
    /// is only a cache, and the engine blames what it does not hold.
    pub(super) fn request(&self) {
        self.again.store(true, Ordering::SeqCst);
        if self.busy.swap(true, Ordering::SeqCst) {
            return;
        }
        let (root, busy, again) = (
            self.root.clone(),
            Arc::clone(&self.busy),
            Arc::clone(&self.again),
        );
        let spawned = std::thread::Builder::new()
            .name("hearth-origins".into())
            .spawn(move || {
                while again.swap(false, Ordering::SeqCst) {
                    let replayed = Repo::open(&root).and_then(|r| r.update_line_origins(&REPLAYED));
                    match replayed {
                        Ok(0) => {}
                        Ok(n) => tracing::debug!("line origins: {n} commit(s) replayed"),
                        Err(e) => tracing::debug!("line origins not updated: {e}"),
                    }
                }
                busy.store(false, Ordering::SeqCst);
            });
        if let Err(e) = spawned {
            self.busy.store(false, Ordering::SeqCst);
            tracing::debug!("line origins not updated ({e}); judgments blame instead");
        }
    }
}
