//! `state/proposals.json`: every proposal and what became of it.

use serde::{Deserialize, Serialize};

use super::Proposal;
use crate::home::layout::rel;
use crate::home::Home;
use crate::json_file::{self, JsonFile, JsonFileError};

/// The book of proposals, oldest first.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Book {
    /// Every proposal.
    #[serde(default)]
    pub proposals: Vec<Proposal>,
}

impl JsonFile for Book {
    const VERSION: u32 = 1;
}

impl Book {
    /// The book (empty when there is none yet).
    pub fn load(home: &Home) -> Result<Book, JsonFileError> {
        Ok(json_file::load(&home.path(rel::PROPOSALS))?.unwrap_or_default())
    }

    /// Writes it atomically.
    pub fn save(&self, home: &Home) -> Result<(), crate::atomic::WriteError> {
        json_file::save(&home.path(rel::PROPOSALS), self)
    }

    /// Proposal `n`.
    pub fn get(&self, n: u64) -> Option<&Proposal> {
        self.proposals.iter().find(|p| p.n == n)
    }

    /// The number the next proposal takes.
    pub fn next_number(&self) -> u64 {
        self.proposals.iter().map(|p| p.n).max().unwrap_or(0) + 1
    }

    /// Adds `proposal`, or replaces the one with its number.
    pub fn put(&mut self, proposal: Proposal) {
        match self.proposals.iter_mut().find(|p| p.n == proposal.n) {
            Some(p) => *p = proposal,
            None => self.proposals.push(proposal),
        }
    }
}
