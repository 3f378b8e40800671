//! The way back: the agent's letter that answers a mail goes out by mail,
//! in the same thread (`In-Reply-To`, `References`, `Re:`), from `[mail]
//! from`, through the host's `sendmail` — only when the mail it answers
//! was proven the operator's, and to the operator's own address. A letter
//! answering anyone else is never sent on its own: it is held, and the
//! operator is told with the draft whole. Each letter is sent at most
//! once (counted in the mail ledger before it is given to `sendmail`).

use std::collections::BTreeMap;
use std::time::Duration;

use chrono::{DateTime, Utc};

use super::ledger::MailLedger;
use crate::config::mail::MailConfig;
use crate::home::Home;
use crate::mailbox::outbox::{self, Letter};
use crate::memory::front_matter;

/// How long `sendmail` may take with one reply.
const SEND_TIMEOUT: Duration = Duration::from_secs(30);

/// What became of the letters of a tick.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Replied {
    /// Sent to the operator: the letters.
    pub sent: Vec<String>,
    /// Held, answering someone not proven the operator: the letters.
    pub held: Vec<String>,
    /// Not sent: the letter, and why.
    pub failed: Vec<(String, String)>,
    /// What was written meanwhile, to commit: the ledger, what the
    /// operator is told.
    pub written: Vec<String>,
}

/// A file's front matter as YAML, and its body.
fn parsed(text: &str) -> Option<(yaml_rust2::Yaml, String)> {
    let split = front_matter::split(text).ok()?;
    let docs = yaml_rust2::YamlLoader::load_from_str(split.yaml?).ok()?;
    Some((docs.into_iter().next()?, split.body.trim().to_string()))
}

/// The mail message a letter answers, as the intake wrote it: from the
/// archive (a tick read it) or the inbox (it was given back).
fn answered_mail(home: &Home, in_reply_to: &str) -> Option<yaml_rust2::Yaml> {
    let name = in_reply_to.strip_prefix("inbox/")?;
    if !name.starts_with("mail-") || name.contains('/') {
        return None;
    }
    [home.inbox_archive_dir().join(name), home.path(in_reply_to)]
        .iter()
        .find_map(|path| std::fs::read_to_string(path).ok())
        .and_then(|text| parsed(&text))
        .map(|(front, _)| front)
}

/// A header's value on one line, with nothing a header could be broken by.
fn one_line(value: &str) -> String {
    value
        .chars()
        .filter(|c| !c.is_control())
        .take(400)
        .collect()
}

/// The reply, as `sendmail -t` takes it.
fn compose(
    config: &MailConfig,
    to: &str,
    mail: &yaml_rust2::Yaml,
    letter_id: &str,
    body: &str,
    now: DateTime<Utc>,
) -> String {
    let subject = one_line(mail["subject"].as_str().unwrap_or(""));
    let subject = if subject.to_ascii_lowercase().starts_with("re:") {
        subject
    } else {
        format!("Re: {subject}")
    };
    let message_id = one_line(mail["message_id"].as_str().unwrap_or(""));
    let domain = config.from.rsplit('@').next().unwrap_or("hearth.invalid");
    let thread = if message_id.is_empty() {
        String::new()
    } else {
        format!("In-Reply-To: <{message_id}>\nReferences: <{message_id}>\n")
    };
    format!(
        "From: {from}\nTo: {to}\nSubject: {subject}\nDate: {date}\nMessage-ID: <{id}@{domain}>\n\
         {thread}MIME-Version: 1.0\nContent-Type: text/plain; charset=utf-8\n\
         Content-Transfer-Encoding: 8bit\n\n{body}\n",
        from = one_line(&config.from),
        to = one_line(to),
        date = now.to_rfc2822(),
        id = one_line(letter_id),
    )
}

