//! Requests the operator approved from the page. The page runs no tool —
//! it holds the page's token, and a tool of its would be its child — so it
//! only records the approval (the operator's commit) and wakes the
//! supervisor, which runs each once at its next look, as the operator,
//! with its environment filtered by the tool's manifest as every tool's.

use super::Supervisor;
use crate::proposals::requests;
use crate::repo::Identity;
use crate::tools::requested::{self, ApproveError};

impl Supervisor<'_> {
    /// Whether an approved request waits to be run: the wait ends now.
    pub(super) fn approved_waiting(&self) -> bool {
        requests::approved(self.home).is_ok_and(|waiting| !waiting.is_empty())
    }

    /// Runs every request approved from the page, oldest first. One that
    /// may not run as it was approved (its manifest changed, it is no
    /// longer trusted) is recorded failed with why, never tried again; a
    /// fault of the book or of git is tried again at the next look.
    pub(super) fn run_approved_requests(&mut self) {
        let _ = std::fs::remove_file(
            self.home
                .path(crate::home::layout::rel::JOB_REQUESTS)
                .join(crate::jobs::asked::WAKE),
        );
        let approved = match requests::approved(self.home) {
            Ok(approved) => approved,
            Err(e) => {
                tracing::warn!("the requests approved from the page cannot be read: {e}");
                return;
            }
        };
        let environment = &self.options.environment;
        for request in approved {
            let now = self.options.clock.now();
            match requested::run_approved(self.home, &self.config, environment, &request, now) {
                Ok(done) => tracing::info!(
                    "request {} (approved from the page): {} {}",
                    done.n,
                    done.tool,
                    done.status.as_str()
                ),
                Err(ApproveError::Refused { n, why }) => {
                    tracing::warn!("request {n} was approved but not run: {why}");
                    let who = Identity::operator(&self.config.git);
                    if let Err(e) = requests::finish(self.home, n, Err(&why), &who, now) {
                        tracing::warn!("request {n}: its failure could not be recorded: {e}");
                    }
                }
                Err(e) => tracing::warn!(
                    "request {} (approved from the page) did not run yet: {e}; tried again at \
                     the next look ({})",
                    request.n,
                    e.hint()
                ),
            }
        }
    }
}
