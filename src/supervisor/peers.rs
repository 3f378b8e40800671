//! Taking peers' handoffs into this home (DESIGN 14). Each home is the
//! only writer of itself: a peer posts a handoff in its own `outbox/`;
//! this supervisor reads it there (read only), writes the inbox message,
//! its own record of the collaboration and a line in
//! `state/handoffs.jsonl`, and commits them together.
//!
//! Only a committed handoff is taken: it is then in the sender's history
//! for good (a tick that dies before its commit posts nothing), and the
//! round records the sender's commit. The supervisor watches each peer's
//! `outbox/` and branch refs, so the commit wakes it. A peer on another
//! host (`[peers] NAME = "git://…"`) is read the same way from its mirror,
//! `.hearth/peers/NAME.git`, which the fetching thread (`fetch.rs`) keeps
//! up to the peer's pushes; a fetch that moves it wakes the supervisor.
//!
//! Exactly once: a handoff whose line is in the ledger, or whose inbox
//! message exists already (in `inbox/` or read into the archive), is not
//! taken again — a supervisor killed between writing the message and the
//! ledger line finds the message at its next start and only records it.
//! What is ready is taken all at once (`intake.rs`): a backlog after an
//! outage is one commit, not one per handoff.

use std::collections::HashSet;
use std::path::PathBuf;

use super::intake::Ready;
use super::Supervisor;
use crate::collab::handoff::Handoff;
use crate::collab::intake_error::IntakeError;
use crate::collab::{own_name, store};
use crate::config::collab::PeerAt;
use crate::home::layout::rel;

/// The largest handoff file taken from a peer: a message, not a payload
/// (the sender's tool refuses a message over `[tools] max_write_bytes`).
const MAX_HANDOFF_BYTES: u64 = 16 * 1024 * 1024;

impl Supervisor<'_> {
    /// Takes every handoff addressed to this agent that its peers posted
    /// and it has not taken yet; returns how many. Never fatal: a peer
    /// that cannot be read is named once and the others are taken.
    pub(super) fn take_handoffs(&mut self) -> usize {
        self.watch_peers();
        if self.config.peers.is_empty() {
            return 0;
        }
        let me = own_name(self.home);
        let taken: HashSet<(String, String)> = store::handoffs_taken(self.home)
            .into_iter()
            .map(|t| (t.peer, t.file))
            .collect();
        let suffix = format!("-to-{me}.md");
        let mut ready = Vec::new();
        for (peer, at) in self
            .config
            .peers
            .iter()
            .map(|(p, a)| (p.clone(), a.clone()))
            .collect::<Vec<_>>()
        {
            let source = Source::of(self.home, &peer, &at);
            let names = match source.handoff_names(&suffix) {
                Ok(names) => names,
                Err(problem) => {
                    self.report_once(unreadable(&peer, &problem));
                    continue;
                }
            };
            // The peer's history, opened once for all its handoffs.
            let history = source.history();
            let mut waiting = Vec::new();
            for file in names {
                if taken.contains(&(peer.clone(), file.clone())) {
                    continue;
                }
                match addressed_to(&peer, &source, history.as_ref(), &file, &me) {
                    Ok(Some(h)) => waiting.push((file, h)),
                    Ok(None) => {}
                    Err(problem) => self.report_once(problem.to_string()),
                }
            }
            ready.extend(committed(&peer, history.as_ref(), waiting));
        }
        if ready.is_empty() {
            return 0;
        }
        match self.take_all(ready) {
            Ok(count) => count,
            Err(problem) => {
                self.report_once(problem.to_string());
                0
            }
        }
    }

    /// Watches the peers' `outbox/` and branch refs (a handoff is taken
    /// once the peer has committed it): at start, when `[peers]` changed
    /// (the config is read again before each tick), and when a peer's home
    /// that was missing has appeared.
    pub(super) fn watch_peers(&mut self) {
        let dirs: Vec<(String, PathBuf)> = self
            .config
            .peers
            .iter()
            .flat_map(|(name, at)| {
                Source::of(self.home, name, at)
                    .watched()
                    .into_iter()
                    .map(|dir| (name.clone(), dir))
            })
            .collect();
        let missing = missing(&dirs);
        let (watched, were_missing) = &self.peers_watched;
        if *watched == dirs && missing >= *were_missing {
            return;
        }
        self.wake.watch_peers(&dirs);
        self.peers_watched = (dirs, missing);
    }

    /// Whether a peer directory that was missing when last watched exists
    /// now.
    pub(super) fn peer_appeared(&self) -> bool {
        let (dirs, were_missing) = &self.peers_watched;
        missing(dirs) < *were_missing
    }

    /// Logs a problem once (`hearth status` finds the lasting ones itself).
    pub(super) fn report_once(&mut self, problem: String) {
        if self.said.problem(&problem) {
            tracing::warn!("{problem}");
        }
    }
}

