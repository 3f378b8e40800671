//! `hearth status`: is the supervisor running, how did the last tick end,
//! when is the next one due. Reads only what it must and tolerates broken
//! state, because status is what an operator runs when something is wrong.

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::exchange::ledger::{Ledger, TickRecord};
use crate::home::{lock, Home};
use crate::model::cache;
use crate::run_state::phase::{self, Phase};
use crate::tick::spend::SpendByKind;

/// What `hearth status` says.
#[derive(Debug, Clone, Serialize)]
pub struct Status {
    /// The home's root.
    pub home: String,
    /// Whether a supervisor holds the run lock.
    pub running: bool,
    /// Its process id.
    pub pid: Option<u32>,
    /// What it is doing.
    pub phase: Option<Phase>,
    /// When the next tick is due.
    pub next_due: Option<DateTime<Utc>>,
    /// The newest tick in the ledger.
    pub last_tick: Option<TickRecord>,
    /// How many ticks the ledger holds.
    pub ticks_recorded: usize,
    /// Failed ticks in a row now.
    pub failure_streak: usize,
    /// The distinct causes the streak's failed ticks recorded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failure_causes: Vec<String>,
    /// Set when healing is exhausted and the supervisor waits for a human.
    pub panic: Option<crate::healer::state::Panic>,
    /// Problems met while reading state (named by file and line).
    pub problems: Vec<String>,
    /// Dollars spent today (UTC), every door.
    pub spent_today_usd: f64,
    /// The same, by door: ticks, asks, other calls (recall's rerank).
    pub spent_today: crate::exchange::Spent,
    /// `[budget] daily_usd` (0: no limit).
    pub daily_usd: Option<f64>,
    /// The model API outage in progress, if any.
    pub outage: Option<crate::healer::outage::Outage>,
    /// Flares the operator has not marked read, newest first.
    pub unread_flares: Vec<crate::mailbox::flares::Flare>,
    /// `hearth.toml`, when it does not load: the error and what to do.
    pub config_error: Option<String>,
    /// What the pushes did, when `[git] push` was ever on.
    pub push: Option<crate::run_state::push::PushState>,
    /// When the oldest proposal still waiting was made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oldest_proposal: Option<DateTime<Utc>>,
    /// The peers on other hosts: what their fetches have said.
    #[serde(default)]
    pub peers: Vec<crate::run_state::peer_fetch::PeerFetch>,
    /// The peers on this host (`[peers] NAME = "/path"`), as `collab list`
    /// knows them; their problems are among `problems`.
    #[serde(default)]
    pub local_peers: Vec<LocalPeer>,
    /// `[collaborations] founding`, when the home has peers: whether a
    /// peer's new collaboration waits for the operator (`ask`) or not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub founding: Option<crate::config::collab::FoundingPolicy>,
    /// `[notify]` targets whose last delivery failed (retrying, or given
    /// up): the operator is not hearing what they think.
    #[serde(default)]
    pub notify_failing: Vec<crate::notify::courier::Delivery>,
    /// Jobs that have not fired when due, or never will (DESIGN 19).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub jobs_late: Vec<String>,
    /// What runs outside the tool sandbox because the operator said
    /// `sandbox = "none"`: each named with its file.
    pub unsandboxed: Vec<String>,
    /// Commits the remote-tracking branch lacks (with push on).
    pub unpushed: Option<usize>,
    /// What the mail watch last said (with `[mail]` on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mail: Option<crate::run_state::mail::MailWatch>,
    /// The last 24 hours' ticks, priced by kind of token.
    pub last_24h: Option<crate::tick::spend::SpendByKind>,
    /// Of the input sent in the last 24 hours, the part read from the
    /// provider's cache.
    pub cache_hit_ratio_24h: Option<f64>,
    /// Thirty days at the last 24 hours' rate.
    pub projected_month_usd: Option<f64>,
    /// When the interval keeps the provider's cache from paying: why, and
    /// what interval would.
    pub cache_warning: Option<String>,
    /// Proposals waiting for the operator (`hearth proposals`).
    pub proposals_waiting: usize,
    /// Requests to run an acting tool waiting for the operator (`hearth
    /// proposals requests`).
    #[serde(default)]
    pub requests_waiting: usize,
    /// All of the above in one word, with its reasons (`status --check`).
    pub verdict: Checked,
}

