//! `[git] push = true`: after each commit the supervisor asks for a push;
//! a thread of its own pushes, so a slow or dead remote never delays a
//! tick. At most one push is in flight, and requests that arrive meanwhile
//! fold into the next one (a newer commit supersedes a pending one). A
//! failed push is tried again with backoff (1 s doubling to 5 min); after
//! `[git] push_flare_min` minutes of failure, one `push` flare. What
//! happened is kept in `.hearth/push.json` for `hearth status`.

use crate::mailbox::cause::Cause;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};

use crate::clock::Clock;
use crate::home::layout::rel;
use crate::home::Home;
use crate::json_file;
use crate::mailbox::outbox::{self, Letter};
use crate::repo::{RemoteCredentials, Repo};
use crate::run_state::push::PushState;

enum PushRequest {
    Push,
    Finish,
}

/// The supervisor's handle on the pushing thread.
pub struct Pusher {
    tx: Sender<PushRequest>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// How the thread pushes.
pub struct PushSettings {
    /// `[git] remote`.
    pub remote: String,
    /// `[git] push_flare_min`.
    pub flare_after: chrono::Duration,
    /// From the environment.
    pub credentials: RemoteCredentials,
    /// Where "now" comes from.
    pub clock: Clock,
}

const BACKOFF_MIN: Duration = Duration::from_secs(1);
const BACKOFF_MAX: Duration = Duration::from_secs(300);
/// How often a push is tried again while the remote holds commits this
/// home does not (the operator's fix is seen within the hour).
const DIVERGED_RETRY: Duration = Duration::from_secs(3600);
/// How long a push over ssh or https may take before it is stopped and
/// tried again (libgit2's own transports are not bounded).
const PUSH_TIMEOUT: Duration = Duration::from_secs(300);
/// The same, for the last push while the supervisor stops.
const PUSH_TIMEOUT_STOPPING: Duration = Duration::from_secs(10);

impl Pusher {
    /// Starts the pushing thread for `home`.
    pub fn start(home: &Home, settings: PushSettings) -> Pusher {
        let (tx, rx) = std::sync::mpsc::channel();
        let home = home.clone();
        let thread = std::thread::Builder::new()
            .name("hearth-push".into())
            .spawn(move || push_loop(&home, &settings, &rx))
            .map_err(|e| tracing::error!("cannot start pushing ({e}); nothing is pushed"))
            .ok();
        Pusher { tx, thread }
    }

    /// A new commit is there to push.
    pub fn request(&self) {
        let _ = self.tx.send(PushRequest::Push);
    }

