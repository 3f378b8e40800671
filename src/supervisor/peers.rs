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

use crate::mailbox::cause::Cause;
use std::path::PathBuf;

use super::Supervisor;
use crate::home::layout::rel;
use crate::intake::{missing, survey, Source, Survey, UnaskedFounding};

pub(super) use crate::intake::source::mirror_dir;
pub(super) use crate::intake::HandoffReads;

/// The most handoffs taken in one look (oldest first): a backlog of
/// thousands is taken a batch at a time, ticks between, so the agent keeps
/// answering and each look costs what it takes.
pub(super) const MAX_BATCH: usize = 64;

/// What the supervisor keeps of its peers between looks: the component
/// owns its state, and its decisions — whether to watch again, which
/// peers to flare — are returned for the loop to act on.
#[derive(Default)]
pub(super) struct PeerWatch {
    /// The peers' directories watched, and how many of them were missing.
    watched: (Vec<(String, PathBuf)>, usize),
    /// The peers whose outbox could not be read at the last look (each
    /// flared once a spell).
    unreadable: std::collections::BTreeSet<String>,
    /// What each peer's blob said, read once.
    reads: HandoffReads,
}

impl PeerWatch {
    /// Whether `dirs` (with `missing` of them absent) are to be watched
    /// anew: the list changed, or a missing one appeared. Kept as watched
    /// when so.
    fn watch_anew(&mut self, dirs: &[(String, PathBuf)], missing: usize) -> bool {
        let (watched, were_missing) = &self.watched;
        if watched == dirs && missing >= *were_missing {
            return false;
        }
        self.watched = (dirs.to_vec(), missing);
        true
    }

    /// Whether a watched peer directory is missing (looked for again
    /// while waiting).
    pub(super) fn any_missing(&self) -> bool {
        self.watched.1 > 0
    }

    /// Whether a peer directory that was missing when last watched exists
    /// now.
    pub(super) fn appeared(&self) -> bool {
        let (dirs, were_missing) = &self.watched;
        missing(dirs) < *were_missing
    }

    /// Whether every peer could be read at the last look.
    pub(super) fn all_readable(&self) -> bool {
        self.unreadable.is_empty()
    }

    /// Of the peers that cannot be read now (`unreadable`, with what is
    /// said of each), those to flare: not said at the last look, and with
    /// no open incident (`said_before`, by peer) from before a restart.
    /// The rest are remembered as unreadable.
    fn newly_unreadable(
        &mut self,
        unreadable: Vec<(String, String)>,
        said_before: impl Fn(&str) -> bool,
    ) -> Vec<(String, String)> {
        let now = unreadable.iter().map(|(peer, _)| peer.clone()).collect();
        let fresh = unreadable
            .into_iter()
            .filter(|(peer, _)| !self.unreadable.contains(peer) && !said_before(peer))
            .collect();
        self.unreadable = now;
        fresh
    }
}