/// How the home is, at a glance: what `hearth status --check` exits with
/// (0, 1, 2) and `--json` says.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Health {
    /// Nothing needs the operator.
    #[default]
    Healthy,
    /// Something waits for the operator: unread flares, proposals, a push
    /// or a peer failing, a state file with a problem.
    Attention,
    /// The agent is not working: panicked, not running, its config
    /// broken, its ticks failing, the day's budget spent, the disk full.
    Trouble,
}

/// The health, and why.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Checked {
    /// The one word.
    pub health: Health,
    /// Each reason, worst first.
    pub reasons: Vec<String>,
}

/// Judges `status` (everything but its verdict): a pure function, the one
/// place that says what counts as trouble and what as attention.
pub fn verdict(status: &Status) -> Checked {
    let mut trouble = Vec::new();
    if let Some(panic) = &status.panic {
        trouble.push(format!("panicked: {}", panic.reason));
    }
    if !status.running {
        trouble.push("the supervisor is not running".to_string());
    }
    if let Some(error) = &status.config_error {
        trouble.push(format!("hearth.toml: {error}"));
    } else if status.phase == Some(Phase::ConfigBroken) {
        trouble.push("hearth.toml does not parse".to_string());
    }
    if status.failure_streak > 0 {
        trouble.push(format!("{} failed ticks in a row", status.failure_streak));
    }
    if let Some(daily) = status.daily_usd.filter(|d| *d > 0.0) {
        if status.spent_today_usd >= daily {
            trouble.push(format!(
                "the day's budget is spent (${:.2} of ${daily:.2})",
                status.spent_today_usd
            ));
        }
    }
    if status.phase == Some(Phase::DiskFull) {
        trouble.push("the disk holding the home is full".to_string());
    }
    trouble.extend(status.jobs_late.iter().cloned());
    let mut attention = Vec::new();
    if !status.unread_flares.is_empty() {
        attention.push(format!("{} unread flares", status.unread_flares.len()));
    }
    if status.proposals_waiting > 0 {
        attention.push(format!("{} proposals waiting", status.proposals_waiting));
    }
    if status.requests_waiting > 0 {
        attention.push(format!(
            "{} requests to run a tool waiting",
            status.requests_waiting
        ));
    }
    if status
        .push
        .as_ref()
        .is_some_and(|p| p.failing_since.is_some())
    {
        attention.push("pushing fails".to_string());
    }
    for peer in status.peers.iter().filter(|p| p.failing_since.is_some()) {
        attention.push(format!("peer {} cannot be fetched", peer.peer));
    }
    for target in &status.notify_failing {
        attention.push(format!("notices to {} fail", target.target));
    }
    if !status.problems.is_empty() {
        attention.push(format!("{} problems in the state", status.problems.len()));
    }
    let health = if !trouble.is_empty() {
        Health::Trouble
    } else if !attention.is_empty() {
        Health::Attention
    } else {
        Health::Healthy
    };
    trouble.extend(attention);
    Checked {
        health,
        reasons: trouble,
    }
}

/// A running supervisor on a disk with less room than a tick starts with
/// is paused, whatever its state file says: on a disk full to the last
/// byte it could not write that file to say so.
fn paused_for_room(
    home: &Home,
    running: bool,
    config: Option<&crate::config::Config>,
) -> Option<Phase> {
    let min_free = config.map_or(0, |c| c.tick.min_free_mb.saturating_mul(1 << 20));
    let free = crate::run_state::room::free_bytes(home.root()).ok()?;
    (running && free < min_free.max(crate::run_state::room::FLOOR)).then_some(Phase::DiskFull)
}