    /// Pushes what is pending (one try) and stops the thread; waits at
    /// most `limit` for it.
    pub fn finish(mut self, limit: Duration) {
        let _ = self.tx.send(PushRequest::Finish);
        let Some(thread) = self.thread.take() else {
            return;
        };
        let deadline = std::time::Instant::now() + limit;
        while !thread.is_finished() && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        if thread.is_finished() {
            let _ = thread.join();
        } else {
            tracing::warn!(
                "the last push is still running at exit; it is retried at the next start"
            );
        }
    }
}

fn push_loop(home: &Home, settings: &PushSettings, rx: &Receiver<PushRequest>) {
    let mut state = PushState::load(home).unwrap_or_default();
    state.remote = settings.remote.clone();
    // What was committed while no supervisor ran is pushed at once.
    let mut pending = true;
    let mut finishing = false;
    let mut delay = Duration::ZERO;
    let mut retry_at: Option<Instant> = None;
    loop {
        // Wait for a request, the end of a backoff, or the end.
        while !finishing && (!pending || retry_at.is_some_and(|t| t > Instant::now())) {
            let wait = retry_at
                .filter(|_| pending)
                .map(|t| t.saturating_duration_since(Instant::now()))
                .unwrap_or(Duration::from_secs(3600));
            match rx.recv_timeout(wait) {
                Ok(PushRequest::Push) => pending = true,
                Ok(PushRequest::Finish) | Err(RecvTimeoutError::Disconnected) => finishing = true,
                Err(RecvTimeoutError::Timeout) => {}
            }
        }
        // Everything asked for so far is one push.
        while let Ok(request) = rx.try_recv() {
            match request {
                PushRequest::Push => pending = true,
                PushRequest::Finish => finishing = true,
            }
        }
        if !pending {
            return; // finishing, nothing left to push
        }
        pending = false;
        let now = settings.clock.now();
        let pushed = Repo::open(home.root()).and_then(|repo| {
            // The last push before the supervisor stops fits in the
            // time the supervisor gives it (`upkeep::LAST_PUSH`).
            let timeout = if finishing {
                PUSH_TIMEOUT_STOPPING
            } else {
                PUSH_TIMEOUT
            };
            repo.push(&settings.remote, &settings.credentials, timeout)
        });
        match pushed {
            Ok(commit) => {
                if state.failing_since.is_some() {
                    tracing::info!("pushing to {} works again", settings.remote);
                }
                state.last_ok = Some(now);
                state.last_commit = Some(commit);
                state.failing_since = None;
                state.last_error = None;
                state.flared = false;
                delay = Duration::ZERO;
                retry_at = None;
            }
            Err(e) => {
                delay = failed(home, settings, &mut state, &e, delay, now);
                pending = true;
                retry_at = Some(Instant::now() + delay);
            }
        }
        if let Err(e) = json_file::save(&home.path(rel::PUSH_STATE), &state) {
            tracing::debug!("push state not saved: {e}");
        }
        if finishing {
            return;
        }
    }
}

/// Records a failed push in `state`, flares it when it is time, and says
/// how long to wait before the next try (after `delay`). A remote that
/// holds commits this home does not cannot be fixed by pushing again: it
/// is said at once, with the fix, and tried again only hourly (the
/// operator's fix is seen).
fn failed(
    home: &Home,
    settings: &PushSettings,
    state: &mut PushState,
    e: &crate::repo::RepoError,
    delay: Duration,
    now: DateTime<Utc>,
) -> Duration {
    let since = *state.failing_since.get_or_insert(now);
    let diverged = matches!(e, crate::repo::RepoError::PushDiverged { .. });
    let message = if diverged {
        format!("{e}; {}", e.hint())
    } else {
        e.to_string()
    };
    if state.last_error.as_deref() != Some(message.as_str()) {
        tracing::warn!("push to {} failed (will retry): {message}", settings.remote);
    }
    state.last_error = Some(message.clone());
    if !state.flared && (diverged || now - since >= settings.flare_after) {
        flare(home, settings, &message, since, now);
        state.flared = true;
    }
    if diverged {
        DIVERGED_RETRY
    } else {
        (delay * 2).clamp(BACKOFF_MIN, BACKOFF_MAX)
    }
}

fn flare(
    home: &Home,
    settings: &PushSettings,
    error: &str,
    since: DateTime<Utc>,
    now: DateTime<Utc>,
) {
    let body = format!(
        "Pushing to the remote `{remote}` has failed since {since} UTC:\n\n    {error}\n\n\
         The agent runs on and commits locally; the off-box copy is falling behind. \
         Check the remote's URL (`git -C {home} remote -v`), the network, and the \
         credentials (the SSH agent, or HEARTH_GIT_USERNAME / HEARTH_GIT_PASSWORD in \
         hearth's environment). hearth keeps retrying; `hearth status` shows the last \
         successful push.",
        remote = settings.remote,
        since = since.format("%Y-%m-%d %H:%M"),
        home = home.root().display(),
    );
    let letter = Letter::flare(Cause::Push, "the off-box copy is not being updated", body);
    // Committed here, as hearth's: left for the next look for hand edits,
    // it would be the operator's.
    if let Err(e) = outbox::post(home, &letter, now) {
        tracing::error!("could not write the push flare: {e}");
        return;
    }
    let message = "flare: push (the off-box copy is not being updated)";
    let committed = match Repo::open(home.root()) {
        Ok(repo) => super::commit::commit_outbox(home, &repo, message, now),
        Err(e) => Err(e.into()),
    };
    if let Err(e) = committed {
        tracing::error!("could not commit the push flare: {e}");
    }
}
