//! Where notices go: ntfy (JSON publishing, so any title survives), a
//! webhook (the notice as JSON, signed with HMAC-SHA256 under a key from
//! the environment, redirects not followed), and mail through the host's
//! `sendmail`. Each send is bounded in time and says what the receiver
//! answered; nothing here retries (the courier does).

use std::time::Duration;

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

use super::{Notice, Severity};
use crate::config::notify::NotifyConfig;

/// How long one send may take.
pub const SEND_TIMEOUT: Duration = Duration::from_secs(15);

/// The header that carries the webhook's signature: `sha256=<hex>` of the
/// body under the key.
pub const SIGNATURE_HEADER: &str = "X-Hearth-Signature";

/// The secrets the targets need, read from the environment by the binary
/// (the library never reads it).
#[derive(Clone, Default)]
pub struct Secrets {
    /// ntfy's access token.
    pub ntfy_token: Option<String>,
    /// The webhook's signing key.
    pub webhook_secret: Option<String>,
    /// What `sendmail` may be given of the environment: only
    /// [`crate::process::ALWAYS_PASSED`], never a key.
    pub passed: std::collections::BTreeMap<String, String>,
}

impl std::fmt::Debug for Secrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never printed, whatever prints this.
        f.debug_struct("Secrets")
            .field("ntfy_token", &self.ntfy_token.as_ref().map(|_| "…"))
            .field("webhook_secret", &self.webhook_secret.as_ref().map(|_| "…"))
            .field("passed", &self.passed.keys().collect::<Vec<_>>())
            .finish()
    }
}

/// One place notices go.
#[derive(Debug, Clone)]
pub enum Destination {
    /// An ntfy topic.
    Ntfy {
        /// The topic's URL.
        url: String,
        /// Its token, if any.
        token: Option<String>,
    },
    /// A URL that gets the notice as signed JSON.
    Webhook {
        /// Where.
        url: String,
        /// The signing key (none: nothing is sent unsigned).
        secret: Option<String>,
        /// The variable it should come from, to say so.
        secret_env: String,
    },
    /// An address, through `sendmail`.
    Email {
        /// To whom.
        to: String,
        /// The program.
        sendmail: String,
        /// What it is given of the environment (never a key).
        passed: std::collections::BTreeMap<String, String>,
    },
}

impl Destination {
    /// Its name in `state/notify.jsonl`, status and `hearth notify test`.
    pub fn name(&self) -> &'static str {
        match self {
            Destination::Ntfy { .. } => "ntfy",
            Destination::Webhook { .. } => "webhook",
            Destination::Email { .. } => "email",
        }
    }

    /// Sends `notice`; what the receiver answered, or why it failed.
    pub fn send(&self, notice: &Notice) -> Result<String, Undelivered> {
        match self {
            Destination::Ntfy { url, token } => ntfy(url, token.as_deref(), notice),
            Destination::Webhook {
                url,
                secret,
                secret_env,
            } => match secret {
                Some(secret) => webhook(url, secret.as_bytes(), notice),
                None => Err(Undelivered::Misconfigured(format!(
                    "{secret_env} is not set: the webhook gets nothing unsigned (set it in the \
                     service's environment, e.g. /etc/hearth/env)"
                ))),
            },
            Destination::Email {
                to,
                sendmail,
                passed,
            } => email(sendmail, to, notice, passed),
        }
    }
}

/// Why a notice did not reach a target. Each is tried again until the
/// notice is too old; the kinds tell the operator where to look.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Undelivered {
    /// The receiver answered, and not with 2xx (a redirect is not followed).
    #[error("{status}: {body}")]
    Refused {
        /// The HTTP status.
        status: String,
        /// The start of what it said.
        body: String,
    },
    /// No answer: the request timed out, could not connect, or failed.
    #[error("{0}")]
    Unreachable(String),
    /// `[notify]` or the environment does not let it be sent.
    #[error("{0}")]
    Misconfigured(String),
    /// The local mailer did not take the message.
    #[error("{0}")]
    Mailer(String),
}

/// The targets `[notify]` names, with their secrets.
pub fn targets(config: &NotifyConfig, secrets: &Secrets) -> Vec<Destination> {
    let mut out = Vec::new();
    if !config.ntfy.is_empty() {
        out.push(Destination::Ntfy {
            url: config.ntfy.clone(),
            token: secrets.ntfy_token.clone(),
        });
    }
    if !config.webhook.is_empty() {
        out.push(Destination::Webhook {
            url: config.webhook.clone(),
            secret: secrets.webhook_secret.clone(),
            secret_env: config.webhook_secret_env.clone(),
        });
    }
    if !config.email.is_empty() {
        out.push(Destination::Email {
            to: config.email.clone(),
            sendmail: config.sendmail.clone(),
            passed: secrets.passed.clone(),
        });
    }
    out
}

