//! The two kinds of commit the supervisor makes, each under the home's
//! commit lock: the operator's hand edits (before each tick, and at exit),
//! and the tick's own commit with its trailers (after each tick). Keeping
//! them apart is what lets `git log` answer "who changed this, me or it?".

use crate::mailbox::cause::Cause;
use std::collections::BTreeSet;
use std::path::PathBuf;

use chrono::{DateTime, Utc};

use crate::config::Config;
use crate::exchange::ledger::TickRecord;
use crate::home::layout::rel;
use crate::home::lock::CommitLock;
use crate::home::Home;
use crate::repo::{trailers, Committed, Identity, Repo, RepoPath};

use super::SupervisorError;

/// Everything a tick may change besides the memory files its tools report.
const TICK_PATHS: [&str; 3] = [rel::STATE, rel::INBOX, rel::OUTBOX];

/// Commits whatever changed outside hearth's own writes under `scope`
/// (see [`hand_edit_scope`]), as the operator.
/// What could not be committed (a FIFO, a directory nested too deep) is
/// returned by name for the caller to report; it never stops the commit.
pub fn commit_hand_edits(
    home: &Home,
    repo: &Repo,
    config: &Config,
    now: DateTime<Utc>,
    scope: &[String],
) -> Result<Committed, SupervisorError> {
    let _lock = CommitLock::acquire(home)?;
    // A decision on a proposal cut short by a kill: finished or undone
    // first, so its files are never taken for the operator's.
    if let Some(done) = crate::proposals::journal::recover(home, repo) {
        tracing::warn!("{}", done.describe());
    }
    // A lost or broken book of proposals is rebuilt from the refs and
    // committed as hearth's, never taken for the operator's edit.
    if let Some(why) = crate::proposals::heal_book(home, repo, now) {
        tracing::warn!("{}: {why}", crate::home::layout::rel::PROPOSALS);
    }
    restore_deleted_state(home, repo, now);
    // What the courier recorded between ticks (incidents, the queue, the
    // deliveries) is hearth's, committed as such before the operator's.
    let notices = [
        crate::notify::incidents::FILE,
        crate::notify::courier::QUEUE,
        crate::notify::courier::LOG,
    ];
    repo.commit(
        &notices,
        &Identity::hearth(),
        "notify: incidents and deliveries",
        now,
    )?;
    // So is what the jobs' planner noted (a job first seen).
    repo.commit(
        &[rel::JOBS_SEEN, rel::JOB_RUNS, rel::JOB_SEGMENTS],
        &Identity::hearth(),
        "jobs: first seen",
        now,
    )?;
    let scope: Vec<&str> = scope.iter().map(String::as_str).collect();
    let who = Identity::operator(&config.git);
    // A hearth.toml saved with a password while this commit is made is
    // left out by the commit itself (`Repo::commit_scoped` judges the
    // tree before HEAD moves), so it is never pushed.
    let done = repo.commit_scoped(&scope, &who, &hand_edit_message, now)?;
    if let Some(id) = &done.commit {
        tracing::info!(
            "committed hand edits as {}: {}",
            config.git.operator_name,
            short(id)
        );
    }
    Ok(done)
}

/// hearth's own records, which it never deletes itself: one that is gone
/// from the disk was lost by accident (an `rm`, a bad sync), and committing
/// that as the operator's edit would start the conversation from nothing,
/// forget the day's spend (and so the cap), the heal count, or which
/// handoffs were taken (and take them again).
const OWN_RECORDS: [&str; 4] = [rel::MESSAGES, rel::BUDGET, rel::HEALER, rel::HANDOFFS];

/// Puts back each of [`OWN_RECORDS`] that is missing from the disk but in
/// the last commit, from that commit, with a flare that says so and what
/// to do instead.
fn restore_deleted_state(home: &Home, repo: &Repo, now: DateTime<Utc>) {
    for own in OWN_RECORDS {
        let path = home.path(own);
        if path.symlink_metadata().is_ok() {
            continue;
        }
        let Some((bytes, commit)) = repo.committed_file(own) else {
            continue;
        };
        if let Err(e) = crate::atomic::write(&path, &bytes) {
            tracing::error!("{own} is missing and could not be restored: {e}");
            continue;
        }
        let short = &commit[..commit.len().min(10)];
        tracing::warn!("{own} was missing: restored it from commit {short}");
        let body = format!(
            "{own} was gone from the disk (deleted by hand, or lost in a sync). It is one of \
             hearth's own records, so the deletion was not committed as yours: hearth put back \
             the copy of commit {short}, and nothing of it is lost.\n\nTo change it on \
             purpose, edit the file instead of deleting it (an edit is committed as yours), \
             e.g. for a fresh conversation: \
             `echo '{{\"version\":1,\"messages\":[]}}' > state/messages.json`.\n"
        );
        let flare = crate::mailbox::outbox::Letter::flare(
            Cause::State,
            format!("{own} was deleted; restored from the last commit"),
            body,
        );
        if let Err(e) = crate::mailbox::outbox::post(home, &flare, now) {
            tracing::error!("could not write the state flare: {e}");
        }
    }
}

