//! Delivery: every notice is queued on disk for each target
//! (`state/notify-queue.json`) before any send, tried off the tick's path,
//! retried with backoff while a receiver is down or answers an error, and
//! recorded line by line in `state/notify.jsonl` (delivered, retrying,
//! failed, and why; never a secret). A queued notice survives a restart, a
//! crash and a heal; a target that keeps failing is shown by `hearth
//! status`, never turned into more notices.

use std::collections::BTreeSet;
use std::sync::Mutex;

use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};

use super::incidents::NotifyStateError;
use super::targets::Destination;
use super::{Notice, Severity};
use crate::home::Home;
use crate::json_file::{self, JsonFile};

/// The queue, relative to the home.
pub const QUEUE: &str = "state/notify-queue.json";
/// The delivery log, relative to the home.
pub const LOG: &str = "state/notify.jsonl";

/// The longest wait between tries (the first is `[notify] retry_ms`).
const MAX_BACKOFF: Duration = Duration::minutes(30);
/// How long a notice is retried before it is given up as failed.
const GIVE_UP_AFTER: Duration = Duration::days(7);

/// One process writes the queue at a time through this (the supervisor's
/// loop queues, its courier thread sends).
static QUEUE_LOCK: Mutex<()> = Mutex::new(());

/// One round of deliveries at a time: two rounds (the courier's, and the
/// last one at exit) would each take the same due notice and send it
/// twice.
static ROUND_LOCK: Mutex<()> = Mutex::new(());

/// Deliveries made whose removal from the queue is not on disk yet (a full
/// disk refused the write): never sent again by this process, and taken
/// out of the queue by the next write that succeeds.
static DELIVERED: Mutex<BTreeSet<(String, String)>> = Mutex::new(BTreeSet::new());

/// A notice waiting for one target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Pending {
    /// The notice.
    pub notice: Notice,
    /// The target's name (`ntfy`, `webhook`, `email`).
    pub target: String,
    /// Tries so far.
    pub attempts: u32,
    /// Not before.
    pub next_try: DateTime<Utc>,
    /// Why the last try failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
}

/// The queue.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Queue {
    /// Waiting deliveries, oldest first.
    pub pending: Vec<Pending>,
}

impl JsonFile for Queue {
    const VERSION: u32 = 1;
}

/// One line of `state/notify.jsonl`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Delivery {
    /// When it was tried.
    pub time: DateTime<Utc>,
    /// The notice's id.
    pub notice: String,
    /// Its incident key.
    pub incident: String,
    /// Opened, resolved…
    pub state: String,
    /// The target's name.
    pub target: String,
    /// `delivered`, `retrying` or `failed`.
    pub outcome: String,
    /// The try's number.
    pub attempt: u32,
    /// What the receiver answered, or why it failed.
    pub detail: String,
}

fn load(home: &Home) -> Result<Queue, NotifyStateError> {
    Ok(json_file::load(&home.path(QUEUE))?.unwrap_or_default())
}

/// Queues `notices` for every target of `targets` whose floor they reach.
pub fn enqueue(
    home: &Home,
    notices: &[Notice],
    targets: &[Destination],
    min_severity: Severity,
    now: DateTime<Utc>,
) -> Result<usize, NotifyStateError> {
    let wanted: Vec<&Notice> = notices
        .iter()
        .filter(|n| n.severity >= min_severity)
        .collect();
    if wanted.is_empty() || targets.is_empty() {
        return Ok(0);
    }
    let _guard = QUEUE_LOCK.lock().unwrap_or_else(|p| p.into_inner());
    let mut queue = load(home)?;
    let mut added = 0;
    for notice in wanted {
        for target in targets {
            let duplicate = queue
                .pending
                .iter()
                .any(|p| p.notice.id == notice.id && p.target == target.name());
            if !duplicate {
                queue.pending.push(Pending {
                    notice: notice.clone(),
                    target: target.name().to_string(),
                    attempts: 0,
                    next_try: now,
                    last_error: None,
                });
                added += 1;
            }
        }
    }
    json_file::save(&home.path(QUEUE), &queue)?;
    Ok(added)
}

/// What one round of deliveries did.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct DeliveryRound {
    /// Delivered now.
    pub delivered: usize,
    /// Failed now, to be tried again.
    pub retrying: usize,
    /// Given up.
    pub failed: usize,
    /// Still waiting (tried or not).
    pub waiting: usize,
    /// The earliest next try of what waits.
    pub next_try: Option<DateTime<Utc>>,
}