fn client() -> Result<reqwest::blocking::Client, Undelivered> {
    reqwest::blocking::Client::builder()
        .timeout(SEND_TIMEOUT)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| Undelivered::Misconfigured(format!("no HTTP client: {e}")))
}

/// What an HTTP answer means: 2xx is delivered, anything else is not
/// (a redirect too: it is not followed).
fn answered(response: reqwest::blocking::Response) -> Result<String, Undelivered> {
    let status = response.status();
    if status.is_success() {
        Ok(status.to_string())
    } else {
        let body: String = response
            .text()
            .unwrap_or_default()
            .chars()
            .take(200)
            .collect();
        Err(Undelivered::Refused {
            status: status.to_string(),
            body: body.trim().to_string(),
        })
    }
}

/// An error without the URL in it (a topic or a ping's path is a secret
/// of sorts): what kind of failure it was.
fn failed(e: reqwest::Error) -> Undelivered {
    let what = if e.is_timeout() {
        "timed out"
    } else if e.is_connect() {
        "could not connect"
    } else {
        "request failed"
    };
    Undelivered::Unreachable(format!("{what}: {}", e.without_url()))
}

/// ntfy's JSON publishing: POST to the server's root with the topic in the
/// body, so a title in any script arrives whole (headers are ASCII).
fn ntfy(url: &str, token: Option<&str>, notice: &Notice) -> Result<String, Undelivered> {
    let (root, topic) = url.trim_end_matches('/').rsplit_once('/').ok_or_else(|| {
        Undelivered::Misconfigured(format!("[notify] ntfy = {url:?} names no topic"))
    })?;
    let priority = match notice.severity {
        Severity::Critical => 5,
        Severity::Warning => 4,
        Severity::Info => 3,
    };
    let message: String = notice.body.chars().take(4000).collect();
    let mut body = serde_json::json!({
        "topic": topic,
        "title": format!("{}: {}", notice.home, notice.title),
        "message": message,
        "priority": priority,
        "tags": ["hearth", notice.kind, notice.state.as_str()],
    });
    if let Some(link) = &notice.link {
        // ntfy opens it when the notification is tapped.
        body["click"] = serde_json::Value::String(link.clone());
    }
    let mut request = client()?.post(format!("{root}/")).json(&body);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    request.send().map_err(failed).and_then(answered)
}

/// The signature of `body` under `secret`: `sha256=<hex>`.
pub fn signature(secret: &[u8], body: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret).expect("HMAC takes a key of any length");
    mac.update(body);
    let digest = mac.finalize().into_bytes();
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256={hex}")
}

fn webhook(url: &str, secret: &[u8], notice: &Notice) -> Result<String, Undelivered> {
    let body = serde_json::to_vec(notice).expect("a notice serialises");
    client()?
        .post(url)
        .header("Content-Type", "application/json")
        .header(SIGNATURE_HEADER, signature(secret, &body))
        .body(body)
        .send()
        .map_err(failed)
        .and_then(answered)
}

/// Mail through `sendmail -t -i`: the headers name the recipient, the
/// message is on stdin; its exit status says whether it was taken.
fn email(
    sendmail: &str,
    to: &str,
    notice: &Notice,
    passed: &std::collections::BTreeMap<String, String>,
) -> Result<String, Undelivered> {
    let subject: String = format!("[hearth {}] {}", notice.home, notice.title)
        .chars()
        .filter(|c| !c.is_control())
        .take(200)
        .collect();
    let open = notice
        .link
        .as_ref()
        .map_or(String::new(), |link| format!("\n\nOpen: {link}"));
    let message = format!(
        "To: {to}\nSubject: {subject}\nContent-Type: text/plain; charset=utf-8\n\
         X-Hearth-Notice: {}\n\n{}{open}\n\n-- \nhearth, {} ({}, {})\n",
        notice.id,
        notice.body,
        notice.home,
        notice.severity.as_str(),
        notice.state.as_str()
    );
    match crate::process::sendmail(sendmail, &message, passed, SEND_TIMEOUT) {
        Ok(()) => Ok(format!("{sendmail} took it")),
        Err(e @ crate::process::NotMailed::NotStarted { .. }) => Err(Undelivered::Misconfigured(
            format!("{e}; set [notify] sendmail"),
        )),
        Err(crate::process::NotMailed::Refused(said)) => Err(Undelivered::Mailer(said)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_signature_is_hmac_sha256_of_the_body_in_hex() {
        // RFC 4231, test case 2.
        assert_eq!(
            signature(b"Jefe", b"what do ya want for nothing?"),
            "sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }
}