/// The handoff in `peer`'s outbox `file`, if it is addressed to `me` and
/// from the peer it claims to be from.
fn addressed_to(
    peer: &str,
    source: &Source,
    history: Option<&crate::repo::Repo>,
    file: &str,
    me: &str,
) -> Result<Option<Handoff>, IntakeError> {
    let h = source.read(peer, history, file)?;
    if h.to != me {
        return Ok(None);
    }
    if h.from != peer {
        return Err(IntakeError::NotFromPeer {
            peer: peer.to_string(),
            path: source.shown(file),
            claims: h.from.clone(),
        });
    }
    Ok(Some(h))
}

/// Those of the `waiting` handoffs the peer has committed, each with the
/// commit that brought it (found for all of them in one walk of the
/// peer's history); the others wait, and the peer's commit wakes us again.
fn committed(
    peer: &str,
    history: Option<&crate::repo::Repo>,
    waiting: Vec<(String, Handoff)>,
) -> Vec<Ready> {
    let Some(history) = history.filter(|_| !waiting.is_empty()) else {
        return Vec::new();
    };
    let written: Vec<(String, chrono::DateTime<chrono::Utc>)> = waiting
        .iter()
        .map(|(f, h)| (f.clone(), h.created))
        .collect();
    let mut brought = history.introduced_all(rel::OUTBOX, &written);
    waiting
        .into_iter()
        .filter_map(|(file, handoff)| {
            let sent_in = brought.remove(&file)?;
            Some(Ready {
                peer: peer.to_string(),
                file,
                handoff,
                sent_in,
            })
        })
        .collect()
}

/// How many of the peers' directories do not exist (cannot be watched).
fn missing(dirs: &[(String, PathBuf)]) -> usize {
    dirs.iter().filter(|(_, d)| !d.is_dir()).count()
}

/// What is said of a peer whose `outbox/` cannot be read.
fn unreadable(peer: &str, problem: &str) -> String {
    format!(
        "peer {peer}: {problem}; its handoffs wait until it can be read (check [peers] in \
         hearth.toml, and that this agent may read that home: ReadOnlyPaths= in its unit)"
    )
}

/// What keeps handoffs from being taken, for `hearth status`: peers whose
/// outbox cannot be read, and records that do not parse (a handoff in a
/// collaboration whose record is broken waits until it is fixed).
pub(super) fn problems(home: &crate::home::Home, config: &crate::config::Config) -> Vec<String> {
    let mut problems: Vec<String> = config
        .peers
        .iter()
        .filter_map(|(peer, at)| {
            let source = Source::of(home, peer, at);
            source.handoff_names("").err().map(|e| unreadable(peer, &e))
        })
        .collect();
    problems.extend(
        store::list(home)
            .1
            .iter()
            .map(|e| format!("{e} ({})", e.hint())),
    );
    problems
}

/// Where this supervisor reads a peer's handoffs.
enum Source {
    /// A home on this host, in place.
    Home(PathBuf),
    /// The mirror of a peer on another host, as its last fetch left it.
    Mirror(PathBuf),
}

impl Source {
    fn of(home: &crate::home::Home, name: &str, at: &PeerAt) -> Source {
        match at {
            PeerAt::Path(path) => Source::Home(path.clone()),
            PeerAt::Url(_) => Source::Mirror(mirror_dir(home, name)),
        }
    }

