//! `state/jobs-seen.json`: when a supervisor first saw each job, so its
//! schedule counts from then (a job added today never "catches up" on
//! yesterday) and a job that never ran can still be found overdue.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::home::layout::rel;
use crate::home::Home;
use crate::json_file::{self, JsonFile};

/// Job name → when it was first seen.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct JobsSeen {
    /// The times.
    pub since: BTreeMap<String, DateTime<Utc>>,
}

impl JsonFile for JobsSeen {
    const VERSION: u32 = 1;
}

impl JobsSeen {
    /// What is on disk; a broken file is said and read as empty (every
    /// job then counts from now: nothing is run twice, at worst a missed
    /// run goes uncaught).
    pub fn load(home: &Home) -> JobsSeen {
        match json_file::load(&home.path(rel::JOBS_SEEN)) {
            Ok(seen) => seen.unwrap_or_default(),
            Err(e) => {
                tracing::warn!("{e}; each job's schedule counts from now");
                JobsSeen::default()
            }
        }
    }

    /// When `job` was first seen (`now`, if it is new).
    pub fn of(&self, job: &str, now: DateTime<Utc>) -> DateTime<Utc> {
        self.since.get(job).copied().unwrap_or(now)
    }

    /// Notes the jobs not seen before as seen `now`, forgets the ones gone,
    /// and saves when that changed anything.
    pub fn note(
        &mut self,
        home: &Home,
        jobs: &[&str],
        now: DateTime<Utc>,
    ) -> Result<(), crate::atomic::WriteError> {
        let before = self.since.clone();
        self.since.retain(|name, _| jobs.contains(&name.as_str()));
        for job in jobs {
            self.since.entry((*job).to_string()).or_insert(now);
        }
        if self.since != before {
            json_file::save(&home.path(rel::JOBS_SEEN), self)?;
        }
        Ok(())
    }
}
