//! The supervisor's side of `notify`, a component with its own state
//! ([`Notices`]): new flares open incidents (or count in open ones),
//! causes that clear resolve them, and the notices go to the targets of
//! `[notify]` through a courier thread, so a slow or dead receiver never
//! delays a tick. The dead-man ping goes out around each tick the same
//! way.

use crate::mailbox::cause::Clearing;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use std::collections::BTreeSet;

use crate::clock::Clock;
use crate::config::notify::NotifyConfig;
use crate::config::web::WebConfig;
use crate::config::Config;
use crate::home::Home;
use crate::notify::ping::{self, Ping};
use crate::notify::reminder::WaitingProposal;
use crate::notify::targets::{self, Destination, Secrets};
use crate::notify::{courier, incidents, Notice};

/// The longest the courier sleeps with nothing due: it also looks at
/// what was queued while no supervisor ran.
const COURIER_IDLE: Duration = Duration::from_secs(30);

/// Where notices go, and how soon a failed one is tried again.
#[derive(Clone, Default)]
pub(super) struct Route {
    targets: Vec<Destination>,
    retry: Duration,
}

impl Route {
    /// The current `[notify]`'s, with the secrets read at start.
    pub(super) fn of(config: &crate::config::Config, secrets: &Secrets) -> Route {
        Route {
            targets: targets::targets(&config.notify, secrets),
            retry: Duration::from_millis(config.notify.retry_ms),
        }
    }

    /// One round of the queue's due deliveries.
    pub(super) fn deliver_due(
        &self,
        home: &Home,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Result<courier::DeliveryRound, incidents::NotifyStateError> {
        courier::deliver_due(home, &self.targets, self.retry, now)
    }
}

/// The thread that delivers queued notices.
pub(super) struct Courier {
    poke: mpsc::Sender<()>,
    route: Arc<Mutex<Route>>,
}

impl Courier {
    /// Starts delivering to `targets`: what is queued already goes first.
    pub(super) fn start(home: &Home, clock: Clock, route: Route) -> Courier {
        let (poke, woken) = mpsc::channel::<()>();
        let route = Arc::new(Mutex::new(route));
        let shared = route.clone();
        let home = home.clone();
        let spawned = std::thread::Builder::new()
            .name("hearth-courier".into())
            .spawn(move || {
                let mut said_failing = false;
                // A pinned clock (HEARTH_NOW) stands still; retries still
                // come after their wait in real time.
                let started = std::time::Instant::now();
                let now = move || {
                    let real = chrono::Duration::from_std(started.elapsed()).unwrap_or_default();
                    if clock.is_pinned() {
                        clock.now() + real
                    } else {
                        clock.now()
                    }
                };
                loop {
                    let now_route = shared.lock().map(|r| r.clone()).unwrap_or_default();
                    let mut wait = COURIER_IDLE;
                    match now_route.deliver_due(&home, now()) {
                        Ok(round) => {
                            said_failing = false;
                            if let Some(next) = round.next_try {
                                let until = (next - now()).to_std().unwrap_or_default();
                                wait = wait.min(until.max(Duration::from_millis(50)));
                            }
                        }
                        // Said once, not once a round.
                        Err(e) if !said_failing => {
                            tracing::error!("notices cannot be delivered: {e}");
                            said_failing = true;
                        }
                        Err(_) => {}
                    }
                    match woken.recv_timeout(wait) {
                        Ok(()) | Err(RecvTimeoutError::Timeout) => {}
                        Err(RecvTimeoutError::Disconnected) => break,
                    }
                }
            });
        if let Err(e) = spawned {
            tracing::error!("cannot start the notice courier ({e}); notices wait queued");
        }
        Courier { poke, route }
    }

    /// Something was queued: deliver now.
    pub(super) fn poke(&self) {
        let _ = self.poke.send(());
    }

    /// `[notify]` changed.
    pub(super) fn set_route(&self, route: Route) {
        if let Ok(mut r) = self.route.lock() {
            *r = route;
        }
    }
}

/// The supervisor's notices, as a component of its own: new flares open
/// incidents (or count in open ones), clearings resolve them, proposals
/// waiting are recalled, and what that says is queued for the courier
/// thread. It owns the courier, the notices a full disk kept from the
/// queue (kept in memory, never dropped), and what it has said of its own
/// troubles; it is told the home, the clock and the current `[notify]`.
pub(super) struct Notices {
    home: Home,
    clock: Clock,
    secrets: Secrets,
    notify: NotifyConfig,
    /// Where the operator's page is (`[web] url`): each notice links to it.
    web: WebConfig,
    courier: Option<Courier>,
    unsent: Vec<Notice>,
    said: BTreeSet<String>,
}

impl Notices {
    /// Starts the courier for `config`'s `[notify]`: what is queued
    /// already goes first.
    pub(super) fn start(home: &Home, clock: Clock, config: &Config, secrets: &Secrets) -> Notices {
        let route = Route::of(config, secrets);
        Notices {
            home: home.clone(),
            clock,
            secrets: secrets.clone(),
            notify: config.notify.clone(),
            web: config.web.clone(),
            courier: Some(Courier::start(home, clock, route)),
            unsent: Vec::new(),
            said: BTreeSet::new(),
        }
    }

