//! Fetching the peers on other hosts (`[peers] NAME = "git://…"`), on a
//! thread of its own: a slow or dead remote never delays a tick, as the
//! push thread's never does. Each round fetches every such peer's `main`
//! into its mirror (`.hearth/peers/NAME.git`) and writes what came of it
//! beside it (`.hearth/peers/NAME.json`): when it last worked, since when
//! it fails and why, where the peer's branch is, and whether its history
//! was rewritten. A fetch that moves the mirror's branch changes a
//! directory the supervisor watches, which wakes it to take the handoffs.

use crate::mailbox::cause::Cause;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};

use super::peers::mirror_dir;
use super::wake::Wake;
use crate::clock::Clock;
use crate::config::collab::PeerAt;
use crate::config::Config;
use crate::home::Home;
use crate::json_file;
use crate::repo::{RemoteCredentials, Repo};
use crate::run_state::peer_fetch::PeerFetch;

/// The fetching threads, while there are remote peers: one per peer, so
/// a peer that hangs until `fetch_timeout_s` delays no other's fetch, and
/// one that keeps them, started and ended as `[peers]` changes.
pub(super) struct Fetcher {
    /// No new fetch starts.
    stop: Arc<AtomicBool>,
    /// The fetches in progress are stopped (their `git` killed).
    cancel: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// How soon a fetch follows one that failed.
const RETRY_FAILING: Duration = Duration::from_secs(5);

/// How often the keeper of the threads reads `[peers]` again.
const KEEPER_EVERY: Duration = Duration::from_secs(1);

/// What one fetch of a peer brought.
enum PeerNews {
    /// Its branch moved: there may be handoffs to take.
    Moved,
    /// Nothing new.
    Nothing,
    /// It could not be fetched.
    Failing,
}

/// How long the supervisor, stopping, lets a fetch in progress finish
/// before it stops it (the service's stop timeout is 30 s).
const FINISH_GRACE: Duration = Duration::from_secs(5);

/// How the peers are fetched: `[peers]`'s remote names and settings, read
/// again from `hearth.toml` before each fetch.
struct FetchRound {
    peers: Vec<(String, String)>,
    every: Duration,
    timeout: Duration,
    flare_after: chrono::Duration,
}

/// What every fetching thread shares.
#[derive(Clone)]
struct Shared {
    root: PathBuf,
    credentials: RemoteCredentials,
    clock: Clock,
    waker: Sender<Wake>,
    stop: Arc<AtomicBool>,
    cancel: Arc<AtomicBool>,
}

impl Fetcher {
    /// Starts fetching when `config` names a remote peer. Each mirror is
    /// made first, so the supervisor can watch it from the start.
    pub(super) fn start(
        home: &Home,
        config: &Config,
        credentials: RemoteCredentials,
        clock: Clock,
        waker: Sender<Wake>,
    ) -> Option<Fetcher> {
        let first = FetchRound::of(config);
        if first.peers.is_empty() {
            return None;
        }
        for (peer, _) in &first.peers {
            if let Err(e) = Repo::mirror(&mirror_dir(home, peer)) {
                tracing::warn!("peer {peer}: its mirror could not be made: {e}");
            }
        }
        let shared = Shared {
            root: home.root().to_path_buf(),
            credentials,
            clock,
            waker,
            stop: Arc::new(AtomicBool::new(false)),
            cancel: Arc::new(AtomicBool::new(false)),
        };
        let (stop, cancel) = (Arc::clone(&shared.stop), Arc::clone(&shared.cancel));
        let thread = std::thread::Builder::new()
            .name("hearth-fetch".into())
            .spawn(move || keep_fetching(&shared, first))
            .inspect_err(|e| tracing::warn!("the fetching thread did not start: {e}"))
            .ok()?;
        Some(Fetcher {
            stop,
            cancel,
            thread: Some(thread),
        })
    }

