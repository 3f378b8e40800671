//! What the peers hold for this agent, read: each peer's outbox (a home
//! on this host, or the mirror of one on another), the handoffs addressed
//! here, which of them are committed and admitted (the rules are
//! `collab::intake`'s) and so ready to take, and why the others are not.
//! One judgement for the supervisor's intake, which takes what is ready,
//! and for `hearth status`, which names what is not.

use std::collections::HashMap;
use std::path::PathBuf;

use super::reads::HandoffReads;
use super::reads::Unread;
use super::source::{taken_blobs, Source};
use crate::collab::handoff::Handoff;
use crate::collab::intake;
use crate::collab::intake_error::IntakeError;
use crate::collab::{own_name, store};
use crate::home::layout::rel;
use crate::proposals::requests::FoundingSaid;
use crate::repo::HeadFile;

/// Why `h`, in `peer`'s outbox `file`, was not admitted, as the operator
/// reads it.
pub fn refusal(
    peer: &str,
    file: &str,
    h: &Handoff,
    refused: intake::NotAdmitted,
    max: u32,
) -> IntakeError {
    let (peer, path) = (peer.to_string(), format!("outbox/{file}"));
    let slug = h.collaboration.slug.clone();
    match refused {
        intake::NotAdmitted::NotParticipant { participants } => IntakeError::NotParticipant {
            peer,
            path,
            slug,
            participants: participants.join(", "),
        },
        intake::NotAdmitted::NotItsRound => IntakeError::NotItsRound {
            peer,
            path,
            slug,
            round: h.round,
        },
        intake::NotAdmitted::PastMaxRounds => IntakeError::PastMaxRounds {
            peer,
            path,
            slug,
            round: h.round,
            max,
        },
    }
}

/// A handoff that is this agent's to take now.
pub struct Ready {
    /// The peer it comes from.
    pub peer: String,
    /// Its file in the peer's `outbox/` (a plain name, checked).
    pub file: String,
    /// The blob it was read from.
    pub blob: String,
    /// What it says.
    pub handoff: Handoff,
    /// The peer's commit that holds it.
    pub sent_in: String,
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
pub fn missing(dirs: &[(String, PathBuf)]) -> usize {
    dirs.iter().filter(|(_, d)| !d.is_dir()).count()
}

/// What the peers hold for this agent now.
pub struct Survey {
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
pub struct UnaskedFounding {
    /// The peer that founds it.
    pub peer: String,
    /// Its file in the peer's `outbox/`.
    pub file: String,
    /// The blob it was read from (an approval holds for it only).
    pub blob: String,
    /// What it says.
    pub handoff: Handoff,
}

/// The most lines a peer's files that are not taken get in status and the
/// log; the rest are counted.
pub const PROBLEMS_A_PEER: usize = 20;

/// Looks at every peer: what is ready to take, and why anything addressed
/// here is not. The same judgement for the intake and for `hearth status`.
pub fn survey(
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
        let look = match source.look(peer, &me, &taken, opened.as_ref().map(Option::as_ref)) {
            Ok(look) => look,
            Err(problem) => {
                let said = unreadable(peer, &problem.to_string());
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
                Err(problem) => problems.push(problem.to_string()),
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
    ) -> Result<Admitted, NotTaken> {
        let (peer, me) = (self.peer, self.me);
        let h = reads.get_or_read(peer, &file.blob, || {
            self.source
                .read(peer, self.history, file)
                .map_err(Unread::from)
        })?;
        if h.to != me {
            return Ok(Admitted::NotHere);
        }
        if h.from != peer {
            return Err(NotTaken::Intake(IntakeError::NotFromPeer {
                peer: peer.to_string(),
                path: self.source.shown(&file.name),
                claims: h.from.clone(),
            }));
        }
        let slug = &h.collaboration.slug;
        if !records.contains_key(slug) {
            // Named; it waits until the record is fixed.
            let mine = store::load(self.home, slug).map_err(IntakeError::Record)?;
            records.insert(slug.clone(), mine);
        }
        let mine = records.get(slug).and_then(Option::as_ref);
        crate::collab::intake::admit(&h, peer, me, mine, self.max)
            .map_err(|refused| refusal(peer, &file.name, &h, refused, self.max))?;
        if let (None, Some(book)) = (mine, self.founding) {
            let said = crate::proposals::requests::founding_said(book, peer, slug, &file.blob);
            match said {
                FoundingSaid::Approved => {}
                FoundingSaid::Unasked => return Ok(Admitted::AskFirst(h)),
                FoundingSaid::Waiting(request) => {
                    return Err(NotTaken::FoundingWaits {
                        peer: peer.to_string(),
                        file: file.name.clone(),
                        slug: slug.clone(),
                        request,
                    })
                }
                FoundingSaid::Declined(request) => {
                    return Err(NotTaken::FoundingDeclined {
                        peer: peer.to_string(),
                        file: file.name.clone(),
                        slug: slug.clone(),
                        request,
                    })
                }
            }
        }
        Ok(Admitted::Yes(h))
    }
}

/// Why a handoff waiting in a peer's outbox is not taken now.
#[derive(Debug, thiserror::Error)]
enum NotTaken {
    /// It was not read as a handoff (said when its blob was read).
    #[error(transparent)]
    Unread(#[from] Unread),
    /// It may not be taken into this home.
    #[error(transparent)]
    Intake(#[from] IntakeError),
    /// It founds a collaboration the operator has not decided on.
    #[error(
        "peer {peer}: {file} founds the collaboration {slug} here; it waits for your word: \
         `hearth proposals approve {request}` takes it, `decline {request}` refuses it"
    )]
    FoundingWaits {
        /// The peer.
        peer: String,
        /// Its file.
        file: String,
        /// The collaboration.
        slug: String,
        /// The request that asks.
        request: u64,
    },
    /// It founds a collaboration the operator declined.
    #[error(
        "peer {peer}: {file} founds the collaboration {slug} here, which you declined \
         (request {request}); it is not taken"
    )]
    FoundingDeclined {
        /// The peer.
        peer: String,
        /// Its file.
        file: String,
        /// The collaboration.
        slug: String,
        /// The request declined.
        request: u64,
    },
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
pub fn problems(home: &crate::home::Home, config: &crate::config::Config) -> Vec<String> {
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