/// What a look at the home at `now`, without locking it, says.
pub fn status(home: &Home, now: DateTime<Utc>) -> Status {
    let running = lock::supervisor_running(home);
    let state = phase::read_state(home).filter(|_| running);
    let mut problems = Vec::new();
    let ledger = tally(home, &mut problems);
    let (healer, healer_problem) = crate::healer::state::HealerState::load_or_fresh(home);
    problems.extend(healer_problem);
    worktree_problems(home, &mut problems);
    let config = crate::config::Config::load(&home.config_path());
    let facts = config_facts(home, &config, &mut problems);
    let push = crate::run_state::push::PushState::load(home);
    let price = config.as_ref().ok().and_then(|c| c.price());
    let last_24h = last_day(home, price.as_ref(), now, &mut problems);
    let cache_warning = config.as_ref().ok().and_then(cache_warning);
    let spent = spent_today(home, now, &mut problems);
    let (proposals_waiting, oldest_proposal, requests_waiting) =
        waiting_proposals(home, &mut problems);
    let jobs_late = jobs_late(home, config.as_ref().ok(), now, &mut problems);
    let unsandboxed = sandboxing(home, config.as_ref().ok(), &mut problems);
    let unpushed = push.as_ref().and_then(|p| {
        crate::repo::Repo::open(home.root())
            .ok()
            .and_then(|repo| repo.unpushed(&p.remote))
    });
    let mut status = Status {
        verdict: Checked::default(),
        spent_today_usd: spent.total(),
        spent_today: spent,
        daily_usd: facts.daily_usd,
        outage: healer.outage.clone(),
        unread_flares: crate::mailbox::flares::unread(home),
        config_error: facts.config_error,
        push,
        unpushed,
        mail: mail_watch(home, config.as_ref().ok()),
        failure_streak: healer.streak.len(),
        failure_causes: healer.causes(),
        panic: healer.panic,
        home: home.root().display().to_string(),
        running,
        pid: state
            .as_ref()
            .map(|s| s.pid)
            .or_else(|| running.then(|| lock::supervisor_pid(home)).flatten()),
        phase: paused_for_room(home, running, config.as_ref().ok())
            .or(state.as_ref().map(|s| s.phase)),
        next_due: state.as_ref().and_then(|s| s.next_due),
        last_tick: ledger.last,
        ticks_recorded: ledger.recorded,
        problems,
        cache_hit_ratio_24h: last_24h.and_then(|s| s.hit_ratio()),
        projected_month_usd: last_24h.and_then(|s| s.projected_month()),
        last_24h,
        cache_warning,
        proposals_waiting,
        requests_waiting,
        oldest_proposal,
        peers: facts.peers,
        local_peers: facts.local,
        founding: facts.founding,
        jobs_late,
        unsandboxed,
        notify_failing: crate::notify::courier::last_outcomes(home)
            .into_iter()
            .filter(|d| d.outcome != "delivered")
            .collect(),
    };
    // One problem found two ways (the repository's owner, say, by the
    // scan and by a count of unpushed commits) is said once.
    let mut seen = std::collections::BTreeSet::new();
    status.problems.retain(|p| seen.insert(p.clone()));
    status.verdict = verdict(&status);
    status
}

/// What runs unsandboxed by the operator's word (`sandbox = "none"`), by
/// name and file; and, when anything is to run sandboxed but the sandbox
/// cannot be set up here, that problem with its fix (those do not run).
fn sandboxing(
    home: &Home,
    config: Option<&crate::config::Config>,
    problems: &mut Vec<String>,
) -> Vec<String> {
    let mut unsandboxed = Vec::new();
    let mut sandboxed = 0;
    let (tools, _) = crate::tools::operator::load(home, &crate::tools::BUILTINS);
    for tool in &tools {
        match tool.confinement.is_unsandboxed() {
            true => unsandboxed.push(format!("tool {} ({})", tool.name, tool.file)),
            false => sandboxed += 1,
        }
    }
    let (jobs, _) = crate::jobs::load_all(home);
    for job in jobs.iter().filter(|j| !j.check.is_empty()) {
        match job.confinement.is_unsandboxed() {
            true => unsandboxed.push(format!("the check of job {} ({})", job.name, job.file)),
            false => sandboxed += 1,
        }
    }
    if let Some(flares) = config
        .map(|c| &c.flares)
        .filter(|f| !f.exec.trim().is_empty())
    {
        match flares.sandbox.as_deref() == Some("none") {
            true => unsandboxed.push("[flares] exec (hearth.toml)".into()),
            false => sandboxed += 1,
        }
    }
    if sandboxed > 0 {
        if let Err(e) = crate::jail::available() {
            problems.push(format!(
                "{e}: no tool, check or [flares] exec runs (hint: {})",
                e.hint()
            ));
        }
    }
    unsandboxed
}

/// The jobs that should have run and have not, or never will; the job
/// files that cannot be used go among the problems.
fn jobs_late(
    home: &Home,
    config: Option<&crate::config::Config>,
    now: DateTime<Utc>,
    problems: &mut Vec<String>,
) -> Vec<String> {
    let grace = crate::jobs::overview::late_grace(config);
    let (views, unusable, notes) = crate::jobs::overview::overview(home, now, grace);
    problems.extend(unusable.iter().map(ToString::to_string));
    problems.extend(notes);
    views.iter().filter_map(|v| v.trouble()).collect()
}