    /// Stops after the fetch in progress, if one is and it ends within
    /// [`FINISH_GRACE`]; else stops that fetch (it is not recorded: the
    /// peer did not fail, this supervisor stopped).
    pub(super) fn finish(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let Some(thread) = self.thread.take() else {
            return;
        };
        let deadline = std::time::Instant::now() + FINISH_GRACE;
        while !thread.is_finished() && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        self.cancel.store(true, Ordering::SeqCst);
        let _ = thread.join();
    }
}

/// Keeps one fetching thread per remote peer in `[peers]` (read again
/// every [`KEEPER_EVERY`]) until the supervisor stops; then waits for them.
fn keep_fetching(shared: &Shared, first: FetchRound) {
    let Ok(home) = Home::at(&shared.root) else {
        return;
    };
    let mut threads: std::collections::BTreeMap<(String, String), std::thread::JoinHandle<()>> =
        std::collections::BTreeMap::new();
    let mut round = first;
    while !shared.stop.load(Ordering::SeqCst) {
        threads.retain(|_, thread| !thread.is_finished());
        for (peer, url) in &round.peers {
            let key = (peer.clone(), url.clone());
            if threads.contains_key(&key) {
                continue;
            }
            let (mine, peer, url) = (shared.clone(), peer.clone(), url.clone());
            let started = std::thread::Builder::new()
                .name(format!("hearth-fetch-{peer}"))
                .spawn(move || fetch_one_peer(&mine, &peer, &url));
            match started {
                Ok(thread) => drop(threads.insert(key, thread)),
                Err(e) => tracing::warn!("the fetching thread of a peer did not start: {e}"),
            }
        }
        sleep_unless(&shared.stop, KEEPER_EVERY);
        // hearth.toml is read again: a peer added is fetched from now on; one
        // removed (or moved to another URL) ends its thread at its next turn.
        if let Ok(config) = Config::load(&home.config_path()) {
            round = FetchRound::of(&config);
        }
    }
    for (_, thread) in threads {
        let _ = thread.join();
    }
}

/// Fetches `peer` from `url` every `fetch_every_s` (sooner while it fails)
/// until the supervisor stops, or `[peers]` no longer names it so.
fn fetch_one_peer(shared: &Shared, peer: &str, url: &str) {
    let Ok(home) = Home::at(&shared.root) else {
        return;
    };
    while !shared.stop.load(Ordering::SeqCst) {
        let Ok(config) = Config::load(&home.config_path()) else {
            // A broken hearth.toml: the last settings stand; try later.
            sleep_unless(&shared.stop, RETRY_FAILING);
            continue;
        };
        let round = FetchRound::of(&config);
        if !round.peers.iter().any(|(p, u)| p == peer && u == url) {
            return;
        }
        let fetching = Fetching {
            home: &home,
            credentials: &shared.credentials,
            timeout: round.timeout,
            cancel: &shared.cancel,
        };
        let news = fetching.one(peer, url, round.flare_after, shared.clock.now());
        // A peer that cannot be reached is tried again sooner: its return
        // is seen within seconds, not an interval.
        let wait = match news {
            // The mirror's watch may not be set up yet.
            PeerNews::Moved => {
                let _ = shared.waker.send(Wake::Peer);
                round.every
            }
            PeerNews::Failing => round.every.min(RETRY_FAILING),
            PeerNews::Nothing => round.every,
        };
        sleep_unless(&shared.stop, wait);
    }
}

/// Sleeps `wait`, or less when `stop` turns true.
fn sleep_unless(stop: &AtomicBool, wait: Duration) {
    let mut slept = Duration::ZERO;
    while slept < wait && !stop.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(100));
        slept += Duration::from_millis(100);
    }
}

impl FetchRound {
    /// The peers on other hosts (name, URL), how often to fetch them, how
    /// long one fetch may take, and after how long of failing to flare.
    fn of(config: &Config) -> FetchRound {
        let peers = config
            .peers
            .iter()
            .filter_map(|(name, at)| match at {
                PeerAt::Url(url) => Some((name.clone(), url.clone())),
                PeerAt::Path(_) => None,
            })
            .collect();
        FetchRound {
            peers,
            every: Duration::from_secs(config.peers.fetch_every_s.max(1)),
            timeout: Duration::from_secs(config.peers.fetch_timeout_s.max(1)),
            flare_after: chrono::Duration::minutes(config.peers.fetch_flare_min as i64),
        }
    }
}

