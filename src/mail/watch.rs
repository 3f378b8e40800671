//! The mail watch: a thread of the supervisor that keeps a connection to
//! the operator's mailbox, takes each new mail into the inbox (which
//! wakes a tick), marks it seen on the server only once committed, and
//! waits with IDLE (or a look every `[mail] poll_s` where the server has
//! none). A lost connection is made again with backoff; a spell of
//! failures is said in `hearth status` and flared once.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use super::imap::{self, Session, Unreached};
use super::take;
use crate::clock::Clock;
use crate::config::mail::MailConfig;
use crate::home::Home;
use crate::mailbox::cause::Cause;
use crate::mailbox::outbox::{self, Letter};
use crate::run_state::mail::MailWatch;

/// The longest wait between attempts to reach the server.
const MAX_BACKOFF: Duration = Duration::from_secs(300);

/// What the watch is given by the supervisor.
pub struct MailWatching {
    /// `[mail]`.
    pub config: MailConfig,
    /// The password, from the environment variable `password_env`.
    pub password: Option<String>,
    /// A PEM file of the operator's own CA (`SSL_CERT_FILE`).
    pub extra_roots: Option<PathBuf>,
    /// The supervisor's clock.
    pub clock: Clock,
    /// The first wait after a failure (doubling to five minutes).
    pub backoff: Duration,
}

/// The watch's thread, stopped when dropped.
pub struct MailThread {
    stop: Arc<AtomicBool>,
    handle: Option<std::thread::JoinHandle<()>>,
}

impl Drop for MailThread {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // An IDLE may wait up to `poll_s`: the thread is left to end with
        // the process rather than hold the supervisor's exit.
        drop(self.handle.take());
    }
}

/// Starts the watch of `[mail]` on `home`, or says why it cannot run.
pub fn start(home: &Home, watching: MailWatching) -> Option<MailThread> {
    if !watching.config.enabled() {
        return None;
    }
    if let Some(problem) = watching.config.problem() {
        tracing::warn!("{problem}; mail is not watched");
        return None;
    }
    let stop = Arc::new(AtomicBool::new(false));
    let home = home.clone();
    let stopping = Arc::clone(&stop);
    let handle = std::thread::Builder::new()
        .name("mail".into())
        .spawn(move || watch(&home, &watching, &stopping))
        .ok()?;
    Some(MailThread {
        stop,
        handle: Some(handle),
    })
}

/// Connects, takes, waits; again, until stopped.
fn watch(home: &Home, watching: &MailWatching, stop: &AtomicBool) {
    let config = &watching.config;
    let mut state = MailWatch {
        server: config.imap.clone(),
        ..MailWatch::load(home).unwrap_or_default()
    };
    state.taken = 0;
    let mut flared = false;
    let mut backoff = watching.backoff;
    while !stop.load(Ordering::SeqCst) {
        let ended = session(home, watching, &mut state, stop);
        let Err(failed) = ended else {
            continue;
        };
        // A failure after a connection that worked starts a new spell.
        if state.failing_since.is_none() {
            flared = false;
            backoff = watching.backoff;
            state.failures = 0;
        }
        let now = watching.clock.now();
        let hint = hint_of(&failed, config);
        tracing::warn!("mail: {failed} (hint: {hint})");
        state.failing_since.get_or_insert(now);
        state.failures += 1;
        state.last_error = Some(format!("{failed} (hint: {hint})"));
        state.save(home);
        if !flared {
            flared = true;
            let letter = Letter::flare(
                Cause::Mail,
                "mail cannot be read",
                format!(
                    "hearth cannot read mail from {}: {failed}.\n\nWhat to do: {hint}\n\nNothing \
                     is lost: mail waits on the server, and hearth tries again (every {} s at \
                     most). This is said once until mail is read again.",
                    config.imap,
                    MAX_BACKOFF.as_secs()
                ),
            );
            if let Err(e) = outbox::post(home, &letter, now) {
                tracing::warn!("mail: the flare could not be posted: {e}");
            }
        }
        sleep_unless_stopped(backoff, stop);
        backoff = (backoff * 2).min(MAX_BACKOFF);
    }
}

