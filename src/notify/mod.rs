//! Off the box: what hearth has to tell its operator reaches them where
//! they are, once per cause. A flare opens an *incident* keyed by its kind
//! and its normalised subject; more flares of the same cause count and say
//! nothing; when the cause clears (a tick succeeds, the configuration
//! parses, the budget's day turns, the disk has room) one notice says it is
//! resolved. Notices go to the targets of `[notify]` (ntfy, a signed
//! webhook, mail), queued on disk and retried until each is delivered, off
//! the tick's path; the dead-man ping tells a monitoring service the host
//! is alive.

pub mod acknowledge;
pub mod courier;
pub mod incidents;
pub mod ping;
pub mod reminder;
pub mod targets;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

pub use crate::config::notify::Severity;

/// What a notice says about its incident.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NoticeState {
    /// The first flare of a cause.
    Opened,
    /// The cause cleared.
    Resolved,
    /// Still waiting for the operator (a proposal).
    Reminder,
    /// `hearth notify test`.
    Test,
    /// systemd gave up on the unit (`hearth notify --unit-failed`).
    UnitFailed,
}

impl NoticeState {
    /// The word for it.
    pub fn as_str(self) -> &'static str {
        match self {
            NoticeState::Opened => "opened",
            NoticeState::Resolved => "resolved",
            NoticeState::Reminder => "reminder",
            NoticeState::Test => "test",
            NoticeState::UnitFailed => "unit-failed",
        }
    }
}

/// One notice, as every target gets it (the webhook's JSON body is this,
/// signed whole: its id and time make a replay detectable).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Notice {
    /// Unique per notice: the delivery id.
    pub id: String,
    /// When it was made.
    pub time: DateTime<Utc>,
    /// The home it is about (its directory's name).
    pub home: String,
    /// The flare's cause (`model`, `budget`, `config`…, a word of
    /// [`crate::mailbox::cause::Cause`]), or `test`, `unit-failed`.
    pub kind: String,
    /// How loud.
    pub severity: Severity,
    /// One line.
    pub title: String,
    /// What happened and what to do.
    pub body: String,
    /// The incident's cause key.
    pub incident: String,
    /// Opened, resolved…
    pub state: NoticeState,
    /// Where the operator's page shows it (`[web] url`): a link that
    /// identifies, never authorizes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link: Option<String>,
    /// What its flare asks the operator to decide, which the link names
    /// (kept in the link once made, so not sent or queued itself).
    #[serde(skip)]
    pub about: Option<crate::mailbox::outbox::About>,
}

impl Notice {
    /// A notice made now about `incident`.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        home: &str,
        kind: &str,
        severity: Severity,
        title: String,
        body: String,
        incident: &str,
        state: NoticeState,
        now: DateTime<Utc>,
    ) -> Notice {
        let id = format!(
            "{}-{}-{:016x}",
            now.format("%Y%m%dT%H%M%S%.3fZ"),
            state.as_str(),
            crate::stamp::fnv1a(format!("{incident}\n{title}\n{now}").as_bytes())
        );
        Notice {
            id,
            time: now,
            home: home.to_string(),
            kind: kind.to_string(),
            severity,
            title,
            body,
            incident: incident.to_string(),
            state,
            link: None,
            about: None,
        }
    }

    /// The notice with a link to where `page` (the page's address) shows
    /// it: the proposal or request its flare is about, the job's page for
    /// a job's, else the incidents — so from the phone a proposal is one
    /// tap from its decision.
    pub fn linked(mut self, page: Option<&str>) -> Notice {
        use crate::mailbox::cause::Cause;
        use crate::mailbox::outbox::About;
        self.link = page.map(|base| {
            let view = match (self.about, Cause::parse(&self.kind)) {
                (Some(About::Proposal(n)), _) => format!("/proposals/{n}"),
                (Some(About::Request(n)), _) => format!("/requests/{n}"),
                (None, Cause::Proposal | Cause::Request) => "/proposals".to_string(),
                (None, Cause::Job(name)) => format!(
                    "/jobs/{}",
                    percent_encoding::utf8_percent_encode(
                        &name,
                        percent_encoding::NON_ALPHANUMERIC
                    )
                ),
                (None, _) => "/incidents".to_string(),
            };
            format!("{}{view}", base.trim_end_matches('/'))
        });
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn notice(kind: &str, title: &str) -> Notice {
        Notice::new(
            "alice",
            kind,
            Severity::Info,
            title.into(),
            String::new(),
            kind,
            NoticeState::Opened,
            chrono::DateTime::UNIX_EPOCH,
        )
    }

    #[test]
    fn a_link_leads_to_what_the_notice_is_about() {
        use crate::mailbox::outbox::About;
        let page = Some("https://agent.example/");
        let link = |kind, about| {
            let mut n = notice(kind, "a title that names nothing");
            n.about = about;
            n.linked(page).link.unwrap()
        };
        assert_eq!(
            link("proposal", Some(About::Proposal(3))),
            "https://agent.example/proposals/3"
        );
        assert_eq!(
            link("request", Some(About::Request(2))),
            "https://agent.example/requests/2"
        );
        assert_eq!(
            link("job-digest", None),
            "https://agent.example/jobs/digest"
        );
        assert_eq!(link("model", None), "https://agent.example/incidents");
        assert_eq!(link("proposal", None), "https://agent.example/proposals");
        assert_eq!(notice("model", "x").linked(None).link, None);
    }
}
