//! Deciding a proposal: `accept` (one commit on `main`, re-applied on top
//! when `main` moved) and `reject` (a commit that records why), each one
//! step under the commit lock and the decision journal (`journal`), so a
//! kill at any instant leaves `main` with all of it or none.

use chrono::{DateTime, Utc};

use super::book::load_book;
use super::journal::{self, Deciding};
use super::{Book, Proposal, ProposalError, State};
use crate::home::lock::CommitLock;
use crate::home::Home;
use crate::repo::{trailers, Identity, Merged, Repo};

/// Finishes or undoes a decision a kill cut short (`journal`), under the
/// commit lock; what it did, for the caller to say.
pub fn recover_interrupted(home: &Home) -> Result<Option<String>, ProposalError> {
    let _lock = CommitLock::acquire(home)?;
    let repo = Repo::open(home.root())?;
    Ok(journal::recover(home, &repo).map(|r| r.describe()))
}

/// [`journal::recover`] for a caller that holds the lock: logged.
pub(super) fn recover_logged(home: &Home, repo: &Repo) {
    if let Some(done) = journal::recover(home, repo) {
        tracing::warn!("{}", done.describe());
    }
}

/// What `accept` did.
#[derive(Debug, Clone, PartialEq)]
pub enum Accepted {
    /// On `main` as commit `.1`.
    Merged(Proposal, Option<String>),
    /// `main` changed the same lines: left `needs-review`.
    NeedsReview(Proposal),
}

fn waiting_one(book: &Book, n: u64) -> Result<Proposal, ProposalError> {
    let proposal = book.get(n).cloned().ok_or(ProposalError::NoSuch(n))?;
    if !proposal.status.waiting() {
        return Err(ProposalError::Decided {
            n,
            status: proposal.status.as_str(),
        });
    }
    Ok(proposal)
}

/// [`waiting_one`], when it is still at the commit `seen` (if given).
fn waiting_as_seen(book: &Book, n: u64, seen: Option<&str>) -> Result<Proposal, ProposalError> {
    let proposal = waiting_one(book, n)?;
    match seen {
        Some(seen) if seen.is_empty() || seen != proposal.commit => Err(ProposalError::NotAsSeen {
            what: "proposal",
            n,
        }),
        _ => Ok(proposal),
    }
}