/// Sends or holds each of `letters` (a tick's, `outbox/…`) that answers a
/// mail; the others are left to the operator's other ways.
pub fn answer(
    home: &Home,
    config: &MailConfig,
    letters: &[String],
    environment: &BTreeMap<String, String>,
    now: DateTime<Utc>,
) -> Replied {
    let mut replied = Replied::default();
    if !config.enabled() {
        return replied;
    }
    for rel in letters {
        let Some((letter, body)) = std::fs::read_to_string(home.path(rel))
            .ok()
            .and_then(|text| parsed(&text))
        else {
            continue;
        };
        let Some(mail) = letter["in_reply_to"]
            .as_str()
            .and_then(|irt| answered_mail(home, irt))
        else {
            continue;
        };
        let id = rel
            .rsplit('/')
            .next()
            .unwrap_or(rel)
            .trim_end_matches(".md");
        match mail["operator"].as_str() {
            Some(to) if config.operator.iter().any(|o| o.eq_ignore_ascii_case(to)) => {
                match send_once(home, config, to, &mail, id, &body, environment, now) {
                    Ok(true) => {
                        replied.sent.push(rel.clone());
                        replied.written.push(super::ledger::FILE.to_string());
                    }
                    Ok(false) => {}
                    Err(why) => {
                        replied.written.extend(flare_unsent(home, rel, &why, now));
                        replied.written.push(super::ledger::FILE.to_string());
                        replied.failed.push((rel.clone(), why));
                    }
                }
            }
            _ => {
                replied.written.extend(hold(home, &mail, rel, &body, now));
                if let Err(e) = note_held(home, rel) {
                    tracing::warn!("mail: {rel} is held but not listed as held: {e}");
                }
                replied.written.push(super::ledger::FILE.to_string());
                replied.held.push(rel.clone());
            }
        }
    }
    replied
}

/// Sends the reply unless the ledger says it was; counted first, so a
/// crash after `sendmail` took it never sends it twice.
#[allow(clippy::too_many_arguments)]
fn send_once(
    home: &Home,
    config: &MailConfig,
    to: &str,
    mail: &yaml_rust2::Yaml,
    letter_id: &str,
    body: &str,
    environment: &BTreeMap<String, String>,
    now: DateTime<Utc>,
) -> Result<bool, String> {
    {
        // The ledger is the watch's too: read and written under the commit
        // lock, as it writes it.
        let _lock = crate::home::lock::CommitLock::acquire(home).map_err(|e| e.to_string())?;
        let mut ledger = MailLedger::load(home).map_err(|e| e.to_string())?;
        if ledger.replied.iter().any(|r| r == letter_id) {
            return Ok(false);
        }
        ledger.reply_counted(letter_id);
        ledger.save(home).map_err(|e| e.to_string())?;
    }
    let message = compose(config, to, mail, letter_id, body, now);
    crate::process::sendmail(&config.sendmail, &message, environment, SEND_TIMEOUT)
        .map(|()| true)
        .map_err(|e| format!("{e} (set [mail] sendmail to the host's sendmail)"))
}

/// Flares a reply `sendmail` did not take: the letter stays in `outbox/`.
fn flare_unsent(home: &Home, rel: &str, why: &str, now: DateTime<Utc>) -> Option<String> {
    let letter = Letter::flare(
        crate::mailbox::cause::Cause::Mail,
        "a reply by mail was not sent",
        format!(
            "The agent's answer to your mail ({rel}) was not sent: {why}.\n\nIt is in \
             outbox/ (`hearth outbox`, the page's /talk); it is not sent again on its own."
        ),
    );
    outbox::post(home, &letter, now)
        .map_err(|e| tracing::warn!("mail: the flare for {rel} could not be posted: {e}"))
        .ok()
}

/// Tells the operator a reply to someone else waits, the draft whole:
/// nothing is sent. Returns what was written.
fn hold(
    home: &Home,
    mail: &yaml_rust2::Yaml,
    rel: &str,
    body: &str,
    now: DateTime<Utc>,
) -> Option<String> {
    let to = mail["from"].as_str().unwrap_or("(unknown)");
    let letter = Letter {
        kind: outbox::Kind::Message,
        subject: format!("A reply to {} was not sent", one_line(to)),
        body: format!(
            "The agent answered mail from {to}, who is not proven to be you ({}). hearth sends \
             the agent's mail only to you, so nothing was sent. The draft, whole ({rel}):\n\n\
             ---\n{body}\n---\n\nTo send it as it is, with your word: `hearth mail send {rel}`.",
            mail["verdict"].as_str().unwrap_or("outside")
        ),
        tick: None,
        in_reply_to: None,
        about: None,
    };
    outbox::post(home, &letter, now)
        .map_err(|e| tracing::warn!("mail: the held reply {rel} could not be said: {e}"))
        .ok()
}