impl Supervisor<'_> {
    /// Takes every handoff addressed to this agent that its peers posted
    /// and it has not taken yet (at most [`MAX_BATCH`] a look, oldest
    /// first); returns how many. Never fatal: a peer that cannot be read,
    /// a file that cannot be taken, is named once and the others are taken.
    pub(super) fn take_handoffs(&mut self) -> usize {
        self.watch_peers();
        if self.config.peers.is_empty() {
            return 0;
        }
        let Survey {
            mut ready,
            problems,
            unreadable,
            to_ask,
        } = survey(self.home, &self.config, &mut self.peers.reads);
        for problem in problems {
            self.report_once(problem);
        }
        self.flare_unreadable_peers(unreadable);
        self.ask_about_foundings(to_ask);
        if ready.is_empty() {
            return 0;
        }
        // A bounded batch a look, each peer's oldest first, the peers in
        // turn: a flood is taken a batch at a time while ticks go on
        // between, and it never starves another peer.
        ready = crate::collab::intake::fair_batch(
            ready,
            |r| r.peer.as_str(),
            |r| (r.handoff.created, r.file.clone()),
            MAX_BATCH,
        );
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
        if self.peers.watch_anew(&dirs, missing(&dirs)) {
            self.wake.watch_peers(&dirs);
        }
    }

    /// A peer whose outbox or history cannot be read is flared once a
    /// spell, as one that cannot be fetched is: its handoffs would
    /// otherwise wait in silence behind an outbox that only looks empty.
    fn flare_unreadable_peers(&mut self, unreadable: Vec<(String, String)>) {
        let open = crate::notify::incidents::Incidents::load(self.home)
            .map(|i| i.open)
            .unwrap_or_default();
        let subject = |peer: &str| format!("peer {peer} cannot be read");
        // Said already before a restart: its incident is open until the
        // peer can be read again.
        let said_before = |peer: &str| {
            open.contains_key(&crate::notify::incidents::cause_key(
                &Cause::Peer,
                &subject(peer),
            ))
        };
        for (peer, said) in self.peers.newly_unreadable(unreadable, said_before) {
            let subject = subject(&peer);
            let body = format!(
                "{said}.\n\nNothing is lost: its handoffs wait until it can be read, and this \
                 agent goes on ticking. `hearth status` names it while it lasts; this flare is \
                 sent once a spell.\n"
            );
            let flare = crate::mailbox::outbox::Letter::flare(Cause::Peer, subject, body);
            match crate::mailbox::outbox::post(self.home, &flare, self.options.clock.now()) {
                Ok(rel) => tracing::warn!("flare: {rel}"),
                Err(e) => tracing::warn!("the peer flare could not be written: {e}"),
            }
        }
    }

    /// Asks the operator about collaborations peers found here: one
    /// request (and, unless one is unread, one flare) for each, at most
    /// one a day from each peer; the others wait in the peer's outbox and
    /// are asked about on a later day.
    fn ask_about_foundings(&mut self, to_ask: Vec<UnaskedFounding>) {
        use crate::proposals::requests::{self, RequestKind, ToolRequestDraft};
        let now = self.options.clock.now();
        for founding in to_ask {
            let book = match requests::list(self.home) {
                Ok(book) => book,
                Err(e) => {
                    self.report_once(format!("the requests cannot be read: {e}"));
                    return;
                }
            };
            let peer = &founding.peer;
            if !requests::may_ask_founding(&book, peer, now) {
                continue;
            }
            let h = &founding.handoff;
            let excerpt: String = h.message.chars().take(500).collect();
            let draft = ToolRequestDraft {
                kind: RequestKind::Founding,
                tool: format!(
                    "found the collaboration {} with {peer}",
                    h.collaboration.slug
                ),
                file: format!("{peer}:{}/{}", rel::OUTBOX, founding.file),
                digest: founding.blob.clone(),
                arguments: serde_json::json!({
                    "peer": peer,
                    "collaboration": h.collaboration.slug,
                    "name": h.collaboration.name,
                    "round": h.round,
                    "message": excerpt,
                }),
                workdir: h.collaboration.workdir.clone(),
                by: format!("peer {peer}"),
                outside: std::iter::once(format!(
                    "{peer}:{}/{} (written by a peer)",
                    rel::OUTBOX,
                    founding.file
                ))
                .collect(),
            };
            match requests::ask(self.home, draft, now) {
                Ok((request, true)) => tracing::warn!(
                    "peer {peer} founds the collaboration {} here: request {} waits for you",
                    h.collaboration.slug,
                    request.n
                ),
                Ok(_) => {}
                Err(e) => self.report_once(format!(
                    "peer {peer}: the request to found {} could not be recorded: {e}",
                    h.collaboration.slug
                )),
            }
        }
    }

    /// Logs a problem once (`hearth status` finds the lasting ones itself).
    pub(super) fn report_once(&mut self, problem: String) {
        if self.said.problem(&problem) {
            tracing::warn!("{problem}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unreadable_peer_is_flared_once_a_spell_and_never_when_said_before_a_restart() {
        let mut peers = PeerWatch::default();
        let bob = || vec![("bob".to_string(), "cannot read".to_string())];
        let none = |_: &str| false;
        assert_eq!(
            peers.newly_unreadable(bob(), none),
            bob(),
            "the spell starts"
        );
        assert!(
            peers.newly_unreadable(bob(), none).is_empty(),
            "once a spell"
        );
        assert!(!peers.all_readable());
        assert!(peers.newly_unreadable(Vec::new(), none).is_empty());
        assert!(peers.all_readable(), "the spell ended");
        assert_eq!(peers.newly_unreadable(bob(), none), bob(), "a new spell");
        let mut restarted = PeerWatch::default();
        assert!(
            restarted.newly_unreadable(bob(), |p| p == "bob").is_empty(),
            "its incident is open from before"
        );
    }

    #[test]
    fn peers_are_watched_anew_when_the_list_changes_or_a_missing_one_appears() {
        let mut peers = PeerWatch::default();
        let dirs = vec![("bob".to_string(), PathBuf::from("/nonexistent/bob"))];
        assert!(peers.watch_anew(&dirs, 1));
        assert!(peers.any_missing());
        assert!(!peers.watch_anew(&dirs, 1), "nothing changed");
        assert!(peers.watch_anew(&dirs, 0), "it appeared");
        assert!(!peers.any_missing());
        assert!(peers.watch_anew(&[], 0), "[peers] changed");
    }
}
