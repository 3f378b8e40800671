//! Proposals: changes to memory that wait for the operator. A proposal is
//! a branch, `refs/hearth/proposals/N-slug`, holding one commit on top of
//! the `main` it started from, made by hearth; `main` never moves until
//! the operator accepts it (`hearth proposals accept N`: one commit on
//! `main`, the changes re-applied on top if `main` moved since) or drops
//! it (`reject N`: a commit that records why). Their book,
//! `state/proposals.json`, says what each is, why it was made and what
//! became of it; it is committed with every change.
//!
//! Two things make proposals: a write to identity-class memory in an
//! exchange that carried outside content (`provenance`), and a
//! consolidation. Here: what a proposal is and how one is made; `decide`,
//! accepting and rejecting; `journal`, a decision a kill cut short; `book`,
//! the record and its rebuilding from the refs.

mod book;
mod decide;
pub mod journal;
pub mod requests;

use crate::mailbox::cause::Cause;
use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::home::lock::CommitLock;
use crate::home::Home;
use crate::mailbox::outbox::{self, About, Letter};
use crate::repo::{trailers, FileDiff, Identity, Repo, RepoError};

use book::load_book;
pub use book::{heal_book, Book};
use decide::recover_logged;
pub use decide::{accept, hooks, recover_interrupted, reject, Accepted};

/// Where proposals' branches live.
pub const REF_PREFIX: &str = "refs/hearth/proposals/";

/// What became of a proposal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum State {
    /// Waiting for the operator.
    Open,
    /// `accept` found `main` changed the same lines: the operator merges
    /// by hand (or rejects it).
    NeedsReview,
    /// On `main`.
    Accepted,
    /// Dropped.
    Rejected,
}

impl State {
    /// As `hearth proposals` prints it.
    pub fn as_str(self) -> &'static str {
        match self {
            State::Open => "open",
            State::NeedsReview => "needs-review",
            State::Accepted => "accepted",
            State::Rejected => "rejected",
        }
    }

    /// Still waiting for a decision.
    pub fn waiting(self) -> bool {
        matches!(self, State::Open | State::NeedsReview)
    }
}

/// One proposal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Proposal {
    /// Its number (1, 2, …), what the commands take.
    pub n: u64,
    /// Its branch: `refs/hearth/proposals/N-slug`.
    pub branch: String,
    /// One line.
    pub title: String,
    /// Why it was made.
    pub why: String,
    /// Who made it: `tick 12`, `ask`.
    pub by: String,
    /// What made it: `consolidation`, or empty for a write after outside
    /// content.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
    /// The `main` commit it started from.
    pub base: String,
    /// Its commit (on its branch).
    pub commit: String,
    /// The files it changes.
    pub files: Vec<String>,
    /// The content from outside that made the exchange tainted.
    #[serde(
        default,
        skip_serializing_if = "crate::outside::Outside::is_empty",
        alias = "tainted_by"
    )]
    pub outside: crate::outside::Outside,
    /// When it was made.
    pub created: DateTime<Utc>,
    /// What became of it.
    pub status: State,
    /// When it was decided.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided: Option<DateTime<Utc>>,
    /// The operator's reason for a rejection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The files `accept` could not re-apply.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conflicts: Vec<String>,
}

