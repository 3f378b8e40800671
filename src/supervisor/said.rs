//! What the supervisor has said already, so it says each thing once: the
//! problems it logged (a file it cannot commit, an untrusted command), the
//! flares it handed to `[flares] exec`, and the broken `hearth.toml` it
//! flared. `hearth status` lists lasting problems itself; this only keeps
//! the log and the outbox from repeating them every tick.

use std::collections::HashSet;

#[derive(Default)]
pub(super) struct SaidOnce {
    problems: HashSet<String>,
    announced: HashSet<String>,
    broken_config: Option<String>,
    hand_edits_failing: bool,
}

impl SaidOnce {
    /// Flares that were in the outbox before the supervisor started are
    /// not announced again.
    pub(super) fn with_flares(names: impl IntoIterator<Item = String>) -> SaidOnce {
        SaidOnce {
            announced: names.into_iter().collect(),
            ..SaidOnce::default()
        }
    }

    /// Whether `problem` is new (and now said).
    pub(super) fn problem(&mut self, problem: &str) -> bool {
        self.problems.insert(problem.to_string())
    }

    /// Whether the flare `name` is new to `[flares] exec` (and now handed).
    pub(super) fn flare(&mut self, name: &str) -> bool {
        self.announced.insert(name.to_string())
    }

    /// Whether `text`, a `hearth.toml` that does not parse, is new (and now
    /// flared): the same broken text is flared once, an edit of it again.
    pub(super) fn broken_config(&mut self, text: &str) -> bool {
        if self.broken_config.as_deref() == Some(text) {
            return false;
        }
        self.broken_config = Some(text.to_string());
        true
    }

    /// Whether a failed commit of hand edits starts a spell of them (and
    /// is logged): on a full disk it is tried again at every look, and
    /// logging each try wrote thousands of lines an hour.
    pub(super) fn hand_edits_failed(&mut self) -> bool {
        !std::mem::replace(&mut self.hand_edits_failing, true)
    }

    /// Hand edits were committed: whether that ends a spell of failures.
    pub(super) fn hand_edits_committed(&mut self) -> bool {
        std::mem::replace(&mut self.hand_edits_failing, false)
    }

    /// Whether a broken `hearth.toml` was flared and has not parsed since.
    pub(super) fn config_was_broken(&self) -> bool {
        self.broken_config.is_some()
    }

    /// `hearth.toml` parses again: its next break is news.
    pub(super) fn config_parses(&mut self) {
        self.broken_config = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_thing_is_said_once_and_a_fixed_config_can_break_again() {
        let mut said = SaidOnce::with_flares(["old.md".to_string()]);
        assert!(!said.flare("old.md"), "there before the start");
        assert!(said.flare("new.md") && !said.flare("new.md"));
        assert!(said.problem("x") && !said.problem("x"));
        assert!(said.broken_config("a = ") && !said.broken_config("a = "));
        assert!(said.broken_config("a = ["), "another break is news");
        said.config_parses();
        assert!(said.broken_config("a = ["));
    }

    #[test]
    fn a_spell_of_failed_hand_edit_commits_is_said_once_and_its_end_once() {
        let mut said = SaidOnce::default();
        assert!(!said.hand_edits_committed(), "no spell to end");
        assert!(said.hand_edits_failed());
        assert!(!said.hand_edits_failed() && !said.hand_edits_failed());
        assert!(said.hand_edits_committed());
        assert!(!said.hand_edits_committed());
        assert!(said.hand_edits_failed(), "a new spell is news");
    }
}
