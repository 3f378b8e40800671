//! What a flare is about — its *cause* — and, in one table beside it, what
//! clears each cause and how loud it is.
//!
//! A flare's kind, the incident it opens and the notice that says it is
//! resolved are one word; the word is a [`Cause`], so a flare cannot be
//! made from a misspelt string, and [`Cause::cleared_by`] is a `match` the
//! compiler holds whole: a new cause does not build until it names the
//! [`Clearing`] that closes its incident. The clearings themselves are
//! raised where hearth observes them (a good tick, the configuration
//! parsing again, the disk having room…); a test here fails if one of them
//! is raised nowhere.
//!
//! On disk a cause is its word (`flare: model` in a flare's front matter,
//! `"kind": "model"` in `state/incidents.json` and in a notice), so old
//! records read as before. A word this hearth does not make (a newer
//! version's flare, or a file written by hand) is [`Cause::Unknown`], and a
//! good tick clears it.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::config::notify::Severity;

/// What a flare is about: one kind of trouble, one incident at a time per
/// subject.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Cause {
    /// The model API cannot be reached.
    Outage,
    /// The model API refuses hearth (a key, a setting, a model name).
    Model,
    /// A heal ran, or healing is exhausted.
    Healer,
    /// hearth itself panicked.
    Panic,
    /// A request does not fit the model's context window.
    Context,
    /// An identity file does not parse after a tick.
    Layer1,
    /// A state file was broken or deleted (and restored).
    State,
    /// No tick ran for too long, or one ran late.
    Gap,
    /// Operator tools need attention, or `[flares] exec` is not trusted.
    Tools,
    /// A read the brake requires is missing.
    Brake,
    /// A collaboration needs the operator (a refused handoff, a rounds
    /// limit).
    Collab,
    /// A consolidation was refused at its gate.
    Consolidation,
    /// Ticks succeed but do nothing.
    QuietFailure,
    /// The day's budget runs out, or has.
    Budget,
    /// The off-box copy is not being updated.
    Push,
    /// A peer cannot be fetched or read.
    Peer,
    /// `hearth.toml` does not parse.
    Config,
    /// The disk holding the home is full.
    Disk,
    /// A request to run a tool (or found a collaboration) waits.
    Request,
    /// A proposal waits for the operator.
    Proposal,
    /// Mail cannot be read (`[mail]`): the server, the login, the folder.
    Mail,
    /// A job runs but does not do its work, or a run could not be judged.
    Job(String),
    /// A word this hearth does not make.
    Unknown(String),
}

/// What hearth observed that closes incidents: each [`Cause`] names one in
/// [`Cause::cleared_by`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Clearing<'a> {
    /// A tick exited 0: the model answers, the conversation is whole, the
    /// tools and the brake let it work.
    GoodTick,
    /// A tick did what it was asked (it was not quiet).
    UsefulTick,
    /// A tick ran after the budget's stop (a new day, or a raised cap).
    BudgetAllowsTicks,
    /// A push reached the off-box copy.
    PushWorks,
    /// Every peer can be fetched and read.
    PeersReadable,
    /// `hearth.toml` parses again.
    ConfigParses,
    /// The disk has room again.
    DiskHasRoom,
    /// No request to run a tool waits.
    NoRequestWaits,
    /// No proposal waits.
    NoProposalWaits,
    /// The mail watch is connected and logged in again.
    MailRead,
    /// A run of the job of this name was done.
    JobDone(&'a str),
}

impl Cause {
    /// What closes this cause's incident: the one table.
    pub fn cleared_by(&self) -> Clearing<'_> {
        match self {
            Cause::Outage
            | Cause::Model
            | Cause::Healer
            | Cause::Panic
            | Cause::Context
            | Cause::Layer1
            | Cause::State
            | Cause::Gap
            | Cause::Tools
            | Cause::Brake
            | Cause::Collab
            | Cause::Consolidation
            | Cause::Unknown(_) => Clearing::GoodTick,
            Cause::QuietFailure => Clearing::UsefulTick,
            Cause::Budget => Clearing::BudgetAllowsTicks,
            Cause::Push => Clearing::PushWorks,
            Cause::Peer => Clearing::PeersReadable,
            Cause::Config => Clearing::ConfigParses,
            Cause::Disk => Clearing::DiskHasRoom,
            Cause::Request => Clearing::NoRequestWaits,
            Cause::Proposal => Clearing::NoProposalWaits,
            Cause::Mail => Clearing::MailRead,
            Cause::Job(name) => Clearing::JobDone(name),
        }
    }

    /// Whether `clearing` closes this cause's incident.
    pub fn is_cleared_by(&self, clearing: Clearing<'_>) -> bool {
        self.cleared_by() == clearing
    }

    /// How loud a flare of this cause is. The title tells a budget's
    /// warning (before the limit) from its stop.
    pub fn severity(&self, title: &str) -> Severity {
        match self {
            Cause::Panic | Cause::Model | Cause::Config => Severity::Critical,
            Cause::Budget if title.contains("is spent") => Severity::Critical,
            Cause::Gap | Cause::Proposal | Cause::Consolidation => Severity::Info,
            _ => Severity::Warning,
        }
    }

    /// The cause of the job `name`'s flares.
    pub fn job(name: &str) -> Cause {
        Cause::Job(name.to_string())
    }

    /// Its word, as files and notices carry it.
    pub fn as_str(&self) -> &str {
        match self {
            Cause::Outage => "outage",
            Cause::Model => "model",
            Cause::Healer => "healer",
            Cause::Panic => "panic",
            Cause::Context => "context",
            Cause::Layer1 => "layer1",
            Cause::State => "state",
            Cause::Gap => "gap",
            Cause::Tools => "tools",
            Cause::Brake => "brake",
            Cause::Collab => "collab",
            Cause::Consolidation => "consolidation",
            Cause::QuietFailure => "quiet-failure",
            Cause::Budget => "budget",
            Cause::Push => "push",
            Cause::Peer => "peer",
            Cause::Config => "config",
            Cause::Disk => "disk",
            Cause::Request => "request",
            Cause::Proposal => "proposal",
            Cause::Mail => "mail",
            Cause::Job(_) | Cause::Unknown(_) => "",
        }
    }

    /// The cause a word names (any word: one this hearth does not make is
    /// [`Cause::Unknown`]).
    pub fn parse(word: &str) -> Cause {
        if let Some(job) = word.strip_prefix(JOB_PREFIX) {
            if !job.is_empty() {
                return Cause::Job(job.to_string());
            }
        }
        Cause::KNOWN
            .iter()
            .find(|c| c.as_str() == word)
            .cloned()
            .unwrap_or_else(|| Cause::Unknown(word.to_string()))
    }

    /// Every cause that is one word (all but a job's and an unknown one).
    pub const KNOWN: [Cause; 21] = [
        Cause::Outage,
        Cause::Model,
        Cause::Healer,
        Cause::Panic,
        Cause::Context,
        Cause::Layer1,
        Cause::State,
        Cause::Gap,
        Cause::Tools,
        Cause::Brake,
        Cause::Collab,
        Cause::Consolidation,
        Cause::QuietFailure,
        Cause::Budget,
        Cause::Push,
        Cause::Peer,
        Cause::Config,
        Cause::Disk,
        Cause::Request,
        Cause::Proposal,
        Cause::Mail,
    ];
}

