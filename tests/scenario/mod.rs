//! Scenario tests: the library driven on a real temp git home, with a
//! pinned clock and the offline provider, without spawning the binary. Most
//! behaviour is cheapest to pin here; `e2e` keeps what needs a process.

#![allow(clippy::disallowed_methods)] // fixtures, not state

mod boot;
mod boundary;
mod brake;
mod claims;
mod closed_world;
mod edges;
mod heal;
mod house;
mod mailbox;
mod mcp;
mod proposals;
mod provenance;
mod recall;
mod records;
mod sandbox;
mod tick;

use chrono::{DateTime, Utc};
use hearth::clock::Clock;
use hearth::home::Home;

/// A fresh home made by `hearth::home::init` at a pinned time.
pub fn home(dir: &tempfile::TempDir) -> Home {
    hearth::home::init(&dir.path().join("agent"), now())
        .unwrap()
        .home
}

/// A collaboration founded by hand, with nothing but its name.
pub fn founding(name: &str) -> hearth::collab::operator::Founding {
    hearth::collab::operator::Founding {
        name: name.into(),
        slug: None,
        workdir: None,
        with: Vec::new(),
        founded_by: None,
    }
}

pub fn now() -> DateTime<Utc> {
    Clock::from_env_value(Some("2031-05-06T07:08:09Z"))
        .unwrap()
        .now()
}
