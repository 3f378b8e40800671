//! One mail taken into the inbox: read, judged, written as an inbox
//! message named by its UIDVALIDITY and UID, and committed with the
//! ledger that counts it — by hearth, never as the operator's hand (the
//! verdict in its front matter says whose words it holds).

use std::net::SocketAddr;

use chrono::{DateTime, Utc};

use super::ledger::{self, MailLedger};
use super::verdict::{self, MailVerdict};
use super::{dkim, letter};
use crate::config::mail::MailConfig;
use crate::home::layout::rel;
use crate::home::lock::CommitLock;
use crate::home::Home;
use crate::repo::{Identity, Repo};

/// Why a mail could not be taken (it stays on the server, not counted:
/// the next look takes it).
#[derive(Debug, thiserror::Error)]
pub enum MailNotTaken {
    /// The ledger cannot be read: nothing is taken until it is mended.
    #[error("{0}; mail is not taken until it is mended (hint: {hint})", hint = .0.hint())]
    MailLedger(#[from] crate::json_file::JsonFileError),
    /// The message or the ledger could not be written.
    #[error(transparent)]
    Write(#[from] crate::atomic::WriteError),
    /// The commit lock could not be taken.
    #[error(transparent)]
    Lock(#[from] crate::home::lock::LockError),
    /// The commit failed.
    #[error(transparent)]
    Repo(#[from] crate::repo::RepoError),
}

/// What the mail `uid` of the folder `validity` is as an inbox message:
/// `raw` whole, or its headers alone when it was too large to fetch.
pub fn message_of(
    raw: &[u8],
    whole: bool,
    size: u32,
    config: &MailConfig,
    dns: Option<SocketAddr>,
    uid: (u32, u32),
) -> (String, String, MailVerdict) {
    let Some(mut read) = letter::read(raw) else {
        let verdict = MailVerdict::Outside {
            why: "the mail could not be read as one".into(),
        };
        let text = format!(
            "---\nchannel: mail\nfrom: \"(unreadable)\"\nverdict: {:?}\nimap_uid: \"{}/{}\"\n---\n\
             [hearth: mail {}/{} ({size} bytes) could not be read as a mail; it is left on the \
             server, unchanged]\n",
            verdict.to_string(),
            uid.0,
            uid.1,
            uid.0,
            uid.1
        );
        return (text, String::new(), verdict);
    };
    let verdict = if !whole {
        read.notes.push(format!(
            "the mail is {size} bytes, past [mail] max_bytes = {}: its headers alone are here, \
             and the whole mail is left on the server",
            config.max_bytes
        ));
        MailVerdict::Outside {
            why: "too large to fetch, so its signature was not checked".into(),
        }
    } else {
        match dkim::check(raw, dns) {
            Ok(signed) => verdict::judge(&read.headers.from, &config.operator, &signed),
            Err(unchecked) => MailVerdict::Outside {
                why: unchecked.to_string(),
            },
        }
    };
    let id = read.headers.message_id.clone();
    (letter::message(&read, &verdict, uid), id, verdict)
}

/// The inbox message mail `uid` of folder `validity` becomes.
pub fn inbox_rel(validity: u32, uid: u32) -> String {
    format!("{}/mail-{validity}-{uid}.md", rel::INBOX)
}

/// Takes mail `uid` as `text` (Message-ID `message_id`) into the inbox:
/// written unless this mail's file is already there (taken before a
/// kill cut its commit), counted in the ledger, and both committed.
pub fn take(
    home: &Home,
    (validity, uid): (u32, u32),
    text: &str,
    message_id: &str,
    now: DateTime<Utc>,
) -> Result<bool, MailNotTaken> {
    let _lock = CommitLock::acquire(home)?;
    let mut ledger = MailLedger::load(home)?.for_validity(validity);
    if uid < ledger.next {
        return Ok(false);
    }
    let rel = inbox_rel(validity, uid);
    let archived_already = home
        .inbox_archive_dir()
        .join(format!("mail-{validity}-{uid}.md"))
        .exists();
    let taken_before = ledger.knows(message_id);
    let write = !home.path(&rel).exists() && !archived_already && !taken_before;
    if write {
        crate::atomic::write(&home.path(&rel), text.as_bytes())?;
    }
    ledger.took(uid, message_id);
    ledger.save(home)?;
    let mut paths = vec![ledger::FILE];
    if home.path(&rel).exists() {
        paths.push(&rel);
    }
    Repo::open(home.root())?.commit(
        &paths,
        &Identity::hearth(),
        &format!(
            "mail: {}",
            if write {
                rel.as_str()
            } else {
                "counted, taken before"
            }
        ),
        now,
    )?;
    Ok(write)
}