/// Tries every delivery that is due at `now`, in order; records each try.
/// Sends happen without the queue's lock held (a slow receiver does not
/// hold up the loop that queues), so a notice queued meanwhile waits for
/// the next round.
pub fn deliver_due(
    home: &Home,
    targets: &[Destination],
    retry: std::time::Duration,
    now: DateTime<Utc>,
) -> Result<DeliveryRound, NotifyStateError> {
    let first_backoff = Duration::from_std(retry).unwrap_or(MAX_BACKOFF);
    let _round = ROUND_LOCK.lock().unwrap_or_else(|p| p.into_inner());
    let mut delivered = DELIVERED.lock().unwrap_or_else(|p| p.into_inner());
    let due: Vec<Pending> = {
        let _guard = QUEUE_LOCK.lock().unwrap_or_else(|p| p.into_inner());
        load(home)?
            .pending
            .into_iter()
            .filter(|p| p.next_try <= now)
            .filter(|p| !delivered.contains(&(p.notice.id.clone(), p.target.clone())))
            .collect()
    };
    let mut round = DeliveryRound::default();
    let mut done: Vec<(String, String, Option<Pending>)> = Vec::new();
    let mut lines = Vec::new();
    for p in due {
        let Some(target) = targets.iter().find(|t| t.name() == p.target) else {
            // The target was taken out of [notify]: nothing to send to.
            done.push((p.notice.id.clone(), p.target.clone(), None));
            continue;
        };
        let (line, again) = try_once(p.clone(), target, first_backoff, now);
        match line.outcome.as_str() {
            "delivered" => {
                round.delivered += 1;
                delivered.insert((p.notice.id.clone(), p.target.clone()));
            }
            "failed" => round.failed += 1,
            _ => round.retrying += 1,
        }
        lines.push(line);
        done.push((p.notice.id.clone(), p.target.clone(), again));
    }
    if done.is_empty() && delivered.is_empty() {
        let _guard = QUEUE_LOCK.lock().unwrap_or_else(|p| p.into_inner());
        let queue = load(home)?;
        round.waiting = queue.pending.len();
        round.next_try = queue.pending.iter().map(|p| p.next_try).min();
        return Ok(round);
    }
    // Under the home's commit lock: what is recorded here is hearth's, and
    // a hand-edit commit must not take it for the operator's.
    let _commit = crate::home::lock::CommitLock::acquire(home)
        .map_err(|e| NotifyStateError::Locked(e.to_string()))?;
    let _guard = QUEUE_LOCK.lock().unwrap_or_else(|p| p.into_inner());
    let mut queue = load(home)?;
    for (id, target, again) in done {
        queue
            .pending
            .retain(|p| !(p.notice.id == id && p.target == target));
        if let Some(again) = again {
            queue.pending.push(again);
        }
    }
    queue
        .pending
        .retain(|p| !delivered.contains(&(p.notice.id.clone(), p.target.clone())));
    if !lines.is_empty() || !delivered.is_empty() {
        json_file::save(&home.path(QUEUE), &queue)?;
        // On disk now: what was delivered is out of the queue for good.
        delivered.clear();
        for line in &lines {
            let text = serde_json::to_string(line).expect("a delivery serialises");
            crate::atomic::append_line(&home.path(LOG), &text)?;
        }
    }
    round.waiting = queue.pending.len();
    round.next_try = queue.pending.iter().map(|p| p.next_try).min();
    Ok(round)
}

/// One try of `p` at `target`: its line for the log, and the delivery
/// again with its next time if it is to be retried.
fn try_once(
    mut p: Pending,
    target: &Destination,
    first_backoff: Duration,
    now: DateTime<Utc>,
) -> (Delivery, Option<Pending>) {
    p.attempts += 1;
    let (outcome, detail, again) = match target.send(&p.notice) {
        Ok(answer) => ("delivered", answer, None),
        Err(why) if now - p.notice.time >= GIVE_UP_AFTER => ("failed", why.to_string(), None),
        Err(why) => {
            let why = why.to_string();
            let wait = first_backoff * 2i32.saturating_pow(p.attempts.min(16) - 1);
            p.next_try = now + wait.min(MAX_BACKOFF);
            p.last_error = Some(why.clone());
            ("retrying", why, Some(p.clone()))
        }
    };
    let line = Delivery {
        time: now,
        notice: p.notice.id.clone(),
        incident: p.notice.incident.clone(),
        state: p.notice.state.as_str().to_string(),
        target: p.target.clone(),
        outcome: outcome.to_string(),
        attempt: p.attempts,
        detail,
    };
    (line, again)
}

/// Each target's last outcome, from `state/notify.jsonl`: for `hearth
/// status`, which names a target whose last try failed.
pub fn last_outcomes(home: &Home) -> Vec<Delivery> {
    let text = std::fs::read_to_string(home.path(LOG)).unwrap_or_default();
    let mut last: std::collections::BTreeMap<String, Delivery> = Default::default();
    for line in text.lines() {
        if let Ok(d) = serde_json::from_str::<Delivery>(line) {
            last.insert(d.target.clone(), d);
        }
    }
    last.into_values().collect()
}
