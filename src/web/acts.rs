//! What the operator decides from the page (`--allow-act`): accept or
//! reject a proposal, acknowledge an incident. Each act names the version it was decided on — the
//! proposal's commit the page showed — and is refused when the proposal
//! has changed since, so a tap never accepts words the operator did not
//! see. The decision is the CLI's own (`proposals::accept`, `reject`): one
//! commit by the operator, with the reason.

use chrono::{DateTime, Utc};
use hyper::StatusCode;

use crate::config::Config;
use crate::home::Home;
use crate::mailbox::flares::Which;
use crate::proposals::{self, Accepted};
use crate::repo::Identity;

/// One decision the page can take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PageAct {
    /// Put proposal N on `main`.
    Accept(u64),
    /// Close proposal N without it.
    Reject(u64),
    /// Acknowledge the incident whose key the form names: its flares
    /// marked read, no reminder.
    Acknowledge,
}

/// Why an act was not taken.
#[derive(Debug, thiserror::Error)]
pub enum NotDecided {
    /// The proposal changed (or was decided) since the page showed it.
    #[error(
        "proposal {n} changed since the page showed it (or was decided): nothing was done; \
         reload the page and decide on what it shows now"
    )]
    Changed {
        /// The proposal.
        n: u64,
    },
    /// Main changed the same lines: it needs review, as the CLI says.
    #[error(
        "proposal {n} needs review: main changed {files} since it was made; nothing was applied"
    )]
    NeedsReview {
        /// The proposal.
        n: u64,
        /// The files in conflict.
        files: String,
    },
    /// The incident is not open any more.
    #[error("that incident is not open any more: reload the page")]
    Gone,
    /// The book or the repository said no.
    #[error(transparent)]
    Proposal(#[from] proposals::ProposalError),
    /// The acknowledgement could not be kept.
    #[error(transparent)]
    Acknowledge(#[from] crate::notify::acknowledge::NotAcknowledged),
}

impl NotDecided {
    /// The HTTP status that says it.
    pub fn status(&self) -> StatusCode {
        match self {
            NotDecided::Changed { .. } | NotDecided::NeedsReview { .. } | NotDecided::Gone => {
                StatusCode::CONFLICT
            }
            NotDecided::Proposal(_) | NotDecided::Acknowledge(_) => {
                StatusCode::UNPROCESSABLE_ENTITY
            }
        }
    }
}

impl PageAct {
    /// The act a path names: `/proposals/N/accept`, `/proposals/N/reject`.
    pub fn of_path(path: &str) -> Option<PageAct> {
        if path == "/incidents/acknowledge" {
            return Some(PageAct::Acknowledge);
        }
        let rest = path.strip_prefix("/proposals/")?;
        let (n, verb) = rest.split_once('/')?;
        let n = n.parse().ok()?;
        match verb {
            "accept" => Some(PageAct::Accept(n)),
            "reject" => Some(PageAct::Reject(n)),
            _ => None,
        }
    }

    /// Takes the act on what the page showed — a proposal at its commit,
    /// an incident by its key (`seen`) — as the operator.
    pub fn take(
        self,
        home: &Home,
        seen: &str,
        reason: Option<&str>,
        now: DateTime<Utc>,
    ) -> Result<(), NotDecided> {
        match self {
            PageAct::Acknowledge => acknowledge(home, seen, now),
            PageAct::Accept(n) => {
                let who = as_shown(home, n, seen)?;
                match proposals::accept(home, n, &who, now)? {
                    Accepted::Merged(..) => Ok(()),
                    Accepted::NeedsReview(p) => Err(NotDecided::NeedsReview {
                        n,
                        files: p.conflicts.join(", "),
                    }),
                }
            }
            PageAct::Reject(n) => {
                let who = as_shown(home, n, seen)?;
                proposals::reject(home, n, reason, &who, now)?;
                Ok(())
            }
        }
    }
}

/// The operator who decides proposal `n`, when it still waits at the
/// commit the page showed (`seen`); refused otherwise.
fn as_shown(home: &Home, n: u64, seen: &str) -> Result<Identity, NotDecided> {
    let current = proposals::list(home)?
        .into_iter()
        .find(|p| p.n == n && p.status.waiting());
    if current.is_none_or(|p| p.commit != seen || seen.is_empty()) {
        return Err(NotDecided::Changed { n });
    }
    Ok(operator(home))
}

/// Who decides from the page: the operator of `[git]`.
fn operator(home: &Home) -> Identity {
    let config = Config::load(&home.config_path()).unwrap_or_else(|e| {
        tracing::warn!("{e}; deciding as the default operator");
        Config::default()
    });
    Identity::operator(&config.git)
}

/// Acknowledges the open incident whose key is `key`, exactly (an
/// incident closed or changed since the page showed it is refused).
fn acknowledge(home: &Home, key: &str, now: DateTime<Utc>) -> Result<(), NotDecided> {
    let open = crate::notify::incidents::Incidents::load(home)
        .map(|record| record.open.contains_key(key))
        .unwrap_or(false);
    if !open || key.is_empty() {
        return Err(NotDecided::Gone);
    }
    let ids = vec![key.to_string()];
    let who = operator(home);
    crate::notify::acknowledge::acknowledge(home, Which::Flares, ids, false, &who, "page", now)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_act_is_named_by_its_path_alone() {
        assert_eq!(
            PageAct::of_path("/proposals/3/accept"),
            Some(PageAct::Accept(3))
        );
        assert_eq!(
            PageAct::of_path("/proposals/3/reject"),
            Some(PageAct::Reject(3))
        );
        assert_eq!(PageAct::of_path("/proposals/3/delete"), None);
        assert_eq!(PageAct::of_path("/proposals/x/accept"), None);
        assert_eq!(PageAct::of_path("/incidents"), None);
    }
}