    /// `[notify]` changed: the courier delivers by the new one.
    pub(super) fn reconfigure(&mut self, config: &Config) {
        self.web = config.web.clone();
        if config.notify == self.notify {
            return;
        }
        self.notify = config.notify.clone();
        if let Some(c) = &self.courier {
            c.set_route(Route::of(config, &self.secrets));
        }
    }

    /// Stops the courier thread and tries, once and bounded, what waits
    /// for a receiver: a run of `--ticks N` ends before the courier's next
    /// round.
    pub(super) fn finish(&mut self, config: &Config) {
        self.courier = None;
        let route = Route::of(config, &self.secrets);
        if let Err(e) = route.deliver_due(&self.home, self.clock.now()) {
            tracing::warn!("notices could not be delivered at exit: {e}");
        }
    }

    /// Looks at flares not seen before: each opens an incident (a notice
    /// queued for every target) or counts in its open one.
    pub(super) fn new_flares(&mut self) {
        let now = self.clock.now();
        match incidents::notice_new_flares(&self.home, now) {
            Ok(notices) => self.send(notices),
            Err(e) => self.say_problem(format!("{}: {e}", incidents::FILE)),
        }
    }

    /// `clearing` observed (`why`): the open incidents whose cause it
    /// clears close, one notice each.
    pub(super) fn clear(&mut self, clearing: Clearing<'_>, why: &str) {
        let now = self.clock.now();
        self.clear_opened_before(clearing, now, why);
    }

    /// [`Self::clear`], for incidents opened before `before` only.
    pub(super) fn clear_opened_before(
        &mut self,
        clearing: Clearing<'_>,
        before: chrono::DateTime<chrono::Utc>,
        why: &str,
    ) {
        let now = self.clock.now();
        match incidents::resolve_opened_before(&self.home, clearing, before, why, now) {
            Ok(notices) => self.send(notices),
            Err(e) => self.say_problem(format!("{}: {e}", incidents::FILE)),
        }
    }

    /// A reminder of the proposals that have waited `[notify]
    /// proposal_reminder_h` (once per such period), or, with none
    /// waiting, the proposals' incident resolved; and the requests' to run
    /// a tool resolved once none waits.
    pub(super) fn remind_of_proposals(&mut self) {
        if matches!(crate::proposals::requests::waiting(&self.home), Ok(0)) {
            self.clear(Clearing::NoRequestWaits, "no request to run a tool waits");
        }
        let Ok(proposals) = crate::proposals::list(&self.home) else {
            return; // status names a book that cannot be read
        };
        let waiting: Vec<WaitingProposal> = proposals
            .into_iter()
            .filter(|p| p.status.waiting())
            .map(|p| WaitingProposal {
                n: p.n,
                title: p.title,
                created: p.created,
            })
            .collect();
        let every = chrono::Duration::hours(self.notify.proposal_reminder_h as i64);
        let now = self.clock.now();
        match incidents::remind(&self.home, &waiting, every, now) {
            Ok(notices) => self.send(notices),
            Err(e) => self.say_problem(format!("{}: {e}", incidents::FILE)),
        }
    }

    /// Queues `notices` (and any a full disk kept from being queued
    /// before: they wait in memory, never dropped) and wakes the courier.
    fn send(&mut self, notices: Vec<Notice>) {
        for n in &notices {
            tracing::info!("notice: {} {} ({})", n.state.as_str(), n.title, n.incident);
        }
        let page = self.web.base();
        self.unsent
            .extend(notices.into_iter().map(|n| n.linked(page)));
        if self.unsent.is_empty() {
            return;
        }
        let targets = targets::targets(&self.notify, &self.secrets);
        let queued = courier::enqueue(
            &self.home,
            &self.unsent,
            &targets,
            self.notify.min_severity,
            self.clock.now(),
        );
        match queued {
            Ok(n) => {
                self.unsent.clear();
                if let (true, Some(c)) = (n > 0, &self.courier) {
                    c.poke();
                }
            }
            Err(e) => self.say_problem(format!(
                "{}: {e} (the notices are kept until it can be written)",
                courier::QUEUE
            )),
        }
    }

    fn say_problem(&mut self, problem: String) {
        if self.said.insert(problem.clone()) {
            tracing::error!("{problem}; notices are not sent until it is fixed");
        }
    }

    /// The dead-man ping, if `[notify] ping` is set (in the background).
    pub(super) fn ping(&self, what: Ping) {
        ping::send(&self.notify.ping, what);
    }
}