    /// The directories whose change means a handoff may have come.
    fn watched(&self) -> Vec<PathBuf> {
        match self {
            Source::Home(path) => vec![path.join(rel::OUTBOX), path.join(".git/refs/heads")],
            Source::Mirror(dir) => vec![dir.join("refs/heads")],
        }
    }

    /// The handoffs and notices in the peer's outbox whose names end in
    /// `suffix`, sorted; or why the outbox cannot be read.
    fn handoff_names(&self, suffix: &str) -> Result<Vec<String>, String> {
        let names = match self {
            Source::Home(path) => {
                let outbox = path.join(rel::OUTBOX);
                std::fs::read_dir(&outbox)
                    .map_err(|e| format!("cannot read {} ({e})", outbox.display()))?
                    .flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            }
            Source::Mirror(dir) => match crate::repo::Repo::open_mirror(dir) {
                Some(repo) => repo.names_at_head(rel::OUTBOX),
                // Not fetched yet: nothing to take, and the fetch says why.
                None => Vec::new(),
            },
        };
        let mut names: Vec<String> = names
            .into_iter()
            .filter(|n| (n.contains("-handoff-") || n.contains("-notice-")) && n.ends_with(suffix))
            .collect();
        names.sort();
        Ok(names)
    }

    /// `file` as the operator would look for it.
    fn shown(&self, file: &str) -> String {
        match self {
            Source::Home(path) => path.join(rel::OUTBOX).join(file).display().to_string(),
            Source::Mirror(dir) => format!("{}:{}/{file}", dir.display(), rel::OUTBOX),
        }
    }

    /// The handoff `file`: a regular file of bounded size (a FIFO there
    /// would block this supervisor for ever, /dev/zero never end), UTF-8,
    /// in the handoff's format. A mirror's is read from `history`, the
    /// mirror as the caller opened it once for all its handoffs.
    fn read(
        &self,
        peer: &str,
        history: Option<&crate::repo::Repo>,
        file: &str,
    ) -> Result<Handoff, IntakeError> {
        let unreadable = |source| IntakeError::Unreadable {
            peer: peer.to_string(),
            source,
        };
        let bytes = match self {
            Source::Home(path) => {
                let path = path.join(rel::OUTBOX).join(file);
                crate::bounded::read(&path, MAX_HANDOFF_BYTES).map_err(unreadable)?
            }
            Source::Mirror(_) => {
                let rel_path = format!("{}/{file}", rel::OUTBOX);
                let found =
                    history.and_then(|repo| repo.read_at_head(&rel_path, MAX_HANDOFF_BYTES));
                match found {
                    Some(Ok(bytes)) => bytes,
                    Some(Err(_)) => {
                        return Err(unreadable(crate::bounded::BoundedError::TooLarge {
                            path: self.shown(file),
                            max: MAX_HANDOFF_BYTES,
                        }))
                    }
                    None => {
                        return Err(unreadable(crate::bounded::BoundedError::NotAFile {
                            path: self.shown(file),
                            kind: "not on the fetched branch",
                        }))
                    }
                }
            }
        };
        let text = String::from_utf8(bytes).map_err(|_| IntakeError::NotText {
            peer: peer.to_string(),
            path: self.shown(file),
        })?;
        Handoff::parse(&text).map_err(|why| IntakeError::NotAHandoff {
            peer: peer.to_string(),
            path: self.shown(file),
            why,
        })
    }

    /// The peer's history (its home's repository, or the mirror), opened
    /// once for all the handoffs read from it.
    fn history(&self) -> Option<crate::repo::Repo> {
        match self {
            Source::Home(path) => crate::repo::Repo::open(path).ok(),
            Source::Mirror(dir) => crate::repo::Repo::open_mirror(dir),
        }
    }
}

/// Where the mirror of peer `name` lies in `home`.
pub(super) fn mirror_dir(home: &crate::home::Home, name: &str) -> PathBuf {
    home.peer_mirror(name)
}