/// One fetch's surroundings.
struct Fetching<'a> {
    home: &'a Home,
    credentials: &'a RemoteCredentials,
    timeout: Duration,
    cancel: &'a AtomicBool,
}

impl Fetching<'_> {
    /// Fetches `peer` once and records what came of it; a failing spell as
    /// long as `flare_after` is flared, once. What it brought.
    fn one(
        &self,
        peer: &str,
        url: &str,
        flare_after: chrono::Duration,
        now: DateTime<Utc>,
    ) -> PeerNews {
        let home = self.home;
        let mut state = PeerFetch::load(home, peer).unwrap_or_default();
        state.peer = peer.to_string();
        // Kept and shown without a password (an old state file's is
        // masked when shown).
        state.url = crate::config::secret_url::masked(url);
        let fetched = Repo::mirror(&mirror_dir(home, peer))
            .and_then(|m| m.fetch_peer(url, self.credentials, self.timeout, self.cancel));
        if fetched.is_err() && self.cancel.load(Ordering::SeqCst) {
            return PeerNews::Nothing; // stopped with the supervisor: no word on the peer
        }
        let news = match &fetched {
            Ok(f) if f.head.is_some() && f.head != state.head => PeerNews::Moved,
            Ok(_) => PeerNews::Nothing,
            Err(_) => PeerNews::Failing,
        };
        match fetched {
            Ok(fetched) => {
                if fetched.rewritten {
                    tracing::warn!(
                        "peer {peer}: its history was rewritten (now {}); what was taken from \
                         it stays taken, and nothing of it is taken twice",
                        fetched.head.as_deref().unwrap_or("no branch")
                    );
                    state.rewritten_at = Some(now);
                }
                if state.failing_since.take().is_some() {
                    tracing::info!("peer {peer}: fetching works again");
                }
                state.last_ok = Some(now);
                state.last_error = None;
                state.flared = false;
                state.head = fetched.head;
            }
            Err(e) => {
                if state.failing_since.is_none() {
                    tracing::warn!("peer {peer}: fetching {} failed: {e}", state.url);
                    state.failing_since = Some(now);
                }
                state.last_error = Some(e.to_string());
                let since = state.failing_since.unwrap_or(now);
                if !state.flared && now - since >= flare_after {
                    state.flared = flare(home, &state, now);
                }
            }
        }
        if let Err(e) = json_file::save(&PeerFetch::path(home, peer), &state) {
            tracing::warn!("peer {peer}: what the fetch said could not be kept: {e}");
        }
        news
    }
}

/// One flare for a failing spell: which peer, since when, what the fetch
/// said, and what waits meanwhile. Whether it was posted.
fn flare(home: &Home, state: &PeerFetch, now: DateTime<Utc>) -> bool {
    let since = state
        .failing_since
        .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
        .unwrap_or_default();
    let body = format!(
        "Fetching peer {} from {} has failed since {since}: {}\n\nIts handoffs wait until a \
         fetch works again; nothing is lost, and this agent goes on ticking. Check that the \
         peer's host serves its repository (`git ls-remote {}`) and that this host may reach \
         it. `hearth status` shows the peer's state; this flare is sent once a failing spell.\n",
        state.peer,
        crate::config::secret_url::masked(&state.url),
        state.last_error.as_deref().unwrap_or("?"),
        crate::config::secret_url::masked(&state.url)
    );
    let subject = format!("peer {} cannot be fetched", state.peer);
    let letter = crate::mailbox::outbox::Letter::flare(Cause::Peer, subject, body);
    match crate::mailbox::outbox::post(home, &letter, now) {
        Ok(_) => true,
        Err(e) => {
            tracing::warn!("the peer flare could not be written: {e}");
            false
        }
    }
}
