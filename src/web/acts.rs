//! What the operator decides from the page (`--allow-act`): accept or
//! reject a proposal, approve or decline a request, acknowledge an
//! incident, run a job now. Each act names the version it was decided on
//! — the proposal's commit, the request's manifest digest, the incident's
//! key, the job file's digest the page showed — and is refused when that
//! changed since, so a tap never acts on words the operator did not see.
//! Each is the CLI's own act (`proposals::accept`, `reject`,
//! `tools::requested::approve`, `requests::decline`,
//! `notify::acknowledge`, `jobs::asked`): the same commit by the
//! operator, with the reason.

use chrono::{DateTime, Utc};
use hyper::StatusCode;

use crate::config::Config;
use crate::home::Home;
use crate::mailbox::flares::Which;
use crate::proposals::{self, Accepted};
use crate::repo::Identity;

/// One decision the page can take.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PageAct {
    /// Put proposal N on `main`.
    Accept(u64),
    /// Close proposal N without it.
    Reject(u64),
    /// Run request N's tool once, as the operator.
    Approve(u64),
    /// Drop request N without running it.
    Decline(u64),
    /// Ask for a run of the job now.
    RunJob(String),
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
    /// The request was decided, or is not the one the page showed.
    #[error(
        "request {n} was decided or changed since the page showed it: nothing was run; \
         reload the page"
    )]
    RequestChanged {
        /// The request.
        n: u64,
    },
    /// The job's file changed (or went) since the page showed it.
    #[error(
        "jobs/{name}.toml changed since the page showed it: nothing was asked; reload the page"
    )]
    JobChanged {
        /// The job.
        name: String,
    },
    /// The approved tool did not run.
    #[error(transparent)]
    Approve(#[from] crate::tools::requested::ApproveError),
    /// The run could not be asked for.
    #[error("could not ask for the run: {0}")]
    Ask(#[from] crate::atomic::WriteError),
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
            NotDecided::Changed { .. }
            | NotDecided::NeedsReview { .. }
            | NotDecided::Gone
            | NotDecided::RequestChanged { .. }
            | NotDecided::JobChanged { .. } => StatusCode::CONFLICT,
            NotDecided::Proposal(_)
            | NotDecided::Acknowledge(_)
            | NotDecided::Approve(_)
            | NotDecided::Ask(_) => StatusCode::UNPROCESSABLE_ENTITY,
        }
    }
}

impl PageAct {
    /// The act a path names: `/proposals/N/accept`, `…/reject`,
    /// `/requests/N/approve`, `…/decline`, `/incidents/acknowledge`,
    /// `/jobs/NAME/run`.
    pub fn of_path(path: &str) -> Option<PageAct> {
        if path == "/incidents/acknowledge" {
            return Some(PageAct::Acknowledge);
        }
        let (room, rest) = path.strip_prefix('/')?.split_once('/')?;
        let (what, verb) = rest.split_once('/')?;
        if what.is_empty() || verb.contains('/') {
            return None;
        }
        let n = || what.parse::<u64>().ok();
        match (room, verb) {
            ("proposals", "accept") => n().map(PageAct::Accept),
            ("proposals", "reject") => n().map(PageAct::Reject),
            ("requests", "approve") => n().map(PageAct::Approve),
            ("requests", "decline") => n().map(PageAct::Decline),
            ("jobs", "run") => Some(PageAct::RunJob(what.to_string())),
            _ => None,
        }
    }

    /// The view to go back to once it is taken.
    pub fn back_to(&self) -> String {
        match self {
            PageAct::Acknowledge => "/incidents".into(),
            PageAct::Accept(_) | PageAct::Reject(_) => "/proposals".into(),
            PageAct::Approve(n) | PageAct::Decline(n) => format!("/requests/{n}"),
            PageAct::RunJob(name) => format!(
                "/jobs/{}",
                percent_encoding::utf8_percent_encode(name, percent_encoding::NON_ALPHANUMERIC)
            ),
        }
    }

    /// Takes the act on what the page showed — a proposal at its commit,
    /// an incident by its key (`seen`) — as the operator.
    pub fn take(
        &self,
        home: &Home,
        seen: &str,
        reason: Option<&str>,
        now: DateTime<Utc>,
    ) -> Result<(), NotDecided> {
        match *self {
            PageAct::Acknowledge => acknowledge(home, seen, now),
            PageAct::Approve(n) => {
                request_as_shown(home, n, seen)?;
                let config = config(home);
                let environment = std::env::vars().collect();
                let who = Identity::operator(&config.git);
                crate::tools::requested::approve(home, &config, &environment, n, &who, now)?;
                Ok(())
            }
            PageAct::Decline(n) => {
                request_as_shown(home, n, seen)?;
                proposals::requests::decline(home, n, reason, &operator(home), now)?;
                Ok(())
            }
            PageAct::RunJob(ref name) => {
                let (jobs, _) = crate::jobs::load_all(home);
                let job = jobs
                    .iter()
                    .find(|j| &j.name == name && j.digest == seen && !seen.is_empty())
                    .ok_or_else(|| NotDecided::JobChanged { name: name.clone() })?;
                crate::jobs::asked::ask_to_run(home, job)?;
                Ok(())
            }
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

/// Request `n`, when it is still open and asks for the manifest the page
/// showed (`seen`, its digest); refused otherwise.
fn request_as_shown(home: &Home, n: u64, seen: &str) -> Result<(), NotDecided> {
    match proposals::requests::open(home, n) {
        Ok(request) if request.digest == seen && !seen.is_empty() => Ok(()),
        _ => Err(NotDecided::RequestChanged { n }),
    }
}

/// The home's settings, or the defaults (said) when hearth.toml is broken.
fn config(home: &Home) -> Config {
    Config::load(&home.config_path()).unwrap_or_else(|e| {
        tracing::warn!("{e}; deciding with the default settings");
        Config::default()
    })
}

/// Who decides from the page: the operator of `[git]`.
fn operator(home: &Home) -> Identity {
    Identity::operator(&config(home).git)
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
        assert_eq!(
            PageAct::of_path("/requests/2/approve"),
            Some(PageAct::Approve(2))
        );
        assert_eq!(
            PageAct::of_path("/jobs/digest/run"),
            Some(PageAct::RunJob("digest".into()))
        );
        assert_eq!(PageAct::of_path("/jobs/a/b/run"), None);
        assert_eq!(PageAct::of_path("/jobs//run"), None);
    }
}
