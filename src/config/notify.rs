//! `[notify]`: where hearth reaches its operator off the box — ntfy, a
//! signed webhook, mail through the host's `sendmail` — and the dead-man
//! ping a monitoring service expects from a living host. Every target is
//! optional; secrets (the ntfy token, the webhook's key) come from the
//! environment, never from this file.

use serde::{Deserialize, Serialize};

/// How loud a notice is: targets get what is at least `min_severity`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth knowing: a proposal waiting, a problem resolved, a gap.
    #[default]
    Info,
    /// Needs a look soon: an outage, a heal, a full disk, a failing push.
    Warning,
    /// Nothing happens until the operator acts: a panic, a refused key, a
    /// broken configuration, the day's budget spent.
    Critical,
}

impl Severity {
    /// The word for it.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Critical => "critical",
        }
    }
}

/// `[notify]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NotifyConfig {
    /// An ntfy topic URL (`https://ntfy.sh/TOPIC`): one POST per notice.
    pub ntfy: String,
    /// The environment variable holding ntfy's access token, if any.
    pub ntfy_token_env: String,
    /// A URL that gets each notice as JSON, signed with HMAC-SHA256 under
    /// the key in `webhook_secret_env`.
    pub webhook: String,
    /// The environment variable holding the webhook's signing key.
    pub webhook_secret_env: String,
    /// An address that gets each notice by mail, through `sendmail`.
    pub email: String,
    /// The `sendmail` program; it is given the message on stdin.
    pub sendmail: String,
    /// A dead-man URL (healthchecks.io, Uptime Kuma): `/start` when a tick
    /// starts, the URL itself when it ends well, `/fail` otherwise.
    pub ping: String,
    /// The least severity a notice needs to be sent.
    pub min_severity: Severity,
    /// Hours a proposal waits before a reminder (and between reminders).
    pub proposal_reminder_h: u64,
    /// Milliseconds before a failed delivery is tried again; the wait
    /// doubles per failure up to 30 minutes.
    pub retry_ms: u64,
}

impl Default for NotifyConfig {
    fn default() -> NotifyConfig {
        NotifyConfig {
            ntfy: String::new(),
            ntfy_token_env: "HEARTH_NTFY_TOKEN".into(),
            webhook: String::new(),
            webhook_secret_env: "HEARTH_WEBHOOK_SECRET".into(),
            email: String::new(),
            sendmail: "/usr/sbin/sendmail".into(),
            ping: String::new(),
            min_severity: Severity::Info,
            proposal_reminder_h: 24,
            retry_ms: 5_000,
        }
    }
}

impl NotifyConfig {
    /// `[notify]` alone from the text of a `hearth.toml` that does not
    /// load as a whole (the operator must hear that it broke): `None` when
    /// the file has no such table or it does not parse either.
    pub fn salvage(text: &str) -> Option<NotifyConfig> {
        let mut section = None::<String>;
        let mut inside = false;
        for line in text.lines() {
            let trimmed = line.trim();
            if trimmed.starts_with('[') {
                inside = trimmed == "[notify]";
                if inside {
                    section.get_or_insert_with(String::new);
                }
                continue;
            }
            if let (true, Some(section)) = (inside, section.as_mut()) {
                section.push_str(line);
                section.push('\n');
            }
        }
        toml::from_str(&section?).ok()
    }

    /// Whether any target (not counting `[flares] exec`) is set.
    pub fn any_target(&self) -> bool {
        !(self.ntfy.is_empty() && self.webhook.is_empty() && self.email.is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_notify_table_is_salvaged_only_when_it_is_there_and_parses() {
        let whole = "[tick]\ninterval_s = \"x\"\n[notify]\nntfy = \"https://ntfy.sh/t\"\n[boot]\n";
        let salvaged = NotifyConfig::salvage(whole).unwrap();
        assert_eq!(salvaged.ntfy, "https://ntfy.sh/t");
        assert!(NotifyConfig::salvage("[notify]\nntfy = \"https://ntfy.sh/\n").is_none());
        assert!(NotifyConfig::salvage("[tick]\ninterval_s = 5\n").is_none());
        assert!(NotifyConfig::salvage("[notify\nntfy = \"https://ntfy.sh/t\"\n").is_none());
    }
}