/// Why a proposal operation failed.
#[derive(Debug, thiserror::Error)]
pub enum ProposalError {
    /// No proposal has this number.
    #[error("there is no proposal {0}")]
    NoSuch(u64),
    /// No request has this number.
    #[error("there is no request {0}")]
    NoRequest(u64),
    /// The request was decided already.
    #[error("request {n} is {status} already")]
    RequestDecided {
        /// The request.
        n: u64,
        /// What became of it.
        status: &'static str,
    },
    /// It was decided already.
    #[error("proposal {n} is {status} already")]
    Decided {
        /// The proposal.
        n: u64,
        /// What became of it.
        status: &'static str,
    },
    /// It is not what the decider was shown any more: a proposal a tick
    /// replaced with another commit, a request that asks for another
    /// manifest. Checked under the commit lock; nothing was done.
    #[error("{what} {n} changed since it was shown: nothing was done")]
    NotAsSeen {
        /// "proposal" or "request".
        what: &'static str,
        /// Its number.
        n: u64,
    },
    /// Its branch is gone (deleted by hand).
    #[error("proposal {n}'s branch {branch} is gone")]
    BranchGone {
        /// The proposal.
        n: u64,
        /// The ref.
        branch: String,
    },
    /// Its branch points elsewhere than the commit it was made as (moved by
    /// hand): what it holds now is not what was proposed.
    #[error("proposal {n}'s branch {branch} was moved by hand (to {at}; it was made as {was})")]
    Moved {
        /// The proposal.
        n: u64,
        /// The ref.
        branch: String,
        /// Where it points now.
        at: String,
        /// The commit it was made as.
        was: String,
    },
    /// Files it changes have edits not committed yet.
    #[error("{} {} uncommitted edits; accepting now would overwrite them", .0.join(", "), if .0.len() == 1 { "has" } else { "have" })]
    Dirty(Vec<String>),
    /// The book could not be read.
    #[error(transparent)]
    Book(#[from] crate::json_file::JsonFileError),
    /// A file could not be written.
    #[error(transparent)]
    Write(#[from] crate::atomic::WriteError),
    /// git failed.
    #[error(transparent)]
    Repo(#[from] RepoError),
    /// The commit lock.
    #[error(transparent)]
    Lock(#[from] crate::home::lock::LockError),
    /// The flare could not be posted.
    #[error(transparent)]
    Mailbox(#[from] crate::mailbox::MailboxError),
}

impl ProposalError {
    /// Whether it refuses a decision on something that changed or was
    /// decided since it was shown: a conflict (409 on the page), not a fault.
    pub fn is_conflict(&self) -> bool {
        matches!(
            self,
            ProposalError::NotAsSeen { .. }
                | ProposalError::Decided { .. }
                | ProposalError::RequestDecided { .. }
                | ProposalError::Moved { .. }
                | ProposalError::BranchGone { .. }
        )
    }

    /// What the operator can do about it.
    pub fn hint(&self) -> String {
        match self {
            ProposalError::NoSuch(_) | ProposalError::NoRequest(_) => {
                "`hearth proposals` lists them".into()
            }
            ProposalError::RequestDecided { .. } => {
                "`hearth proposals --all` shows what became of each; a request runs at most once"
                    .into()
            }
            ProposalError::Decided { .. } => {
                "`hearth proposals --all` shows what became of each".into()
            }
            ProposalError::NotAsSeen { what, n } => format!(
                "look at it again (`hearth proposals show {n}`, or reload the page) and decide \
                 on the {what} as it is now"
            ),
            ProposalError::BranchGone { n, .. } => format!(
                "nothing is left to accept: `hearth proposals reject {n} --reason \"branch deleted\"`"
            ),
            ProposalError::Moved { n, branch, was, .. } => format!(
                "put it back (`git update-ref {branch} {was}`) and accept again, or drop it: \
                 `hearth proposals reject {n} --reason \"moved by hand\"`"
            ),
            ProposalError::Dirty(_) => {
                "wait for the supervisor to commit your edits (or `git commit` them), then accept again"
                    .into()
            }
            ProposalError::Repo(e) => e.hint(),
            ProposalError::Lock(e) => e.hint(),
            ProposalError::Book(e) => format!(
                "{}; the branches under refs/hearth/proposals/ hold the changes",
                e.hint()
            ),
            ProposalError::Write(e) => e.hint(),
            ProposalError::Mailbox(e) => e.hint(),
        }
    }
}

/// What a proposal is made of before it is recorded.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Draft {
    /// One line.
    pub title: String,
    /// Why it is made.
    pub why: String,
    /// `tick 12`, `ask`.
    pub by: String,
    /// `consolidation`, or empty.
    pub kind: String,
    /// The content from outside behind it.
    pub outside: crate::outside::Outside,
    /// Each file as the proposal would leave it (`None`: deleted).
    pub files: BTreeMap<String, Option<Vec<u8>>>,
}

/// `title` as a branch name's tail: lowercase words joined by `-`.
fn slug(title: &str) -> String {
    let mut slug = String::new();
    for c in title.chars() {
        if c.is_ascii_alphanumeric() {
            slug.push(c.to_ascii_lowercase());
        } else if !slug.ends_with('-') && !slug.is_empty() {
            slug.push('-');
        }
        if slug.len() >= 40 {
            break;
        }
    }
    let slug = slug.trim_end_matches('-').to_string();
    if slug.is_empty() {
        "change".into()
    } else {
        slug
    }
}

fn message(n: u64, draft: &Draft) -> String {
    // The trailers say all the book says of it: a lost book is rebuilt
    // from the refs (`book::reconcile`).
    let mut m = format!(
        "proposal {n}: {}\n\n{}\n\n{}{}",
        draft.title,
        draft.why.trim(),
        trailers::line(trailers::PROPOSAL, n),
        trailers::line(trailers::BY, &draft.by),
    );
    if !draft.kind.is_empty() {
        m.push_str(&trailers::line(trailers::KIND, &draft.kind));
    }
    m.push_str(&trailers::outside_lines(&draft.outside));
    m
}

/// Records `draft` as proposal `n` (a new one when `n` is `None`): its
/// branch from HEAD (or, for an existing one, from its base, replacing its
/// commit), its entry in the book, and — for a new one — a `proposal`
/// flare. Nothing on `main` moves.
pub fn propose(
    home: &Home,
    n: Option<u64>,
    draft: &Draft,
    now: DateTime<Utc>,
) -> Result<Proposal, ProposalError> {
    let _lock = CommitLock::acquire(home)?;
    let repo = Repo::open(home.root())?;
    recover_logged(home, &repo);
    let (mut book, _) = load_book(home, &repo);
    let existing = n.and_then(|n| book.get(n).cloned());
    // Never a number used before, whatever the book remembers.
    let n = existing.as_ref().map_or_else(
        || book.next_number().max(book::highest_known(&repo) + 1),
        |p| p.n,
    );
    let base = match &existing {
        Some(p) => p.base.clone(),
        None => repo.head().ok_or_else(|| RepoError::Git {
            path: home.root().to_path_buf(),
            message: "the home has no commit yet".into(),
        })?,
    };
    let branch = existing.as_ref().map_or_else(
        || format!("{REF_PREFIX}{n}-{}", slug(&draft.title)),
        |p| p.branch.clone(),
    );
    let files: Vec<(String, Option<Vec<u8>>)> = draft
        .files
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let commit = repo.propose(
        &branch,
        &base,
        &files,
        &Identity::hearth(),
        &message(n, draft),
        now,
    )?;
    let proposal = Proposal {
        n,
        branch,
        title: draft.title.clone(),
        why: draft.why.clone(),
        by: draft.by.clone(),
        kind: draft.kind.clone(),
        base,
        commit,
        files: draft.files.keys().cloned().collect(),
        outside: draft.outside.clone(),
        created: existing.as_ref().map_or(now, |p| p.created),
        status: State::Open,
        decided: None,
        reason: None,
        conflicts: Vec::new(),
    };
    book.put(proposal.clone());
    book.save(home)?;
    if existing.is_none() {
        flare_new(home, &proposal, now)?;
    }
    Ok(proposal)
}

/// Tells the operator a new proposal waits, unless a `proposal` flare is
/// unread already: a planted rule repeated in every message must not bury
/// the operator in flares (`hearth status` and `hearth proposals` count
/// them all).
fn flare_new(home: &Home, proposal: &Proposal, now: DateTime<Utc>) -> Result<(), ProposalError> {
    let unread = crate::mailbox::flares::list(home)
        .iter()
        .any(|f| f.cause() == Cause::Proposal && !f.read);
    if unread {
        return Ok(());
    }
    let n = proposal.n;
    let body = format!(
        "Proposal {n} waits for you: {}\n\n{}\n\nFiles: {}\n\n\
         `hearth proposals show {n}` shows the diff and who wrote every line it removes; \
         `hearth proposals accept {n}` puts it on main, `hearth proposals reject {n} \
         --reason \"…\"` drops it. Until you mark this flare read, later proposals \
         are counted by `hearth status` and listed by `hearth proposals`, not flared.\n",
        proposal.title,
        proposal.why.trim(),
        proposal.files.join(", ")
    );
    let title = format!("proposal {n}: {}", proposal.title);
    let letter = Letter::flare(Cause::Proposal, title, body).about(About::Proposal(n));
    outbox::post(home, &letter, now)?;
    Ok(())
}

/// Every proposal, newest last (from the refs and history when the book
/// is lost or broken).
pub fn list(home: &Home) -> Result<Vec<Proposal>, ProposalError> {
    let repo = Repo::open(home.root())?;
    Ok(load_book(home, &repo).0.proposals)
}

/// How many wait for the operator.
pub fn waiting(home: &Home) -> Result<usize, ProposalError> {
    Ok(list(home)?.iter().filter(|p| p.status.waiting()).count())
}

/// Proposal `n` and its diff, with who wrote each removed line.
pub fn show(home: &Home, n: u64) -> Result<(Proposal, Vec<FileDiff>), ProposalError> {
    let repo = Repo::open(home.root())?;
    let proposal = load_book(home, &repo)
        .0
        .get(n)
        .cloned()
        .ok_or(ProposalError::NoSuch(n))?;
    let diff = repo.proposal_diff(&proposal.commit)?;
    Ok((proposal, diff))
}
