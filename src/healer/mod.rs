//! The healer: layers 2 and 3 of DESIGN 7.
//!
//! Layer 2 counts consecutive failed ticks. At `[healer] streak` it restores
//! the agent's conversation state (`state/messages.json`, `state/archive/`)
//! from the last good commit — never `memory/` (hand edits are sacred) and
//! never hearth's own ledgers (`ticks.jsonl`, `healer.json`, `budget.json`,
//! `brake.jsonl`), which must keep the failures, the heal count and the
//! spend. Messages the failed ticks consumed go back to `inbox/`. A flare
//! tells the operator, and a note tells the agent.
//!
//! Layer 3: past `[healer] max_heals` heals within `[healer] window_h`,
//! healing stops; a `panic` flare (rate-limited) and the supervisor exits 2
//! so systemd leaves it stopped until a human acts.

pub mod outage;
pub mod quiet;
pub mod state;
pub mod validate;

use crate::mailbox::cause::Cause;
use chrono::{DateTime, Duration, Utc};
use serde::Serialize;

use crate::atomic;
use crate::config::HealerConfig;
use crate::exchange::give_back::{self, Moment};
use crate::exchange::ledger::TickRecord;
use crate::home::layout::rel;
use crate::home::Home;
use crate::io_hint::IoError;
use crate::mailbox::outbox::{self, Letter};
use crate::mailbox::MailboxError;
use crate::repo::{Identity, Repo, RepoError};
use crate::tick::healer_note::HealerNote;
use state::{FailedTick, HealerState, Panic};

/// What the conversation state is, for a heal: restored from the good commit.
pub const RESTORED: [&str; 2] = [rel::MESSAGES, rel::ARCHIVE];