/// One flare for a link in the home to a folder of the home, which hand
/// edits leave out of their commits (`repo::worktree`), with the fix.
pub fn flare_home_link(home: &Home, link: &str, now: DateTime<Utc>) {
    let body = format!(
        "{link} is a symbolic link to a folder of this home (or into its .git/). hearth \
         leaves it out of every commit: through it, the home's own files (git's internals \
         among them) would be taken for new files, and a commit of them breaks every later \
         one. Every other file is still committed, and hearth keeps running.\n\n\
         To fix it, remove the link (`rm {link}` in the home) or replace it with links to \
         single files or with copies; a link to a folder outside the home is committed as a \
         link.\n"
    );
    let flare = crate::mailbox::outbox::Letter::flare(
        Cause::State,
        format!("{link} links to a folder of the home; left out of commits"),
        body,
    );
    if let Err(e) = crate::mailbox::outbox::post(home, &flare, now) {
        tracing::error!("could not write the flare about {link}: {e}");
    }
}

/// Where hand edits can be: every top-level entry of the home (on disk or
/// in HEAD, so a deletion is seen) but `.git/`, `.hearth/` and `outbox/`,
/// and under `memory/` the files the memory watcher says changed
/// (`memory_changes`, absolute paths) or, without its word, all of it. On
/// 10,000 memory files the watcher's word makes this a look at a few dozen
/// files instead of a stat of every one.
///
/// `outbox/` is hearth's alone (the agent's messages, handoffs, flares):
/// what hearth posts there between ticks — a flare when the disk has room
/// again, a late tick's — goes in the next tick's commit (or the one at
/// exit, [`commit_outbox`]), never in the operator's.
pub fn hand_edit_scope(
    home: &Home,
    repo: &Repo,
    memory_changes: Option<&BTreeSet<PathBuf>>,
) -> Vec<String> {
    let skip = [".git", ".hearth", rel::OUTBOX, rel::MEMORY];
    let mut scope: BTreeSet<String> = repo.head_top_level().into_iter().collect();
    // A name that is not UTF-8, or a memory change outside the home: only
    // a full look will do.
    let mut whole = false;
    if let Ok(entries) = std::fs::read_dir(home.root()) {
        for entry in entries.flatten() {
            match entry.file_name().to_str() {
                Some(name) => drop(scope.insert(name.to_string())),
                None => whole = true,
            }
        }
    }
    scope.retain(|name| !skip.contains(&name.as_str()));
    match memory_changes {
        None => drop(scope.insert(rel::MEMORY.to_string())),
        Some(changes) => {
            for path in changes {
                match path.strip_prefix(home.root()) {
                    Ok(rel) if !rel.as_os_str().is_empty() => {
                        scope.insert(home.relative(path));
                    }
                    _ => whole = true,
                }
            }
        }
    }
    if config_holds_password(home) {
        // Refused at start with the fix; never committed (and pushed)
        // meanwhile. The operator's fix is committed as any edit.
        scope.remove(rel::CONFIG);
        if whole {
            scope.insert(rel::MEMORY.to_string());
        }
    } else if whole {
        return vec![".".into()];
    }
    scope.into_iter().collect()
}

/// Whether `hearth.toml` holds a URL with a password in it (see
/// [`crate::config::secret_url`]).
fn config_holds_password(home: &Home) -> bool {
    std::fs::read_to_string(home.config_path())
        .is_ok_and(|text| crate::config::secret_url::holds_password(&text))
}

/// What hearth posted in `outbox/` since the last tick, committed as
/// hearth's with `message` (see [`hand_edit_scope`]): at exit, and by the
/// push thread for its flare.
pub fn commit_outbox(
    home: &Home,
    repo: &Repo,
    message: &str,
    now: DateTime<Utc>,
) -> Result<(), SupervisorError> {
    let _lock = CommitLock::acquire(home)?;
    // The incidents and the notices' queue and log, written between ticks,
    // are hearth's records too.
    repo.commit(
        &[
            rel::OUTBOX,
            crate::notify::incidents::FILE,
            crate::notify::courier::QUEUE,
            crate::notify::courier::LOG,
        ],
        &Identity::hearth(),
        message,
        now,
    )?;
    Ok(())
}

