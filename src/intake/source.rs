//! Where a peer's handoffs are read (DESIGN 14): a home on this host in
//! place, or the mirror of one on another host as its last fetch left it.
//! Its committed `outbox/` is listed with every name checked before
//! anything is built from it, a handoff taken already whose blob changed
//! is named, and a blob is read only after its size, from the object's
//! header, is within bounds. What is taken, and into what, is `peers.rs`'s.

use std::collections::HashMap;
use std::path::PathBuf;

use crate::collab::handoff::Handoff;
use crate::collab::intake_error::IntakeError;
use crate::collab::{peer_file, store};
use crate::config::collab::PeerAt;
use crate::home::layout::rel;
use crate::repo::HeadFile;

/// The largest handoff file taken from a peer: a message, not a payload
/// (the sender's tool refuses a message over `[tools] max_write_bytes`,
/// 1 MiB by default). A larger one is refused without being read.
const MAX_HANDOFF_BYTES: u64 = 1024 * 1024;

/// Why a peer's committed `outbox/` cannot be read (its handoffs wait).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OutboxUnread {
    /// The peer's home on this host has no repository this account can open.
    #[error("its repository at {path} cannot be opened ({said})")]
    Repository {
        /// Where.
        path: PathBuf,
        /// What git said.
        said: String,
    },
    /// The mirror of a peer on another host cannot be opened.
    #[error(
        "its mirror at {path} cannot be opened ({said}); remove that directory and the next \
         fetch makes it anew"
    )]
    Mirror {
        /// Where.
        path: PathBuf,
        /// What git said.
        said: String,
    },
    /// Its `outbox/` folder cannot be listed.
    #[error("cannot read {path} ({said})")]
    Folder {
        /// Where.
        path: PathBuf,
        /// What the system said.
        said: String,
    },
    /// Its committed `outbox/` cannot be listed.
    #[error("its committed outbox/ cannot be read ({said})")]
    Committed {
        /// What git said.
        said: String,
    },
}

/// What this home took from each peer's files: the blob each was read
/// from, where the ledger kept it.
pub type TakenBlobs = HashMap<(String, String), Option<String>>;

/// The blobs this home took, by peer and file, from its ledger.
pub fn taken_blobs(home: &crate::home::Home) -> TakenBlobs {
    store::handoffs_taken(home)
        .into_iter()
        .map(|t| ((t.peer, t.file), t.blob))
        .collect()
}

/// What one look at a peer's outbox finds for this agent.
pub struct OutboxLook {
    /// The files addressed here not taken yet, oldest name first.
    pub waiting: Vec<HeadFile>,
    /// Why others are not taken: names that cannot be files here, and
    /// handoffs rewritten after they were taken.
    pub problems: Vec<IntakeError>,
}

/// Where this supervisor reads a peer's handoffs.
pub enum Source {
    /// A home on this host, in place.
    Home(PathBuf),
    /// The mirror of a peer on another host, as its last fetch left it.
    Mirror(PathBuf),
}

impl Source {
    /// Where the peer `name`, at `at` in `[peers]`, is read from.
    pub fn of(home: &crate::home::Home, name: &str, at: &PeerAt) -> Source {
        match at {
            PeerAt::Path(path) => Source::Home(path.clone()),
            PeerAt::Url(_) => Source::Mirror(mirror_dir(home, name)),
        }
    }

    /// The directories whose change means a handoff may have come.
    pub fn watched(&self) -> Vec<PathBuf> {
        match self {
            Source::Home(path) => vec![path.join(rel::OUTBOX), path.join(".git/refs/heads")],
            Source::Mirror(dir) => vec![dir.join("refs/heads")],
        }
    }