/// A job's cause is `job-<name>` on disk.
const JOB_PREFIX: &str = "job-";

impl fmt::Display for Cause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Cause::Job(name) => write!(f, "{JOB_PREFIX}{name}"),
            Cause::Unknown(word) => f.write_str(word),
            known => f.write_str(known.as_str()),
        }
    }
}

impl Serialize for Cause {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Cause {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Cause, D::Error> {
        let word = String::deserialize(d)?;
        Ok(Cause::parse(&word))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_cause_reads_back_as_itself_from_its_word() {
        let mut all = Cause::KNOWN.to_vec();
        all.push(Cause::job("nightly-notes"));
        all.push(Cause::Unknown("from-a-newer-hearth".into()));
        for cause in all {
            let word = cause.to_string();
            assert!(!word.is_empty(), "{cause:?} has no word");
            assert_eq!(Cause::parse(&word), cause, "{word}");
            let json = serde_json::to_string(&cause).unwrap();
            assert_eq!(json, format!("\"{word}\""));
            assert_eq!(serde_json::from_str::<Cause>(&json).unwrap(), cause);
        }
        assert_eq!(Cause::parse("job-"), Cause::Unknown("job-".into()));
    }

    /// The name of each clearing, as code that raises it spells it. The
    /// `match` makes a new clearing a compile error here until it is
    /// listed, and the test below then looks for the code that raises it.
    fn spelling(clearing: Clearing<'_>) -> &'static str {
        match clearing {
            Clearing::GoodTick => "Clearing::GoodTick",
            Clearing::UsefulTick => "Clearing::UsefulTick",
            Clearing::BudgetAllowsTicks => "Clearing::BudgetAllowsTicks",
            Clearing::PushWorks => "Clearing::PushWorks",
            Clearing::PeersReadable => "Clearing::PeersReadable",
            Clearing::ConfigParses => "Clearing::ConfigParses",
            Clearing::DiskHasRoom => "Clearing::DiskHasRoom",
            Clearing::NoRequestWaits => "Clearing::NoRequestWaits",
            Clearing::NoProposalWaits => "Clearing::NoProposalWaits",
            Clearing::MailRead => "Clearing::MailRead",
            Clearing::JobDone(_) => "Clearing::JobDone(",
        }
    }

    /// A cause whose clearing no code raises would leave its incident open
    /// for ever: every clearing a cause names must be raised outside this
    /// table.
    #[test]
    fn every_cause_is_cleared_by_something_hearth_raises() {
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut code = String::new();
        for entry in walkdir::WalkDir::new(&src).into_iter().flatten() {
            let path = entry.path();
            if path.extension().is_some_and(|e| e == "rs") && !path.ends_with("mailbox/cause.rs") {
                let text = std::fs::read_to_string(path).unwrap();
                for line in text.lines().filter(|l| !l.trim_start().starts_with("//")) {
                    code.push_str(line);
                    code.push('\n');
                }
            }
        }
        let mut all = Cause::KNOWN.to_vec();
        all.push(Cause::job("x"));
        all.push(Cause::Unknown("x".into()));
        for cause in all {
            let raised = spelling(cause.cleared_by());
            assert!(
                code.contains(raised),
                "{cause}'s incident is closed by {raised}, which no code in src/ raises"
            );
        }
    }

    #[test]
    fn a_budget_stop_is_critical_and_its_warning_is_not() {
        assert_eq!(
            Cause::Budget.severity("the daily budget is spent"),
            Severity::Critical
        );
        assert_eq!(
            Cause::Budget.severity("the daily budget will run out today"),
            Severity::Warning
        );
        assert_eq!(Cause::job("a").severity("x"), Severity::Warning);
    }
}
