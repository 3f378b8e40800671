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

use std::collections::HashMap;
use std::path::PathBuf;

use super::intake::Ready;
use super::Supervisor;
use crate::collab::handoff::Handoff;
use crate::collab::intake_error::IntakeError;
use crate::collab::{own_name, peer_file, store};
use crate::config::collab::PeerAt;
use crate::home::layout::rel;
use crate::repo::HeadFile;

/// The largest handoff file taken from a peer: a message, not a payload
/// (the sender's tool refuses a message over `[tools] max_write_bytes`,
/// 1 MiB by default). A larger one is refused without being read.
const MAX_HANDOFF_BYTES: u64 = 1024 * 1024;

/// The most handoffs taken in one look (oldest first): a backlog of
/// thousands is taken a batch at a time, ticks between, so the agent keeps
/// answering and each look costs what it takes.
pub(super) const MAX_BATCH: usize = 64;

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
        } = survey(self.home, &self.config, &mut self.handoff_reads);
        for problem in problems {
            self.report_once(problem);
        }
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

/// Those of the `waiting` handoffs the peer has committed, each with the
/// commit that brought it (found for all of them in one walk of the
/// peer's history); the others wait, and the peer's commit wakes us again.
fn committed(
    peer: &str,
    history: Option<&crate::repo::Repo>,
    waiting: Vec<(HeadFile, (Handoff, String))>,
) -> Vec<Ready> {
    let Some(history) = history.filter(|_| !waiting.is_empty()) else {
        return Vec::new();
    };
    let written: Vec<(String, chrono::DateTime<chrono::Utc>)> = waiting
        .iter()
        .map(|(f, (h, _))| (f.name.clone(), h.created))
        .collect();
    let mut brought = history.introduced_all(rel::OUTBOX, &written);
    waiting
        .into_iter()
        .filter_map(|(file, (handoff, blob))| {
            let sent_in = brought.remove(&file.name)?;
            Some(Ready {
                peer: peer.to_string(),
                file: file.name,
                blob,
                handoff,
                sent_in,
            })
        })
        .collect()
}

/// What this home took from each peer's files: the blob each was read
/// from, where the ledger kept it.
type TakenBlobs = HashMap<(String, String), Option<String>>;

fn taken_blobs(home: &crate::home::Home) -> TakenBlobs {
    store::handoffs_taken(home)
        .into_iter()
        .map(|t| ((t.peer, t.file), t.blob))
        .collect()
}

/// What one look at a peer's outbox finds for this agent.
struct OutboxLook {
    /// The files addressed here not taken yet, oldest name first.
    waiting: Vec<HeadFile>,
    /// Why others are not taken: names that cannot be files here, and
    /// handoffs rewritten after they were taken.
    problems: Vec<IntakeError>,
}

/// How many of the peers' directories do not exist (cannot be watched).
fn missing(dirs: &[(String, PathBuf)]) -> usize {
    dirs.iter().filter(|(_, d)| !d.is_dir()).count()
}

/// What the peers hold for this agent now.
pub(super) struct Survey {
    /// The handoffs it may take, each admitted against this home's record
    /// as it stands.
    pub ready: Vec<Ready>,
    /// Why the others are not taken, one line each (at most
    /// [`PROBLEMS_A_PEER`] a peer, then how many more), as the operator
    /// reads it: status and the log say the same.
    pub problems: Vec<String>,
}

/// The most lines a peer's files that are not taken get in status and the
/// log; the rest are counted.
const PROBLEMS_A_PEER: usize = 20;

/// What each blob read from a peer said: a blob's words never change, so
/// a backlog is read once, not at every look.
#[derive(Default)]
pub(super) struct HandoffReads {
    read: HashMap<String, Result<Handoff, String>>,
}

impl HandoffReads {
    /// The most kept: past it, the memo starts again (a flood of blobs
    /// cannot grow it without bound).
    const MAX: usize = 50_000;

    fn get_or_read(
        &mut self,
        blob: &str,
        read: impl FnOnce() -> Result<Handoff, String>,
    ) -> Result<Handoff, String> {
        if let Some(known) = self.read.get(blob) {
            return known.clone();
        }
        if self.read.len() >= Self::MAX {
            self.read.clear();
        }
        let said = read();
        self.read.insert(blob.to_string(), said.clone());
        said
    }
}