/// One connection: logged in, the folder selected, new mail taken, then
/// IDLE (or a poll) and again, until it fails or the watch stops.
fn session(
    home: &Home,
    watching: &MailWatching,
    state: &mut MailWatch,
    stop: &AtomicBool,
) -> Result<(), Unreached> {
    let config = &watching.config;
    let server = config.server().map_err(|why| Unreached::Tls {
        at: config.imap.clone(),
        why,
    })?;
    let password = watching
        .password
        .as_deref()
        .ok_or_else(|| Unreached::Login {
            user: config.user.clone(),
            why: format!(
                "{} is not set in the supervisor's environment",
                config.password_env
            ),
        })?;
    let mut session = imap::log_in(
        &server,
        &config.user,
        password,
        watching.extra_roots.as_deref(),
    )?;
    let (validity, idle) = imap::select(&mut session, &config.folder)?;
    let was_failing = state.failing_since.take().is_some();
    state.failures = 0;
    state.last_ok = Some(watching.clock.now());
    state.last_error = None;
    state.polling = !idle;
    state.save(home);
    if was_failing {
        tracing::info!("mail: {} is read again", config.imap);
    }
    let dns: Option<SocketAddr> = config.dns.parse().ok();
    let wait = Duration::from_secs(config.poll_s.max(1));
    while !stop.load(Ordering::SeqCst) {
        state.taken += take_new(home, &mut session, config, validity, dns, &watching.clock)?;
        state.save(home);
        if idle {
            imap::idle(&mut session, wait)?;
        } else {
            sleep_unless_stopped(wait, stop);
            session.noop()?;
        }
    }
    let _ = session.logout();
    Ok(())
}

/// Takes every mail not taken yet, oldest first, each committed before
/// it is marked seen; how many were taken.
fn take_new(
    home: &Home,
    session: &mut Session,
    config: &MailConfig,
    validity: u32,
    dns: Option<SocketAddr>,
    clock: &Clock,
) -> Result<u64, Unreached> {
    let ledger = match super::ledger::MailLedger::load(home) {
        Ok(ledger) => ledger.for_validity(validity),
        Err(e) => return Err(Unreached::Ledger(format!("{e} (hint: {})", e.hint()))),
    };
    let mut taken = 0;
    for (uid, size) in imap::new_since(session, ledger.next)? {
        let whole = u64::from(size) <= config.max_bytes;
        let Some(raw) = imap::fetch(session, uid, !whole)? else {
            continue;
        };
        let (text, message_id, verdict) =
            take::message_of(&raw, whole, size, config, dns, (validity, uid));
        match take::take(home, (validity, uid), &text, &message_id, clock.now()) {
            Ok(true) => {
                taken += 1;
                tracing::info!("mail: took {} ({verdict})", take::inbox_rel(validity, uid));
            }
            Ok(false) => {}
            Err(e) => {
                tracing::warn!("mail {validity}/{uid}: {e}; left on the server for the next look");
                break;
            }
        }
    }
    let next = super::ledger::MailLedger::load(home)
        .map(|l| l.for_validity(validity).next)
        .unwrap_or(1);
    imap::mark_taken(session, next)?;
    Ok(taken)
}

fn sleep_unless_stopped(wait: Duration, stop: &AtomicBool) {
    let step = Duration::from_millis(100);
    let mut slept = Duration::ZERO;
    while slept < wait && !stop.load(Ordering::SeqCst) {
        std::thread::sleep(step.min(wait - slept));
        slept += step;
    }
}

/// What the operator can do about a failure.
fn hint_of(failed: &Unreached, config: &MailConfig) -> String {
    match failed {
        Unreached::Connect { .. } => format!(
            "check that {} is up and reachable from this host ([mail] imap)",
            config.imap
        ),
        Unreached::Tls { .. } => "a server of your own CA: point SSL_CERT_FILE at the CA's PEM \
                                  in the supervisor's environment"
            .into(),
        Unreached::NoStartTls { .. } => {
            "use imaps:// (TLS from the first byte), or enable STARTTLS on the server".into()
        }
        Unreached::Login { .. } => format!(
            "check [mail] user and the password in {} (the supervisor's environment file)",
            config.password_env
        ),
        Unreached::Imap(_) => format!("check that the folder {:?} exists", config.folder),
        Unreached::Ledger(_) => format!(
            "mend or restore {} (git log -p -- {0}); mail waits on the server meanwhile",
            super::ledger::FILE
        ),
    }
}