/// Commits the job ledger's lines recorded without a commit of their own
/// (checks that found nothing to do), at the stop; nothing when there are
/// none.
pub fn commit_job_records(
    home: &Home,
    repo: &Repo,
    now: DateTime<Utc>,
) -> Result<(), SupervisorError> {
    let _lock = CommitLock::acquire(home)?;
    repo.commit(
        &[rel::JOB_RUNS, rel::JOB_SEGMENTS, rel::JOBS_SEEN],
        &Identity::hearth(),
        "jobs: runs their checks skipped, recorded since the last commit",
        now,
    )?;
    Ok(())
}

/// `edit: memory/x.md (by hand)`, or the list when several files changed.
fn hand_edit_message(paths: &[RepoPath]) -> String {
    match paths {
        [] => "edit: changes staged by hand".into(),
        [one] => format!("edit: {one} (by hand)"),
        many => {
            let list: Vec<String> = many.iter().map(|p| format!("- {p}")).collect();
            format!(
                "edit: {} files (by hand)\n\n{}",
                many.len(),
                list.join("\n")
            )
        }
    }
}

/// Commits tick `record` (its state, inbox, outbox and the memory files
/// `touched`) as `hearth`, and advances `refs/hearth/good` after exit 0.
pub fn commit_tick(
    home: &Home,
    repo: &Repo,
    record: &TickRecord,
    touched: &[String],
    now: DateTime<Utc>,
) -> Result<Option<String>, SupervisorError> {
    let _lock = CommitLock::acquire(home)?;
    if let Some(done) = crate::proposals::journal::recover(home, repo) {
        tracing::warn!("{}", done.describe());
    }
    let mut specs: Vec<&str> = TICK_PATHS.to_vec();
    specs.extend(
        touched
            .iter()
            .map(String::as_str)
            .filter(|p| !TICK_PATHS.iter().any(|t| p.starts_with(&format!("{t}/")))),
    );
    let message = tick_message(record);
    let id = repo.commit(&specs, &Identity::hearth(), &message, now)?;
    if let (Some(id), 0) = (&id, record.exit) {
        repo.set_good(id)?;
    }
    Ok(id)
}

/// Points `refs/hearth/good` at HEAD when HEAD is tick `tick`'s commit.
pub fn mark_good_if_head_is(repo: &Repo, tick: u64) -> Result<(), SupervisorError> {
    if let Some(head) = repo.head() {
        if repo
            .message(&head)
            .is_some_and(|m| m.starts_with(&format!("tick {tick}: exit 0 ")))
        {
            repo.set_good(&head)?;
        }
    }
    Ok(())
}

/// `tick 42: exit 0 (ok): answered 1 message` and the trailers of DESIGN 3.
fn tick_message(record: &TickRecord) -> String {
    // The subject says what the tick did, after the part every reader of
    // the history relies on (`tick N: exit E (class)`).
    let did = record.what_it_did();
    let did = match (&record.job, did.is_empty()) {
        (Some(job), true) => format!(": job {job}"),
        (Some(job), false) => format!(": job {job}: {did}"),
        (None, true) => did,
        (None, false) => format!(": {did}"),
    };
    // The subject is one line, whatever a file name the tick wrote holds:
    // a newline there must not start a trailer of its own.
    let did = trailers::one_line(&did);
    let mut message = format!(
        "tick {}: exit {} ({}){did}\n\n",
        record.tick,
        record.exit,
        record.class.as_str()
    );
    if let Some(note) = &record.note {
        message.push_str(&trailers::defused(note));
        message.push_str("\n\n");
    }
    message.push_str(&trailers::line(trailers::TICK, record.tick));
    message.push_str(&trailers::line(trailers::EXIT, record.exit));
    message.push_str(&trailers::line(trailers::CLASS, record.class.as_str()));
    message.push_str(&trailers::line(trailers::TOKENS, record.tokens.trailer()));
    message.push_str(&trailers::line(
        trailers::COST_USD,
        format!("{:.4}", record.cost_usd),
    ));
    // What the tick carried from outside: its lines are outside in turn
    // (`provenance::origin` reads these back).
    message.push_str(&trailers::outside_lines(&record.outside));
    message
}

fn short(id: &str) -> &str {
    &id[..id.len().min(7)]
}
