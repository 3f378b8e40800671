//! `state/mail.json`: which mail was taken, so intake is exactly once
//! across kills, reconnects and a changed UIDVALIDITY. A mail is taken
//! in one commit with the ledger that counts it; its inbox file's name
//! is its UIDVALIDITY and UID, so a mail fetched again after a kill
//! between the write and the commit finds its own file and is not taken
//! twice. When the server renumbers (UIDVALIDITY changes), the
//! Message-IDs of the mail taken recently keep it from being taken again.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use crate::home::Home;
use crate::json_file::{self, JsonFile};

/// Where it is kept.
pub const FILE: &str = "state/mail.json";

/// Message-IDs remembered for a renumbered folder.
const REMEMBERED: usize = 5000;

/// Which mail was taken.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MailLedger {
    /// The folder's UIDVALIDITY the UIDs below belong to.
    pub validity: u32,
    /// The first UID not taken yet.
    pub next: u32,
    /// The Message-IDs of the mail taken last, oldest first.
    #[serde(default)]
    pub recent: VecDeque<String>,
    /// The letters sent back by mail last (their ids), oldest first.
    #[serde(default)]
    pub replied: VecDeque<String>,
    /// The agent's letters answering mail not proven the operator's,
    /// waiting for the operator's word (`outbox/…`), oldest first.
    #[serde(default)]
    pub held: Vec<String>,
}

impl JsonFile for MailLedger {
    const VERSION: u32 = 1;
}

impl MailLedger {
    /// The ledger (none yet: empty); a broken one is an error naming the
    /// file, never read as empty (that would take every mail again).
    pub fn load(home: &Home) -> Result<MailLedger, json_file::JsonFileError> {
        Ok(json_file::load(&home.path(FILE))?.unwrap_or_default())
    }

    /// Written whole or not at all.
    pub fn save(&self, home: &Home) -> Result<(), crate::atomic::WriteError> {
        json_file::save(&home.path(FILE), self)
    }

    /// The ledger for a folder of UIDVALIDITY `validity`: the same, or a
    /// fresh count from UID 1 that still knows the Message-IDs taken.
    pub fn for_validity(mut self, validity: u32) -> MailLedger {
        if self.validity != validity {
            self.validity = validity;
            self.next = 1;
        }
        self.next = self.next.max(1);
        self
    }

    /// Whether a mail of this Message-ID was taken lately.
    pub fn knows(&self, message_id: &str) -> bool {
        !message_id.is_empty() && self.recent.iter().any(|m| m == message_id)
    }

    /// Counts mail `uid` (of Message-ID `message_id`) taken.
    pub fn took(&mut self, uid: u32, message_id: &str) {
        self.next = self.next.max(uid + 1);
        if !message_id.is_empty() {
            self.recent.push_back(message_id.to_string());
            while self.recent.len() > REMEMBERED {
                self.recent.pop_front();
            }
        }
    }
}

impl MailLedger {
    /// Counts the letter `id` sent back (before it is given to
    /// `sendmail`: at most once).
    pub fn reply_counted(&mut self, id: &str) {
        self.replied.push_back(id.to_string());
        while self.replied.len() > REMEMBERED {
            self.replied.pop_front();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_renumbered_folder_counts_again_and_remembers_what_it_took() {
        let mut ledger = MailLedger::default().for_validity(7);
        assert_eq!(ledger.next, 1);
        ledger.took(3, "a@x");
        ledger.took(4, "");
        assert_eq!(ledger.next, 5);
        let same = ledger.clone().for_validity(7);
        assert_eq!(same.next, 5);
        let renumbered = ledger.for_validity(9);
        assert_eq!((renumbered.validity, renumbered.next), (9, 1));
        assert!(renumbered.knows("a@x"));
        assert!(!renumbered.knows(""));
    }
}
