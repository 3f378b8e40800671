//! What the operator decides from the page (`--allow-act`): accept or
//! reject a proposal. Each act names the version it was decided on — the
//! proposal's commit the page showed — and is refused when the proposal
//! has changed since, so a tap never accepts words the operator did not
//! see. The decision is the CLI's own (`proposals::accept`, `reject`): one
//! commit by the operator, with the reason.

use chrono::{DateTime, Utc};
use hyper::StatusCode;

use crate::config::Config;
use crate::home::Home;
use crate::proposals::{self, Accepted};
use crate::repo::Identity;

/// One decision the page can take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PageAct {
    /// Put proposal N on `main`.
    Accept(u64),
    /// Close proposal N without it.
    Reject(u64),
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
    /// The book or the repository said no.
    #[error(transparent)]
    Proposal(#[from] proposals::ProposalError),
}

impl NotDecided {
    /// The HTTP status that says it.
    pub fn status(&self) -> StatusCode {
        match self {
            NotDecided::Changed { .. } | NotDecided::NeedsReview { .. } => StatusCode::CONFLICT,
            NotDecided::Proposal(_) => StatusCode::UNPROCESSABLE_ENTITY,
        }
    }
}

impl PageAct {
    /// The act a path names: `/proposals/N/accept`, `/proposals/N/reject`.
    pub fn of_path(path: &str) -> Option<PageAct> {
        let rest = path.strip_prefix("/proposals/")?;
        let (n, verb) = rest.split_once('/')?;
        let n = n.parse().ok()?;
        match verb {
            "accept" => Some(PageAct::Accept(n)),
            "reject" => Some(PageAct::Reject(n)),
            _ => None,
        }
    }

    fn n(self) -> u64 {
        match self {
            PageAct::Accept(n) | PageAct::Reject(n) => n,
        }
    }

    /// Takes the act on the proposal as the page showed it (`seen`, its
    /// commit), as the operator.
    pub fn take(
        self,
        home: &Home,
        seen: &str,
        reason: Option<&str>,
        now: DateTime<Utc>,
    ) -> Result<(), NotDecided> {
        let n = self.n();
        let current = proposals::list(home)?
            .into_iter()
            .find(|p| p.n == n && p.status.waiting());
        if current.is_none_or(|p| p.commit != seen || seen.is_empty()) {
            return Err(NotDecided::Changed { n });
        }
        let config = Config::load(&home.config_path()).unwrap_or_else(|e| {
            tracing::warn!("{e}; deciding as the default operator");
            Config::default()
        });
        let who = Identity::operator(&config.git);
        match self {
            PageAct::Accept(_) => match proposals::accept(home, n, &who, now)? {
                Accepted::Merged(..) => Ok(()),
                Accepted::NeedsReview(p) => Err(NotDecided::NeedsReview {
                    n,
                    files: p.conflicts.join(", "),
                }),
            },
            PageAct::Reject(_) => {
                proposals::reject(home, n, reason, &who, now)?;
                Ok(())
            }
        }
    }
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
