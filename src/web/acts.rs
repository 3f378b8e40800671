//! What the operator decides from the page (`--allow-act`): accept or
//! reject a proposal, approve or decline a request, acknowledge an
//! incident, run a job now. Each act names the version it was decided on
//! — the proposal's commit, the request's manifest digest, the incident's
//! key, the job file's digest the page showed — and is refused when that
//! changed since, so a tap never acts on words the operator did not see.
//! Each is the CLI's own act (`proposals::accept`, `reject`,
//! `requests::approve_for_supervisor`, `requests::decline`,
//! `notify::acknowledge`, `jobs::asked`): the same commit by the
//! operator, with the reason.

use chrono::{DateTime, Utc};
use hyper::StatusCode;

use crate::config::Config;
use crate::home::Home;
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
    /// The job's file changed (or went) since the page showed it.
    #[error(
        "jobs/{name}.toml changed since the page showed it: nothing was asked; reload the page"
    )]
    JobChanged {
        /// The job.
        name: String,
    },
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
            NotDecided::NeedsReview { .. } | NotDecided::JobChanged { .. } => StatusCode::CONFLICT,
            NotDecided::Proposal(e) if e.is_conflict() => StatusCode::CONFLICT,
            NotDecided::Acknowledge(crate::notify::acknowledge::NotAcknowledged::NotOpen {
                ..
            }) => StatusCode::CONFLICT,
            NotDecided::Proposal(_) | NotDecided::Acknowledge(_) | NotDecided::Ask(_) => {
                StatusCode::UNPROCESSABLE_ENTITY
            }
        }
    }
}

impl PageAct {
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
    /// a request by its manifest's digest, an incident by its key, a job
    /// by its file's digest (`seen`) — as the operator. The version is
    /// checked by the domain's own act under the commit lock: a thing that
    /// changed between the page's look and the act is refused, never
    /// decided unseen. An approved request's tool is not run here: the
    /// supervisor runs it, so no tool is ever the page's child.
    pub fn take(
        &self,
        home: &Home,
        seen: &str,
        reason: Option<&str>,
        now: DateTime<Utc>,
    ) -> Result<(), NotDecided> {
        let seen_version = Some(seen);
        match *self {
            PageAct::Acknowledge => {
                let who = operator(home);
                crate::notify::acknowledge::acknowledge_incident(home, seen, &who, "page", now)?;
                Ok(())
            }
            PageAct::Approve(n) => {
                let who = operator(home);
                let founding = proposals::requests::open(home, n)
                    .is_ok_and(|r| r.kind == proposals::requests::RequestKind::Founding);
                if founding {
                    proposals::requests::approve_founding(home, n, seen_version, &who, now)?;
                } else {
                    // The page runs no tool: the supervisor does, woken.
                    proposals::requests::approve_for_supervisor(home, n, seen_version, &who, now)?;
                    crate::jobs::asked::wake_supervisor(home);
                }
                Ok(())
            }
            PageAct::Decline(n) => {
                let who = operator(home);
                proposals::requests::decline(home, n, seen_version, reason, &who, now)?;
                Ok(())
            }
            PageAct::RunJob(ref name) => {
                let (jobs, _) = crate::jobs::load_all(home);
                let job = jobs
                    .iter()
                    .find(|j| &j.name == name && j.digest == seen && !seen.is_empty())
                    .ok_or_else(|| NotDecided::JobChanged { name: name.clone() })?;
                // The digest goes with the request: the supervisor runs the
                // job only while its file is still the one shown.
                crate::jobs::asked::ask_to_run(home, job)?;
                Ok(())
            }
            PageAct::Accept(n) => {
                match proposals::accept(home, n, seen_version, &operator(home), now)? {
                    Accepted::Merged(..) => Ok(()),
                    Accepted::NeedsReview(p) => Err(NotDecided::NeedsReview {
                        n,
                        files: p.conflicts.join(", "),
                    }),
                }
            }
            PageAct::Reject(n) => {
                proposals::reject(home, n, seen_version, reason, &operator(home), now)?;
                Ok(())
            }
        }
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
pub(super) fn operator(home: &Home) -> Identity {
    Identity::operator(&config(home).git)
}