/// Lists `rel` among the replies waiting for the operator's word.
fn note_held(home: &Home, rel: &str) -> Result<(), String> {
    let _lock = crate::home::lock::CommitLock::acquire(home).map_err(|e| e.to_string())?;
    let mut ledger = MailLedger::load(home).map_err(|e| e.to_string())?;
    if !ledger.held.iter().any(|h| h == rel) {
        ledger.held.push(rel.to_string());
        ledger.save(home).map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// A reply waiting for the operator's word: the agent's letter, to whom
/// it would go, and its text whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeldReply {
    /// The agent's letter (`outbox/…`).
    pub letter: String,
    /// The mail's sender it would go to.
    pub to: String,
    /// What the mail check found of that sender.
    pub verdict: String,
    /// The draft, whole.
    pub body: String,
}

/// The replies waiting for the operator's word, oldest first (an
/// unreadable ledger: none, and the watch says why).
pub fn held(home: &Home) -> Vec<HeldReply> {
    let Ok(ledger) = MailLedger::load(home) else {
        return Vec::new();
    };
    ledger
        .held
        .iter()
        .filter_map(|rel| {
            let (letter, body) = parsed(&std::fs::read_to_string(home.path(rel)).ok()?)?;
            let mail = answered_mail(home, letter["in_reply_to"].as_str()?)?;
            Some(HeldReply {
                letter: rel.clone(),
                to: mail["from"].as_str().unwrap_or("(unknown)").to_string(),
                verdict: mail["verdict"].as_str().unwrap_or("").to_string(),
                body,
            })
        })
        .collect()
}

/// Why a held reply was not sent on the operator's word.
#[derive(Debug, thiserror::Error)]
pub enum HeldNotSent {
    /// `[mail]` is off, or has no `from`.
    #[error("[mail] is not set up to send: it needs imap and from")]
    NotSetUp,
    /// The letter is not the agent's answer to a mail.
    #[error(
        "{0} is not the agent's answer to a mail (its in_reply_to names no inbox/mail-… message)"
    )]
    NotAReply(String),
    /// The mail it answers names no address to answer.
    #[error("the mail {0} answers has no sender address to send to")]
    NoAddress(String),
    /// It was sent already.
    #[error("{0} was sent already; it is never sent twice")]
    AlreadySent(String),
    /// The ledger could not be read or written.
    #[error("{0}")]
    Ledger(String),
    /// `sendmail` did not take it.
    #[error(transparent)]
    Mailer(#[from] crate::process::NotMailed),
    /// The record could not be committed (the mail was sent).
    #[error("sent, but not committed: {0}")]
    Repo(#[from] crate::repo::RepoError),
}

/// Sends the agent's letter `rel` (`outbox/…`), held because the mail it
/// answers was not proven the operator's, to that mail's sender — the
/// operator's word, given after reading the draft whole; counted and
/// committed as theirs. Returns the address it went to.
pub fn send_held(
    home: &Home,
    config: &MailConfig,
    rel: &str,
    environment: &BTreeMap<String, String>,
    who: &crate::repo::Identity,
    now: DateTime<Utc>,
) -> Result<String, HeldNotSent> {
    if !config.enabled() || config.from.trim().is_empty() {
        return Err(HeldNotSent::NotSetUp);
    }
    let not_a_reply = || HeldNotSent::NotAReply(rel.to_string());
    let (letter, body) = std::fs::read_to_string(home.path(rel))
        .ok()
        .and_then(|text| parsed(&text))
        .ok_or_else(not_a_reply)?;
    let mail = letter["in_reply_to"]
        .as_str()
        .and_then(|irt| answered_mail(home, irt))
        .ok_or_else(not_a_reply)?;
    let to = mail["from"]
        .as_str()
        .or(mail["operator"].as_str())
        .filter(|a| a.contains('@') && !a.contains(['<', '>', ',', ' ']))
        .ok_or_else(|| HeldNotSent::NoAddress(rel.to_string()))?
        .to_string();
    let id = rel
        .rsplit('/')
        .next()
        .unwrap_or(rel)
        .trim_end_matches(".md");
    let _lock = crate::home::lock::CommitLock::acquire(home)
        .map_err(|e| HeldNotSent::Ledger(e.to_string()))?;
    let mut ledger = MailLedger::load(home).map_err(|e| HeldNotSent::Ledger(e.to_string()))?;
    if ledger.replied.iter().any(|r| r == id) {
        return Err(HeldNotSent::AlreadySent(rel.to_string()));
    }
    ledger.reply_counted(id);
    ledger.held.retain(|h| h != rel);
    ledger
        .save(home)
        .map_err(|e| HeldNotSent::Ledger(e.to_string()))?;
    let message = compose(config, &to, &mail, id, &body, now);
    crate::process::sendmail(&config.sendmail, &message, environment, SEND_TIMEOUT)?;
    crate::repo::Repo::open(home.root())?.commit(
        &[super::ledger::FILE],
        who,
        &format!("mail: {rel} sent to {to} (the operator's word)"),
        now,
    )?;
    Ok(to)
}