/// How many proposals wait, and when the oldest was made.
/// What waits for the operator: proposals (how many, the oldest's age)
/// and requests to run a tool (how many).
fn waiting_proposals(
    home: &Home,
    problems: &mut Vec<String>,
) -> (usize, Option<DateTime<Utc>>, usize) {
    let mut said = |e: crate::proposals::ProposalError| {
        problems.push(format!("{e} (hint: {})", e.hint()));
    };
    let waiting: Vec<DateTime<Utc>> = crate::proposals::list(home)
        .unwrap_or_else(|e| {
            said(e);
            Vec::new()
        })
        .into_iter()
        .filter(|p| p.status.waiting())
        .map(|p| p.created)
        .collect();
    let requests = crate::proposals::requests::waiting(home).unwrap_or_else(|e| {
        said(e);
        0
    });
    (waiting.len(), waiting.iter().min().copied(), requests)
}

/// What `hearth.toml` tells status: the daily limit, or why it does not
/// load; the peers elsewhere and here (their problems into `problems`).
#[allow(clippy::type_complexity)]
/// What `status` says from `hearth.toml`: the budget, the config's own
/// error, the peers (their problems among `problems`) and the founding
/// policy when there are peers.
struct ConfigFacts {
    daily_usd: Option<f64>,
    config_error: Option<String>,
    peers: Vec<crate::run_state::peer_fetch::PeerFetch>,
    local: Vec<LocalPeer>,
    founding: Option<crate::config::collab::FoundingPolicy>,
}

fn config_facts(
    home: &Home,
    config: &Result<crate::config::Config, crate::config::ConfigError>,
    problems: &mut Vec<String>,
) -> ConfigFacts {
    match config {
        Ok(config) => {
            problems.extend(crate::intake::problems(home, config));
            ConfigFacts {
                daily_usd: Some(config.budget.daily_usd),
                config_error: None,
                peers: remote_peers(home, config),
                local: local_peers(config),
                founding: (!config.peers.is_empty()).then_some(config.collaborations.founding),
            }
        }
        Err(e) => ConfigFacts {
            daily_usd: None,
            config_error: Some(format!("{e} — {}", e.hint())),
            peers: Vec::new(),
            local: Vec::new(),
            founding: None,
        },
    }
}

/// What the next commit would have to leave out: a directory nested too
/// deep, a FIFO, an unreadable file. Logged once by the supervisor;
/// listed by status for as long as it lasts. A walk of the whole work
/// tree: what every look at the status costs grows with the home's files.
fn worktree_problems(home: &Home, problems: &mut Vec<String>) {
    match crate::repo::Repo::open(home.root()).and_then(|repo| repo.changes()) {
        Ok(scan) => problems.extend(scan.problems),
        // With what to do: the wrong user is the usual cause here.
        Err(e) => problems.push(format!("{e} (hint: {})", e.hint())),
    }
}

/// What the mail watch last said, with `[mail]` on (nothing yet: that it
/// waits for the supervisor).
fn mail_watch(
    home: &Home,
    config: Option<&crate::config::Config>,
) -> Option<crate::run_state::mail::MailWatch> {
    let mail = &config?.mail;
    if !mail.enabled() {
        return None;
    }
    Some(crate::run_state::mail::MailWatch::load(home).unwrap_or(
        crate::run_state::mail::MailWatch {
            server: mail.imap.clone(),
            last_error: Some("not read yet: the supervisor reads it".into()),
            ..Default::default()
        },
    ))
}

/// The day's spend by every door (ticks, asks, other paid calls), the
/// records that cannot be read named in `problems`.
fn spent_today(
    home: &Home,
    now: DateTime<Utc>,
    problems: &mut Vec<String>,
) -> crate::exchange::Spent {
    let budget = crate::budget::Budget::load(home).unwrap_or_else(|e| {
        problems.push(e.to_string());
        Default::default()
    });
    let day_start = crate::conversation::sessions::day_start(now);
    let sessions = sessions_since(home, day_start, problems);
    crate::exchange::Spent::today_with(&budget, &sessions, home, now)
}

/// A peer on this host: its name and the home it is read from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LocalPeer {
    /// The name in `[peers]`.
    pub peer: String,
    /// Its home.
    pub path: String,
    /// Whether that home has a git repository hearth can look at.
    pub readable: bool,
}

