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

use std::collections::HashSet;
use std::path::PathBuf;

use super::Supervisor;
use crate::collab::handoff::Handoff;
use crate::collab::intake::{self, Taken};
use crate::collab::intake_error::IntakeError;
use crate::collab::{own_name, store};
use crate::config::collab::PeerAt;
use crate::home::layout::rel;
use crate::home::lock::CommitLock;
use crate::repo::Identity;

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
        let mut count = 0;
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
            for file in names {
                if taken.contains(&(peer.clone(), file.clone())) {
                    continue;
                }
                match self.take_one(&peer, &source, &file, &me) {
                    Ok(true) => count += 1,
                    Ok(false) => {}
                    Err(problem) => self.report_once(problem.to_string()),
                }
            }
        }
        count
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

    /// Takes `file` from `peer`'s outbox; `Ok(false)` when it was taken
    /// before (only its ledger line was missing) or is not for this agent.
    fn take_one(
        &mut self,
        peer: &str,
        source: &Source,
        file: &str,
        me: &str,
    ) -> Result<bool, IntakeError> {
        let h = source.read(peer, file)?;
        if h.to != me {
            return Ok(false);
        }
        if h.from != peer {
            return Err(IntakeError::NotFromPeer {
                peer: peer.to_string(),
                path: source.shown(file),
                claims: h.from.clone(),
            });
        }
        // Not committed yet: the peer's commit wakes us again.
        let Some(sent_in) = source.committed_in(file, h.created) else {
            return Ok(false);
        };
        let now = self.options.clock.now();
        let name = intake::inbox_name(peer, file);
        let inbox_rel = format!("{}/{name}", rel::INBOX);
        let already = self.home.path(&inbox_rel).exists()
            || self.home.path(rel::INBOX_ARCHIVE).join(&name).exists();
        let slug = h.collaboration.slug.clone();
        let mine = store::load(self.home, &slug)?;
        let taken = Taken {
            peer: peer.to_string(),
            file: file.to_string(),
            sent_in: Some(sent_in.clone()),
            slug: slug.clone(),
            round: h.round,
            inbox: inbox_rel.clone(),
            at: now,
        };
        let line = serde_json::to_string(&taken).expect("a ledger line serialises");
        let _lock = CommitLock::acquire(self.home)?;
        let mut paths = vec![rel::HANDOFFS.to_string()];
        // The record is written whether or not the message was: taking a
        // round twice keeps one (rounds merge by number), and a supervisor
        // killed between the two writes must not lose it.
        let intake = match h.notice.as_deref() {
            Some(_) => intake::take_notice(&h, mine),
            None => intake::take(
                &h,
                mine,
                self.config.collaborations.max_rounds,
                Some(sent_in),
            ),
        };
        if !already {
            if h.notice.as_deref() == Some("max-rounds") {
                paths.extend(self.flare_max_rounds(&h, peer, now));
            }
            crate::atomic::write(&self.home.path(&inbox_rel), intake.inbox_text.as_bytes())?;
            paths.push(inbox_rel.clone());
        }
        paths.push(store::save(self.home, &intake.record)?);
        if let Some(pause) = self.options.intake_pause.filter(|_| !already) {
            std::thread::sleep(pause);
        }
        crate::atomic::append_line(&self.home.path(rel::HANDOFFS), &line)?;
        self.commit_taken(&h, peer, &paths, intake.record, now);
        tracing::info!(
            "took {peer}'s handoff: {slug} round {} ({inbox_rel})",
            h.round
        );
        Ok(!already)
    }

    /// Commits what taking `h` wrote (`paths`), and then, for a round,
    /// the commit that took it into its `record`. A commit that fails is
    /// logged: what was taken stays, and the next commit carries it.
    fn commit_taken(
        &mut self,
        h: &Handoff,
        peer: &str,
        paths: &[String],
        record: crate::collab::Collaboration,
        now: chrono::DateTime<chrono::Utc>,
    ) {
        let slug = &h.collaboration.slug;
        let specs: Vec<&str> = paths.iter().map(String::as_str).collect();
        let message = match h.notice.as_deref() {
            Some(what) => format!("handoff: notice from {peer}, {slug} {what}"),
            None => format!("handoff: from {peer}, {slug} round {}", h.round),
        };
        match self.repo.commit(&specs, &Identity::hearth(), &message, now) {
            Ok(Some(taken_in)) if h.notice.is_none() => {
                self.record_taken_in(record, h.round, &taken_in, now)
            }
            Ok(_) => {}
            Err(e) => tracing::warn!(
                "could not commit the handoff from {peer} ({e}); the next commit will"
            ),
        }
    }

    /// A peer's notice that a collaboration reached its rounds limit
    /// there, flared to the operator; the flare's path, if it was written.
    fn flare_max_rounds(
        &self,
        h: &Handoff,
        peer: &str,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Option<String> {
        let slug = &h.collaboration.slug;
        let flare = crate::mailbox::outbox::Letter::flare(
            "collab",
            format!("collaboration {slug} reached its rounds limit at {peer}"),
            format!(
                "{}\n\nRead collaborations/{slug}.md: if the rounds still make progress, \
                 the operators raise [collaborations] max_rounds; else `hearth collab \
                 complete {slug}` or `abandon` it.",
                h.message.trim_end()
            ),
        );
        crate::mailbox::outbox::post(self.home, &flare, now)
            .inspect_err(|e| tracing::warn!("could not write the collab flare: {e}"))
            .ok()
    }

    /// Writes the commit that took round `n` in into the record, in a
    /// commit of its own (a commit cannot name itself): `collab show`
    /// then gives the commits on both sides of every round.
    fn record_taken_in(
        &self,
        mut record: crate::collab::Collaboration,
        n: u32,
        taken_in: &str,
        now: chrono::DateTime<chrono::Utc>,
    ) {
        let Some(round) = record.rounds.iter_mut().find(|r| r.n == n) else {
            return;
        };
        round.taken_in = Some(taken_in.to_string());
        let message = format!(
            "handoff: {} round {n} taken in {}",
            record.slug,
            &taken_in[..taken_in.len().min(10)]
        );
        let done = store::save(self.home, &record)
            .map_err(|e| e.to_string())
            .and_then(|rel| {
                self.repo
                    .commit(&[rel.as_str()], &Identity::hearth(), &message, now)
                    .map_err(|e| e.to_string())
            });
        if let Err(e) = done {
            tracing::warn!(
                "could not record which commit took {} round {n}: {e}",
                record.slug
            );
        }
    }

    /// Logs a problem once (`hearth status` finds the lasting ones itself).
    fn report_once(&mut self, problem: String) {
        if self.said.problem(&problem) {
            tracing::warn!("{problem}");
        }
    }
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
    /// in the handoff's format.
    fn read(&self, peer: &str, file: &str) -> Result<Handoff, IntakeError> {
        let unreadable = |source| IntakeError::Unreadable {
            peer: peer.to_string(),
            source,
        };
        let bytes = match self {
            Source::Home(path) => {
                let path = path.join(rel::OUTBOX).join(file);
                crate::bounded::read(&path, MAX_HANDOFF_BYTES).map_err(unreadable)?
            }
            Source::Mirror(dir) => {
                let rel_path = format!("{}/{file}", rel::OUTBOX);
                let found = crate::repo::Repo::open_mirror(dir)
                    .and_then(|repo| repo.read_at_head(&rel_path, MAX_HANDOFF_BYTES));
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

    /// The peer's commit that brought its outbox `file` (written at
    /// `created`) into its history, when its branch holds it.
    fn committed_in(&self, file: &str, created: chrono::DateTime<chrono::Utc>) -> Option<String> {
        let repo = match self {
            Source::Home(path) => crate::repo::Repo::open(path).ok()?,
            Source::Mirror(dir) => crate::repo::Repo::open_mirror(dir)?,
        };
        repo.introduced(&format!("{}/{file}", rel::OUTBOX), created)
    }
}

/// Where the mirror of peer `name` lies in `home`.
pub(super) fn mirror_dir(home: &crate::home::Home, name: &str) -> PathBuf {
    home.peer_mirror(name)
}