    /// The handoffs and notices addressed to `me` in the peer's committed
    /// `outbox/` that are not taken yet; or why the outbox cannot be read.
    /// Every name is checked before anything is built from it, and one
    /// taken already whose blob changed since is named.
    pub fn look(
        &self,
        peer: &str,
        me: &str,
        taken: &TakenBlobs,
        history: Result<Option<&crate::repo::Repo>, &OutboxUnread>,
    ) -> Result<OutboxLook, OutboxUnread> {
        if let Source::Home(path) = self {
            // Said first when the peer's home cannot be read at all.
            let outbox = path.join(rel::OUTBOX);
            std::fs::read_dir(&outbox).map_err(|e| OutboxUnread::Folder {
                path: outbox.clone(),
                said: e.to_string(),
            })?;
        }
        // Not fetched yet: nothing to take, and the fetch wakes this
        // supervisor again. A history that cannot be read is said, never
        // taken for an empty outbox.
        let files = match history.map_err(OutboxUnread::clone)? {
            Some(repo) => repo
                .files_at_head(rel::OUTBOX)
                .map_err(|e| OutboxUnread::Committed {
                    said: e.to_string(),
                })?,
            None => Vec::new(),
        };
        let suffix = format!("-to-{me}.md");
        let mut look = OutboxLook {
            waiting: Vec::new(),
            problems: Vec::new(),
        };
        for file in files {
            let name = &file.name;
            if !(name.contains("-handoff-") || name.contains("-notice-"))
                || !name.ends_with(&suffix)
            {
                continue;
            }
            if let Err(bad) = peer_file::check(name) {
                look.problems.push(IntakeError::BadName {
                    peer: peer.to_string(),
                    name: bad,
                });
                continue;
            }
            match taken.get(&(peer.to_string(), name.clone())) {
                None => look.waiting.push(file),
                Some(Some(was)) if *was != file.blob => {
                    look.problems.push(IntakeError::Rewritten {
                        peer: peer.to_string(),
                        path: self.shown(name),
                        was: was.clone(),
                        now: file.blob.clone(),
                    })
                }
                Some(_) => {}
            }
        }
        Ok(look)
    }

    /// `file` as the operator would look for it (quoted where it holds
    /// what a log line must not).
    pub fn shown(&self, file: &str) -> String {
        let file = match peer_file::check(file) {
            Ok(plain) => plain.to_string(),
            Err(_) => peer_file::quoted(file),
        };
        match self {
            Source::Home(path) => path.join(rel::OUTBOX).join(file).display().to_string(),
            Source::Mirror(dir) => format!("{}:{}/{file}", dir.display(), rel::OUTBOX),
        }
    }

    /// The handoff `file` as the peer committed it: a blob of bounded size
    /// (read from the object's header first, so a huge one is refused
    /// without being inflated), UTF-8, in the handoff's format.
    pub fn read(
        &self,
        peer: &str,
        history: Option<&crate::repo::Repo>,
        file: &HeadFile,
    ) -> Result<Handoff, IntakeError> {
        let unreadable = |source| IntakeError::Unreadable {
            peer: peer.to_string(),
            source,
        };
        let bytes = match history.and_then(|repo| repo.read_blob(&file.blob, MAX_HANDOFF_BYTES)) {
            Some(Ok(bytes)) => bytes,
            Some(Err(_)) => {
                return Err(unreadable(crate::bounded::BoundedError::TooLarge {
                    path: self.shown(&file.name),
                    max: MAX_HANDOFF_BYTES,
                }))
            }
            None => {
                return Err(unreadable(crate::bounded::BoundedError::NotAFile {
                    path: self.shown(&file.name),
                    kind: "not in the peer's committed tree",
                }))
            }
        };
        let text = String::from_utf8(bytes).map_err(|_| IntakeError::NotText {
            peer: peer.to_string(),
            path: self.shown(&file.name),
        })?;
        Handoff::parse(&text).map_err(|why| IntakeError::NotAHandoff {
            peer: peer.to_string(),
            path: self.shown(&file.name),
            why,
        })
    }

    /// The peer's history (its home's repository, or the mirror), opened
    /// once for all the handoffs read from it: `None` for a mirror not
    /// fetched yet; why not when one is there and cannot be opened (a
    /// peer's home that is no repository, a corrupt mirror).
    pub fn history(&self) -> Result<Option<crate::repo::Repo>, OutboxUnread> {
        match self {
            Source::Home(path) => {
                crate::repo::Repo::open(path)
                    .map(Some)
                    .map_err(|e| OutboxUnread::Repository {
                        path: path.clone(),
                        said: e.to_string(),
                    })
            }
            Source::Mirror(dir) => {
                crate::repo::Repo::open_mirror(dir).map_err(|e| OutboxUnread::Mirror {
                    path: dir.clone(),
                    said: e.to_string(),
                })
            }
        }
    }
}

/// Where the mirror of peer `name` lies in `home`.
pub fn mirror_dir(home: &crate::home::Home, name: &str) -> PathBuf {
    home.peer_mirror(name)
}