/// Puts proposal `n` on `main` as one commit by `who` (its changes
/// re-applied on top when `main` moved since it was made). Where `main`
/// changed the same lines, nothing moves and the proposal is left
/// `needs-review`, naming the files; that too is a commit.
///
/// `seen` is the commit the decider was shown: checked under the commit
/// lock, so a proposal a tick replaced between the showing and the act is
/// refused ([`ProposalError::NotAsSeen`]), never accepted unseen.
pub fn accept(
    home: &Home,
    n: u64,
    seen: Option<&str>,
    who: &Identity,
    now: DateTime<Utc>,
) -> Result<Accepted, ProposalError> {
    let _lock = CommitLock::acquire(home)?;
    let repo = Repo::open(home.root())?;
    recover_logged(home, &repo);
    let (mut book, _) = load_book(home, &repo);
    let mut proposal = waiting_as_seen(&book, n, seen)?;
    match repo.commit_of_ref(&proposal.branch) {
        None => {
            return Err(ProposalError::BranchGone {
                n,
                branch: proposal.branch.clone(),
            })
        }
        Some(at) if at != proposal.commit => {
            return Err(ProposalError::Moved {
                n,
                branch: proposal.branch.clone(),
                at,
                was: proposal.commit.clone(),
            })
        }
        Some(_) => {}
    }
    let book_rel = crate::home::layout::rel::PROPOSALS;
    match repo.merge_onto_head(&proposal.commit)? {
        Merged::Conflicts(files) => {
            proposal.status = State::NeedsReview;
            proposal.conflicts = files.clone();
            book.put(proposal.clone());
            Deciding::of(home, &repo, n, "accept", &[book_rel.to_string()], now).begin(home)?;
            book.save(home)?;
            repo.commit(
                &[book_rel],
                who,
                &format!(
                    "proposal {n} needs review: main changed {} since it was made\n\n{}",
                    files.join(", "),
                    trailers::line(trailers::PROPOSAL, n)
                ),
                now,
            )?;
            Deciding::end(home);
            Ok(Accepted::NeedsReview(proposal))
        }
        Merged::Clean(files) => {
            let dirty = repo.dirty_paths()?;
            let touched: Vec<String> = files
                .iter()
                .map(|(p, _)| p.clone())
                .filter(|p| dirty.contains(p))
                .collect();
            if !touched.is_empty() {
                return Err(ProposalError::Dirty(touched));
            }
            // Named before the first write: a kill from here on is
            // finished or undone by whatever commits next, never taken
            // for the operator's edit.
            let mut written: Vec<String> = files.iter().map(|(p, _)| p.clone()).collect();
            written.push(book_rel.to_string());
            Deciding::of(home, &repo, n, "accept", &written, now).begin(home)?;
            hooks::pause_between_writes();
            for (rel, content) in &files {
                let path = home.path(rel);
                match content {
                    Some(bytes) => crate::atomic::write(&path, bytes)?,
                    None => {
                        let _ = std::fs::remove_file(&path);
                    }
                }
                hooks::pause_between_writes();
            }
            proposal.status = State::Accepted;
            proposal.decided = Some(now);
            proposal.conflicts.clear();
            book.put(proposal.clone());
            book.save(home)?;
            let mut specs: Vec<&str> = files.iter().map(|(p, _)| p.as_str()).collect();
            specs.push(book_rel);
            // The branch stays: `git log --all` shows the proposal beside
            // its acceptance.
            let id = repo.commit(
                &specs,
                who,
                &format!(
                    "proposal {n} accepted: {}\n\n{}\n\n{}{}",
                    proposal.title,
                    proposal.why.trim(),
                    trailers::line(trailers::PROPOSAL, n),
                    trailers::line(trailers::PROPOSED_BY, &proposal.by)
                ),
                now,
            )?;
            Deciding::end(home);
            Ok(Accepted::Merged(proposal, id))
        }
    }
}

/// Drops proposal `n`: its branch goes, the book says why, one commit.
/// `seen`, as for [`accept`].
pub fn reject(
    home: &Home,
    n: u64,
    seen: Option<&str>,
    reason: Option<&str>,
    who: &Identity,
    now: DateTime<Utc>,
) -> Result<Proposal, ProposalError> {
    let _lock = CommitLock::acquire(home)?;
    let repo = Repo::open(home.root())?;
    recover_logged(home, &repo);
    let (mut book, _) = load_book(home, &repo);
    let mut proposal = waiting_as_seen(&book, n, seen)?;
    proposal.status = State::Rejected;
    proposal.decided = Some(now);
    proposal.reason = reason.map(str::to_string);
    book.put(proposal.clone());
    let book_rel = crate::home::layout::rel::PROPOSALS;
    Deciding::of(home, &repo, n, "reject", &[book_rel.to_string()], now).begin(home)?;
    book.save(home)?;
    repo.commit(
        &[crate::home::layout::rel::PROPOSALS],
        who,
        &format!(
            "proposal {n} rejected: {}\n\n{}{}",
            proposal.title,
            reason.map(|r| format!("{r}\n\n")).unwrap_or_default(),
            trailers::line(trailers::PROPOSAL, n)
        ),
        now,
    )?;
    Deciding::end(home);
    repo.delete_ref(&proposal.branch)?;
    Ok(proposal)
}

/// A pause between an accept's writes, for a test that kills it midway
/// (the binary sets it from `HEARTH_TEST_ACCEPT_PAUSE_MS` at its edge:
/// the library reads no environment). None outside tests.
pub mod hooks {
    static PAUSE: std::sync::OnceLock<std::time::Duration> = std::sync::OnceLock::new();

    /// Pauses every later accept for `pause` between its writes.
    pub fn pause_accepts(pause: std::time::Duration) {
        let _ = PAUSE.set(pause);
    }

    pub(super) fn pause_between_writes() {
        if let Some(pause) = PAUSE.get() {
            std::thread::sleep(*pause);
        }
    }
}