/// Looks at every peer: what is ready to take, and why anything addressed
/// here is not. The same judgement for the intake and for `hearth status`.
pub(super) fn survey(
    home: &crate::home::Home,
    config: &crate::config::Config,
    reads: &mut HandoffReads,
) -> Survey {
    let me = own_name(home);
    let taken = taken_blobs(home);
    let max = config.collaborations.max_rounds;
    let mut survey = Survey {
        ready: Vec::new(),
        problems: Vec::new(),
    };
    let mut records: HashMap<String, Option<crate::collab::Collaboration>> = HashMap::new();
    for (peer, at) in config.peers.iter() {
        let source = Source::of(home, peer, at);
        // The peer's history, opened once for all its handoffs.
        let history = source.history();
        let look = match source.look(peer, &me, &taken, history.as_ref()) {
            Ok(look) => look,
            Err(problem) => {
                survey.problems.push(unreadable(peer, &problem));
                continue;
            }
        };
        let mut problems: Vec<String> = look.problems.iter().map(ToString::to_string).collect();
        let mut admitted = Vec::new();
        let judge = Judge {
            home,
            me: &me,
            peer,
            source: &source,
            history: history.as_ref(),
            max,
        };
        for file in look.waiting {
            match judge.admit(&file, reads, &mut records) {
                Ok(Some(h)) => {
                    let blob = file.blob.clone();
                    admitted.push((file, (h, blob)));
                }
                Ok(None) => {}
                Err(problem) => problems.push(problem),
            }
        }
        survey
            .ready
            .extend(committed(peer, history.as_ref(), admitted));
        if problems.len() > PROBLEMS_A_PEER {
            let more = problems.len() - PROBLEMS_A_PEER;
            problems.truncate(PROBLEMS_A_PEER);
            problems.push(format!(
                "peer {peer}: {more} more files in its outbox/ are not taken, for reasons \
                 like those above"
            ));
        }
        survey.problems.extend(problems);
    }
    survey
}

/// Judges one peer's files for this home.
struct Judge<'a> {
    home: &'a crate::home::Home,
    me: &'a str,
    peer: &'a str,
    source: &'a Source,
    history: Option<&'a crate::repo::Repo>,
    max: u32,
}

impl Judge<'_> {
    /// `file`'s handoff, if it is addressed here and may be taken into
    /// this home's record of its collaboration (`records`, loaded once
    /// each); `None` when it is someone else's; why not, as the operator
    /// reads it. Judged before the history is walked for it: what is
    /// refused costs no walk.
    fn admit(
        &self,
        file: &HeadFile,
        reads: &mut HandoffReads,
        records: &mut HashMap<String, Option<crate::collab::Collaboration>>,
    ) -> Result<Option<Handoff>, String> {
        let (peer, me) = (self.peer, self.me);
        let h = reads.get_or_read(&file.blob, || {
            self.source
                .read(peer, self.history, file)
                .map_err(|e| e.to_string())
        })?;
        if h.to != me {
            return Ok(None);
        }
        if h.from != peer {
            return Err(IntakeError::NotFromPeer {
                peer: peer.to_string(),
                path: self.source.shown(&file.name),
                claims: h.from.clone(),
            }
            .to_string());
        }
        let slug = &h.collaboration.slug;
        if !records.contains_key(slug) {
            // Named; it waits until the record is fixed.
            let mine =
                store::load(self.home, slug).map_err(|e| IntakeError::Record(e).to_string())?;
            records.insert(slug.clone(), mine);
        }
        let mine = records.get(slug).and_then(Option::as_ref);
        crate::collab::intake::admit(&h, peer, me, mine, self.max).map_err(|refused| {
            super::intake::refusal(peer, &file.name, &h, refused, self.max).to_string()
        })?;
        Ok(Some(h))
    }
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
    let mut problems = survey(home, config, &mut HandoffReads::default()).problems;
    for broken in store::list(home).1 {
        let said = broken.to_string();
        if !problems.iter().any(|p| p.contains(&said)) {
            problems.push(format!("{said} ({})", broken.hint()));
        }
    }
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

    /// The handoffs and notices addressed to `me` in the peer's committed
    /// `outbox/` that are not taken yet; or why the outbox cannot be read.
    /// Every name is checked before anything is built from it, and one
    /// taken already whose blob changed since is named.
    fn look(
        &self,
        peer: &str,
        me: &str,
        taken: &TakenBlobs,
        history: Option<&crate::repo::Repo>,
    ) -> Result<OutboxLook, String> {
        if let Source::Home(path) = self {
            // Said first when the peer's home cannot be read at all.
            let outbox = path.join(rel::OUTBOX);
            std::fs::read_dir(&outbox)
                .map_err(|e| format!("cannot read {} ({e})", outbox.display()))?;
        }
        // Not committed (or not fetched) yet: nothing to take, and the
        // peer's commit (or the fetch) wakes this supervisor again.
        let files = history.map_or_else(Vec::new, |h| h.files_at_head(rel::OUTBOX));
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
    fn shown(&self, file: &str) -> String {
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
    fn read(
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
