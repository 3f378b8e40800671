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
use std::collections::HashMap;
use std::path::PathBuf;

use super::intake::Ready;
use super::peer_source::{taken_blobs, Source};
use super::Supervisor;
use crate::collab::handoff::Handoff;
use crate::collab::intake_error::IntakeError;
use crate::collab::{own_name, store};
use crate::home::layout::rel;
use crate::proposals::requests::FoundingSaid;
use crate::repo::HeadFile;

pub(super) use super::handoff_reads::HandoffReads;
pub(super) use super::peer_source::mirror_dir;

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
            unreadable,
            to_ask,
        } = survey(self.home, &self.config, &mut self.handoff_reads);
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

    /// A peer whose outbox or history cannot be read is flared once a
    /// spell, as one that cannot be fetched is: its handoffs would
    /// otherwise wait in silence behind an outbox that only looks empty.
    fn flare_unreadable_peers(&mut self, unreadable: Vec<(String, String)>) {
        let now: std::collections::BTreeSet<String> =
            unreadable.iter().map(|(peer, _)| peer.clone()).collect();
        let open = crate::notify::incidents::Incidents::load(self.home)
            .map(|i| i.open)
            .unwrap_or_default();
        for (peer, said) in unreadable {
            let subject = format!("peer {peer} cannot be read");
            // Said already: by this supervisor, or before a restart (its
            // incident is open until the peer can be read again).
            let key = crate::notify::incidents::cause_key(&Cause::Peer, &subject);
            if self.peers_unreadable.contains(&peer) || open.contains_key(&key) {
                continue;
            }
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
        self.peers_unreadable = now;
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
                tainted_by: std::iter::once(format!(
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
    /// The peers whose outbox or history cannot be read at all, with what
    /// is said of each (among `problems` too): flared, as a failing fetch.
    pub unreadable: Vec<(String, String)>,
    /// Handoffs that found a collaboration new here and wait for the
    /// operator, not asked yet (`[collaborations] founding = "ask"`).
    pub to_ask: Vec<UnaskedFounding>,
}

/// The first handoff of a collaboration a peer founds here, to be asked
/// of the operator.
pub(super) struct UnaskedFounding {
    pub peer: String,
    pub file: String,
    pub blob: String,
    pub handoff: Handoff,
}

/// The most lines a peer's files that are not taken get in status and the
/// log; the rest are counted.
const PROBLEMS_A_PEER: usize = 20;

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
        unreadable: Vec::new(),
        to_ask: Vec::new(),
    };
    // Asked of the operator already: the request book, read once.
    let founding = (config.collaborations.founding == crate::config::collab::FoundingPolicy::Ask)
        .then(|| crate::proposals::requests::list(home).unwrap_or_default());
    let mut records: HashMap<String, Option<crate::collab::Collaboration>> = HashMap::new();
    for (peer, at) in config.peers.iter() {
        let source = Source::of(home, peer, at);
        // The peer's history, opened once for all its handoffs.
        let opened = source.history();
        let look = match source.look(
            peer,
            &me,
            &taken,
            opened.as_ref().map(Option::as_ref).map_err(String::as_str),
        ) {
            Ok(look) => look,
            Err(problem) => {
                let said = unreadable(peer, &problem);
                survey.problems.push(said.clone());
                survey.unreadable.push((peer.clone(), said));
                continue;
            }
        };
        let history = opened.ok().flatten();
        let mut problems: Vec<String> = look.problems.iter().map(ToString::to_string).collect();
        let judge = Judge {
            home,
            me: &me,
            peer,
            source: &source,
            history: history.as_ref(),
            max,
            founding: founding.as_deref(),
        };
        let admitted = judge.admit_all(
            look.waiting,
            reads,
            &mut records,
            &mut problems,
            &mut survey.to_ask,
        );
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
    /// With `[collaborations] founding = "ask"`, the request book: what
    /// the operator said of each collaboration a peer founds here.
    founding: Option<&'a [crate::proposals::requests::ToolRequest]>,
}

/// What becomes of a peer's file addressed here.
enum Admitted {
    /// Taken.
    Yes(Handoff),
    /// Someone else's.
    NotHere,
    /// It founds a collaboration new here, and the operator was not asked.
    AskFirst(Handoff),
}

impl Judge<'_> {
    /// The peer's `waiting` files admitted here, each with its handoff and
    /// blob; why the others are not, in `problems`; the foundings to ask
    /// the operator about, in `to_ask`.
    fn admit_all(
        &self,
        waiting: Vec<HeadFile>,
        reads: &mut HandoffReads,
        records: &mut HashMap<String, Option<crate::collab::Collaboration>>,
        problems: &mut Vec<String>,
        to_ask: &mut Vec<UnaskedFounding>,
    ) -> Vec<(HeadFile, (Handoff, String))> {
        let mut admitted = Vec::new();
        for file in waiting {
            match self.admit(&file, reads, records) {
                Ok(Admitted::Yes(h)) => {
                    let blob = file.blob.clone();
                    admitted.push((file, (h, blob)));
                }
                Ok(Admitted::NotHere) => {}
                Ok(Admitted::AskFirst(handoff)) => {
                    problems.push(format!(
                        "peer {}: {} founds the collaboration {} here; it waits for your \
                         word (a request in `hearth proposals`, at most one a day from a peer)",
                        self.peer, file.name, handoff.collaboration.slug
                    ));
                    to_ask.push(UnaskedFounding {
                        peer: self.peer.to_string(),
                        file: file.name.clone(),
                        blob: file.blob.clone(),
                        handoff,
                    });
                }
                Err(problem) => problems.push(problem),
            }
        }
        admitted
    }

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
    ) -> Result<Admitted, String> {
        let (peer, me) = (self.peer, self.me);
        let h = reads.get_or_read(peer, &file.blob, || {
            self.source
                .read(peer, self.history, file)
                .map_err(|e| e.to_string())
        })?;
        if h.to != me {
            return Ok(Admitted::NotHere);
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
        if let (None, Some(book)) = (mine, self.founding) {
            let said = crate::proposals::requests::founding_said(book, peer, slug, &file.blob);
            match said {
                FoundingSaid::Approved => {}
                FoundingSaid::Unasked => return Ok(Admitted::AskFirst(h)),
                FoundingSaid::Waiting(n) => {
                    return Err(format!(
                        "peer {peer}: {} founds the collaboration {slug} here; it waits for \
                         your word: `hearth proposals approve {n}` takes it, `decline {n}` \
                         refuses it",
                        file.name
                    ))
                }
                FoundingSaid::Declined(n) => {
                    return Err(format!(
                        "peer {peer}: {} founds the collaboration {slug} here, which you \
                         declined (request {n}); it is not taken",
                        file.name
                    ))
                }
            }
        }
        Ok(Admitted::Yes(h))
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
    let mut reads = HandoffReads::for_status(home);
    let mut problems = survey(home, config, &mut reads).problems;
    reads.save_for_status(home);
    for broken in store::list(home).1 {
        let said = broken.to_string();
        if !problems.iter().any(|p| p.contains(&said)) {
            problems.push(format!("{said} ({})", broken.hint()));
        }
    }
    problems
}