/// The peers of `[peers]` that are homes on this host.
fn local_peers(config: &crate::config::Config) -> Vec<LocalPeer> {
    config
        .peers
        .iter()
        .filter_map(|(peer, at)| match at {
            crate::config::collab::PeerAt::Path(path) => Some(LocalPeer {
                peer: peer.clone(),
                path: path.display().to_string(),
                readable: path.join(".git").is_dir(),
            }),
            crate::config::collab::PeerAt::Url(_) => None,
        })
        .collect()
}

/// What the fetches of each peer on another host have said (one not
/// fetched yet is listed as such).
pub fn remote_peers(
    home: &Home,
    config: &crate::config::Config,
) -> Vec<crate::run_state::peer_fetch::PeerFetch> {
    config
        .peers
        .iter()
        .filter_map(|(peer, at)| match at {
            crate::config::collab::PeerAt::Url(url) => {
                let mut fetch = crate::run_state::peer_fetch::PeerFetch::load(home, peer)
                    .unwrap_or(crate::run_state::peer_fetch::PeerFetch {
                        peer: peer.clone(),
                        ..Default::default()
                    });
                // Never a password, whatever an old state file kept.
                fetch.url = crate::config::secret_url::masked(url);
                Some(fetch)
            }
            crate::config::collab::PeerAt::Path(_) => None,
        })
        .collect()
}

/// The sessions' lines written since `since`, those that do not parse
/// among `problems`: read back from the log's end, so a view of today
/// costs today's lines, however long the history.
pub(super) fn sessions_since(
    home: &Home,
    since: DateTime<Utc>,
    problems: &mut Vec<String>,
) -> Vec<crate::conversation::sessions::Line> {
    let path = home.path(crate::home::layout::rel::SESSIONS);
    let (sessions, torn) = crate::conversation::tail::since(&path, since).unwrap_or_else(|e| {
        problems.push(format!("{}: {e}", crate::home::layout::rel::SESSIONS));
        Default::default()
    });
    for (byte, why) in torn {
        let at = crate::conversation::tail::line_number(&path, byte)
            .map_or_else(|_| format!("byte {byte}"), |line| line.to_string());
        problems.push(format!(
            "{}:{at}: line skipped: {why}",
            crate::home::layout::rel::SESSIONS
        ));
    }
    sessions
}

/// The ledger's tally, its skipped lines among `problems`.
/// Where status keeps the ledger's segment counts (never committed).
const SEGMENT_COUNTS: &str = ".hearth/ledger-segments.json";

fn tally(home: &Home, problems: &mut Vec<String>) -> crate::exchange::ledger::Tally {
    let ticks_path = home.ticks_path();
    let memo = home.path(SEGMENT_COUNTS);
    let ledger = match Ledger::tally_remembering(&ticks_path, Some(&memo)) {
        Ok(tally) => tally,
        Err(e) => {
            problems.push(format!("{}: {e}", home.relative(&ticks_path)));
            Default::default()
        }
    };
    for (line, problem) in &ledger.skipped {
        problems.push(format!(
            "{}:{line}: line skipped: {problem}",
            home.relative(&ticks_path)
        ));
    }
    ledger
}

/// What the ticks of the last 24 hours spent, at `price`.
fn last_day(
    home: &Home,
    price: Option<&crate::config::Price>,
    now: DateTime<Utc>,
    problems: &mut Vec<String>,
) -> Option<SpendByKind> {
    let ticks_path = home.ticks_path();
    let day_ago = now - chrono::Duration::hours(24);
    match Ledger::since(&ticks_path, day_ago) {
        Ok(records) => Some(SpendByKind::of(
            &records,
            price,
            day_ago,
            now + chrono::Duration::seconds(1),
        )),
        Err(e) => {
            problems.push(format!("{}: {e}", home.relative(&ticks_path)));
            None
        }
    }
}

/// What to tell the operator when the interval outlives the provider's
/// cache: with a model that caches (Anthropic's, or OpenAI's own), the
/// verdict of [`cache::verdict`] when no lifetime serves the ticks.
pub fn cache_warning(config: &crate::config::Config) -> Option<String> {
    if config.model.provider == crate::config::ProviderKind::Offline {
        return None;
    }
    let interval = std::time::Duration::from_secs(config.tick.interval_s);
    let plan = cache::between_ticks(interval, config.tick.cache_aware);
    plan.lifetime
        .is_none()
        .then(|| cache::verdict(interval, config.tick.cache_aware))
}
