//! Jobs (DESIGN 19): work at set times, whose "done" hearth checks.
//!
//! `jobs/NAME.toml` ([`spec`]) says when (`cron`), what (a prompt, and a
//! `check` that can say "nothing to do" for no model call) and what done
//! means (`[expect]`). [`plan`] decides, purely, when each runs next;
//! the supervisor runs it as a tick of its own door and writes each step
//! to `state/jobs.jsonl` ([`ledger`]); [`outcome`] decides how each run
//! ended, in one pure function, with [`evidence`] judging done from what
//! the run's commit and calls show, never from the model's words.

pub mod asked;
pub mod check;
pub mod cron;
pub mod evidence;
pub mod ledger;
pub mod outcome;
pub mod overview;
pub mod plan;
pub mod seen;
pub mod spec;
pub mod turn;

pub use spec::{load_all, Job, JobProblem};
