//! Whether the tool sandbox (`crate::jail`) works on this machine, said
//! once at start-up when it does not and something would run in it.

use super::Supervisor;

impl Supervisor<'_> {
    /// One flare, at start-up, when the tool sandbox cannot be set up on
    /// this machine: every sandboxed tool, check and `[flares] exec` then
    /// fails closed, each call saying why; this says it once, with the fix.
    pub(super) fn flare_if_no_sandbox(&mut self) {
        let Err(e) = crate::jail::available() else {
            return;
        };
        let (tools, _) = crate::tools::operator::load(self.home, &crate::tools::BUILTINS);
        let (jobs, _) = crate::jobs::load_all(self.home);
        let needed = tools.iter().any(|t| !t.confinement.is_unsandboxed())
            || jobs
                .iter()
                .any(|j| !j.check.is_empty() && !j.confinement.is_unsandboxed());
        if !needed || !self.said.problem(&e.to_string()) {
            return;
        }
        tracing::warn!("{e}; {}", e.hint());
        let body = format!(
            "{e}.\n\nNo operator tool, MCP server, job check or [flares] exec runs until it \
             can: each call says so, and nothing runs unsandboxed in its place.\n\nTo fix it: \
             {}\n",
            e.hint()
        );
        let flare = crate::mailbox::outbox::Letter::flare(
            crate::mailbox::cause::Cause::Tools,
            "the tool sandbox cannot be set up: tools do not run",
            body,
        );
        if let Err(e) = crate::mailbox::outbox::post(self.home, &flare, self.options.clock.now()) {
            tracing::error!("could not write the sandbox flare: {e}");
        }
    }
}