/// Why a heal could not be planned or made.
#[derive(Debug, thiserror::Error)]
pub enum HealError {
    /// No tick has succeeded yet, so there is nothing to restore from.
    #[error("no good commit to restore from: no tick has exited 0 yet")]
    NoGoodCommit,
    /// git failed.
    #[error(transparent)]
    Repo(#[from] RepoError),
    /// A state file could not be written.
    #[error(transparent)]
    Write(#[from] atomic::WriteError),
    /// A message could not be put back in the inbox.
    #[error(transparent)]
    Mailbox(#[from] MailboxError),
    /// The commit lock could not be taken.
    #[error(transparent)]
    Lock(#[from] crate::home::lock::LockError),
    /// Another file operation failed.
    #[error(transparent)]
    Io(#[from] IoError),
}

impl HealError {
    /// What to do about it: a heal that fails leaves the streak as it was,
    /// so the next failed tick tries again.
    pub fn hint(&self) -> String {
        match self {
            HealError::NoGoodCommit => "fix what makes the ticks fail (`hearth status`, the \
                 flares in outbox/); there is no earlier good state to go back to"
                .into(),
            HealError::Repo(e) => e.hint(),
            HealError::Write(e) => e.hint(),
            HealError::Mailbox(e) => e.hint(),
            HealError::Lock(e) => e.hint(),
            HealError::Io(e) => e.hint(),
        }
    }
}

/// Leaves panic by hand (`hearth heal --resume`): the streak and the heal
/// window are cleared and committed as the operator's act, so `hearth run`
/// starts again. Returns the panic that was left, if there was one. The
/// caller holds the run and commit locks.
pub fn resume(
    home: &Home,
    repo: &Repo,
    state: &mut HealerState,
    operator: &Identity,
    now: DateTime<Utc>,
) -> Result<Option<Panic>, HealError> {
    let was = state.panic.take();
    state.streak.clear();
    state.heals.clear();
    state.save(home)?;
    repo.commit(&[rel::HEALER], operator, "heal: resume (by hand)", now)?;
    Ok(was)
}

/// What the healer says after a tick.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Nothing to do.
    Fine,
    /// Heal now: the streak reached `[healer] streak`.
    Heal,
    /// Stop and wait for a human: healing is exhausted.
    Panic,
}

/// Counts `record` into the streak and says what to do.
pub fn observe(
    state: &mut HealerState,
    record: &TickRecord,
    config: &HealerConfig,
    now: DateTime<Utc>,
) -> Verdict {
    state.last_tick = Some(record.tick);
    let idle = record.inbox.is_empty() && record.class == crate::exchange::class::Class::Ok;
    if record.quiet.is_some() {
        state.quiet += 1;
    } else if !idle {
        state.quiet = 0;
    }
    if !record.inbox.is_empty() {
        state.last_answer = record.reply_fingerprint;
    }
    if record.interrupted || record.disk_full {
        // Cut short by the operator's stop, or failed for want of room on
        // the disk: says nothing about the agent.
        return Verdict::Fine;
    }
    if record.outage || record.setting {
        // Not the agent's fault, and nothing a heal can restore (an outage
        // of the API, or a setting only the operator can change): neither
        // the streak nor the heal budget.
        state.outages += 1;
        return Verdict::Fine;
    }
    state.outages = 0;
    if !record.class.is_failure() {
        state.streak.clear();
        state.successes += 1;
        // Sustained success forgives past heals, not only the clock.
        if state.successes >= config.streak.saturating_mul(2) {
            state.heals.clear();
        }
        return Verdict::Fine;
    }
    state.successes = 0;
    state.streak.push(FailedTick {
        tick: record.tick,
        class: record.class,
        inbox: record.inbox.clone(),
        cause: record
            .note
            .as_deref()
            .map(crate::exchange::report::cause_line),
    });
    if (state.streak.len() as u32) < config.streak {
        return Verdict::Fine;
    }
    if state.heals_within(now, Duration::hours(config.window_h as i64)) >= config.max_heals as usize
    {
        Verdict::Panic
    } else {
        Verdict::Heal
    }
}

/// How long to wait after the `n`-th provider outage in a row.
pub fn outage_backoff(config: &HealerConfig, n: u32) -> std::time::Duration {
    let ms = config
        .outage_backoff_ms
        .saturating_mul(1u64 << n.saturating_sub(1).min(20))
        .min(config.outage_backoff_max_ms);
    std::time::Duration::from_millis(ms)
}

/// Exactly what a heal would do now.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HealPlan {
    /// The commit restored from.
    pub restore_from: String,
    /// The failed ticks of the streak, with their classes.
    pub failed_ticks: Vec<(u64, crate::exchange::class::Class)>,
    /// Files rewritten to their content at `restore_from`.
    pub restore: Vec<String>,
    /// Files removed because `restore_from` did not have them.
    pub remove: Vec<String>,
    /// The distinct causes the streak's ticks recorded.
    pub causes: Vec<String>,
    /// (archived message, where it goes back in the inbox).
    pub requeue: Vec<(String, String)>,
}

impl HealPlan {
    /// The heal commit's message.
    pub fn commit_message(&self) -> String {
        format!(
            "heal: restore state/ from {} after {} failed ticks",
            &self.restore_from[..7],
            self.failed_ticks.len()
        )
    }
}

/// Plans a heal of the current streak. Reads only.
pub fn plan(home: &Home, repo: &Repo, state: &HealerState) -> Result<HealPlan, HealError> {
    let good = repo.last_good()?.ok_or(HealError::NoGoodCommit)?;
    let mut restore = Vec::new();
    let mut remove = Vec::new();
    for rel in RESTORED {
        let wanted = repo.files_at(&good, rel)?;
        for (path, bytes) in &wanted {
            if std::fs::read(home.root().join(path)).ok().as_deref() != Some(bytes.as_slice()) {
                restore.push(path.clone());
            }
        }
        for path in files_on_disk(home, rel) {
            if !wanted.iter().any(|(p, _)| *p == path) {
                remove.push(path);
            }
        }
    }
    // What each failed tick still lists: a tick that did not finish gave
    // its messages back when it ended, and its line forgot them.
    let mut requeue = Vec::new();
    for archived in state.streak.iter().flat_map(|failed| &failed.inbox) {
        let still = home.root().join(archived).is_file();
        if let Some(why) = give_back::rule(Moment::Healed { archived: still }) {
            tracing::info!("the heal gives {archived} back: {why}");
            let name = archived.rsplit('/').next().unwrap_or(archived);
            requeue.push((archived.clone(), format!("{}/{name}", rel::INBOX)));
        }
    }
    Ok(HealPlan {
        restore_from: good,
        failed_ticks: state.streak.iter().map(|f| (f.tick, f.class)).collect(),
        causes: state.causes(),
        restore,
        remove,
        requeue,
    })
}

/// Carries out `plan`: restores files, re-queues messages, writes the note
/// and the flare, resets the streak, and commits. Returns the heal commit.
pub fn apply(
    home: &Home,
    repo: &Repo,
    state: &mut HealerState,
    plan: &HealPlan,
    now: DateTime<Utc>,
) -> Result<Option<String>, HealError> {
    for rel in RESTORED {
        for (path, bytes) in repo.files_at(&plan.restore_from, rel)? {
            if plan.restore.contains(&path) {
                atomic::write(&home.root().join(&path), &bytes)?;
            }
        }
    }
    for path in &plan.remove {
        std::fs::remove_file(home.root().join(path))
            .map_err(|source| HealError::Io(IoError::at(path.clone(), source)))?;
    }
    let requeued =
        crate::mailbox::inbox::give_back(home, plan.requeue.iter().map(|(a, _)| a.as_str()))?;
    let back = BackInInbox::of(home, &requeued);
    HealerNote {
        healed_at: now,
        restored_from: plan.restore_from.clone(),
        failed_ticks: plan.failed_ticks.clone(),
        requeued: back.counts,
    }
    .write(home)?;
    outbox::post(home, &heal_flare(plan, &back), now)?;
    state.streak.clear();
    state.heals.push(now);
    state.save(home)?;
    let _lock = crate::home::lock::CommitLock::acquire(home)?;
    Ok(repo.commit(
        &["state", "inbox", "outbox"],
        &Identity::hearth(),
        &plan.commit_message(),
        now,
    )?)
}

/// The messages a heal or a panic put back into the inbox, by whose they
/// are: the operator's (no sender header) or a sender's, and whose could
/// not be told (unreadable) counted as someone else's. Never by file
/// name: a name is words its sender (or a mail gateway, after a
/// stranger's subject) chose.
struct BackInInbox {
    counts: crate::tick::healer_note::Requeued,
    /// (sender, messages) of the others', for the operator's flare.
    by_sender: std::collections::BTreeMap<String, usize>,
}

impl BackInInbox {
    fn of(home: &Home, requeued: &[String]) -> BackInInbox {
        let mut back = BackInInbox {
            counts: Default::default(),
            by_sender: Default::default(),
        };
        for rel_path in requeued {
            let sender = match std::fs::read(home.root().join(rel_path)) {
                Ok(bytes) => crate::provenance::inbox_sender(&String::from_utf8_lossy(&bytes)),
                Err(e) => Some(format!("unknown (the message could not be read: {e})")),
            };
            match sender {
                None => back.counts.operator += 1,
                Some(who) => {
                    back.counts.others += 1;
                    *back.by_sender.entry(who).or_default() += 1;
                }
            }
        }
        back
    }

    /// The flare's sentence, or nothing when no message went back.
    fn sentence(&self, when: &str) -> String {
        let mut parts = Vec::new();
        if self.counts.operator > 0 {
            parts.push(format!("{} of yours", self.counts.operator));
        }
        for (who, n) in &self.by_sender {
            let who = crate::provenance::origin::bounded(who);
            parts.push(format!("{n} from {who} (a sender, not you)"));
        }
        if parts.is_empty() {
            return String::new();
        }
        format!(
            "\nMessages the failed ticks had read are back in the inbox{when}: {}.\n",
            parts.join("; ")
        )
    }
}

fn heal_flare(plan: &HealPlan, back: &BackInInbox) -> Letter {
    let classes: Vec<String> = plan
        .failed_ticks
        .iter()
        .map(|(t, c)| format!("- tick {t}: {}", c.as_str()))
        .collect();
    let mut body = format!(
        "{} ticks in a row failed:\n\n{}\n\nhearth restored the agent's conversation \
         (state/messages.json, state/archive/) from commit {}, the last tick that exited 0. \
         Memory files and hearth's ledgers were not touched.\n",
        plan.failed_ticks.len(),
        classes.join("\n"),
        &plan.restore_from[..7]
    );
    if !plan.causes.is_empty() {
        body.push_str("\nWhat they recorded:\n");
        for cause in &plan.causes {
            body.push_str(&format!("- {cause}\n"));
        }
    }
    if !plan.restore.is_empty() || !plan.remove.is_empty() {
        body.push_str("\nRestored: ");
        body.push_str(&plan.restore.join(", "));
        if !plan.remove.is_empty() {
            body.push_str(&format!(
                "\nRemoved (newer than the good commit, still in git history): {}",
                plan.remove.join(", ")
            ));
        }
        body.push('\n');
    }
    body.push_str(&back.sentence(""));
    body.push_str(
        "\nThe agent is told in its next tick. Inspect with `git log` and `hearth status`.\n",
    );
    let mut letter = Letter::flare(Cause::Healer, plan.commit_message(), body);
    letter.tick = plan.failed_ticks.last().map(|(t, _)| *t);
    letter
}

/// Why healing cannot go on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Halt {
    /// `[healer] max_heals` heals within the window did not help.
    Exhausted,
    /// No tick has exited 0 yet: there is no good state to restore (a new
    /// home whose first ticks all fail, usually a setting).
    NothingToRestore,
}

/// Enters panic: gives back the inbox messages the failed ticks had read
/// (they were never answered: a human fixing the cause wants them
/// answered after `hearth heal --resume`), records the panic and sends a
/// panic flare unless one went out within `[healer]
/// panic_flare_interval_min`.
pub fn panic(
    home: &Home,
    state: &mut HealerState,
    config: &HealerConfig,
    now: DateTime<Utc>,
    why: Halt,
) -> Result<(), HealError> {
    let reason = match why {
        Halt::Exhausted => format!(
            "{} failed ticks in a row after {} heals within {} h ([healer] max_heals = {})",
            state.streak.len(),
            state.heals_within(now, Duration::hours(config.window_h as i64)),
            config.window_h,
            config.max_heals
        ),
        Halt::NothingToRestore if !state.causes().is_empty() => format!(
            "{} failed ticks in a row, and no tick has exited 0 yet, so there is no good state \
             to restore",
            state.streak.len()
        ),
        // Only when no tick said why is the usual cause offered as a guess.
        Halt::NothingToRestore => format!(
            "{} failed ticks in a row, and no tick has exited 0 yet, so there is no good state \
             to restore: the first ticks of a home failing usually mean a setting ([model] \
             provider, model, base_url, the key) or a model the requests do not suit",
            state.streak.len()
        ),
    };
    // The causes the failed ticks recorded, in the flare and in status.
    let causes = state.causes();
    let reason = if causes.is_empty() {
        reason
    } else {
        format!("{reason}; the failed ticks said: {}", causes.join(" | "))
    };
    let taken = still_archived(home, state);
    let requeued = crate::mailbox::inbox::give_back(home, taken.iter().map(String::as_str))?;
    if state.panic.is_none() {
        state.panic = Some(Panic {
            since: now,
            reason: reason.clone(),
        });
    }
    let interval = Duration::minutes(config.panic_flare_interval_min as i64);
    if !state.flared_panic_within(now, interval) {
        let given_back = BackInInbox::of(home, &requeued)
            .sentence(", to be answered once hearth runs again")
            .trim_end()
            .replace("\nMessages", "\n\nMessages");
        let body = format!(
            "Healing cannot go on: {reason}.{given_back}\n\nThe supervisor stopped (exit status 2; \
             systemd will not restart it). Look at `hearth status`, `git log` and the last ticks \
             in state/ticks.jsonl; fix the cause; then run `hearth heal --resume` and start it \
             again (`systemctl start hearth`).\n"
        );
        let subject = match why {
            Halt::Exhausted => "hearth stopped: healing is exhausted",
            Halt::NothingToRestore => "hearth stopped: no tick has succeeded yet",
        };
        let mut letter = Letter::flare(Cause::Panic, subject, body);
        letter.tick = state.streak.last().map(|f| f.tick);
        outbox::post(home, &letter, now)?;
        state.panic_flares.push(now);
    }
    state.save(home)?;
    Ok(())
}

/// The messages the streak's failed ticks read, taken off their lines,
/// that the give-back rule sends back at a panic (those still archived).
fn still_archived(home: &Home, state: &mut HealerState) -> Vec<String> {
    state
        .streak
        .iter_mut()
        .flat_map(|failed| std::mem::take(&mut failed.inbox))
        .filter(|archived| {
            let still = home.root().join(archived).is_file();
            let why = give_back::rule(Moment::Panicked { archived: still });
            if let Some(why) = why {
                tracing::info!("{archived} goes back to the inbox: {why}");
            }
            why.is_some()
        })
        .collect()
}

fn files_on_disk(home: &Home, rel: &str) -> Vec<String> {
    let path = home.root().join(rel);
    if path.is_file() {
        return vec![rel.to_string()];
    }
    walkdir::WalkDir::new(&path)
        .into_iter()
        .flatten()
        .filter(|e| e.file_type().is_file() && !e.file_name().to_string_lossy().starts_with('.'))
        .map(|e| home.relative(e.path()))
        .collect()
}

#[cfg(test)]
mod rules_tests;

#[cfg(test)]
mod tests {
    use super::*;

    fn tick(n: u64, inbox: bool, quiet: bool, fingerprint: u64) -> TickRecord {
        let mut r: TickRecord = serde_json::from_str(
            r#"{"tick":1,"start":"2026-01-01T00:00:00Z","end":"2026-01-01T00:00:00Z","exit":0,"class":"ok"}"#,
        )
        .unwrap();
        r.tick = n;
        if inbox {
            r.inbox = vec![format!("state/inbox-archive/{n}.md")];
        }
        r.quiet = quiet.then(|| "did the same".to_string());
        r.reply_fingerprint = Some(fingerprint);
        r
    }

    #[test]
    fn idle_ticks_between_quiet_ones_neither_count_nor_break_the_run() {
        let config = HealerConfig::default();
        let mut state = HealerState::default();
        let now = DateTime::from_timestamp(1_800_000_000, 0).unwrap();
        let ticks = [
            tick(1, true, false, 7),
            tick(2, false, false, 9),
            tick(3, true, true, 7),
            tick(4, false, false, 9),
            tick(5, true, true, 7),
        ];
        for t in &ticks {
            observe(&mut state, t, &config, now);
        }
        assert_eq!(state.quiet, 2);
        assert_eq!(
            state.last_answer,
            Some(7),
            "the last message tick's, not the idle one's"
        );
        // A message tick that does something new ends the run.
        observe(&mut state, &tick(6, true, false, 8), &config, now);
        assert_eq!(state.quiet, 0);
    }
}
