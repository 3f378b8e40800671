//! Consolidation as a proposal. When the identity layer passes `[boot]`'s
//! warning line (or the operator runs `hearth consolidate`, or
//! `[consolidation] every_days` have passed), the next idle tick — one
//! with nothing in the inbox — runs a consolidation exchange instead of
//! its usual turn: the model gets the identity-class memories in full,
//! each line marked when the operator wrote it, and the diff of memory
//! since the last accepted consolidation; its writes go to a draft, never
//! to `main` (`tools::staging`). The gates ([`gates`]) decide whether the
//! draft is offered as a proposal; "nothing to change" is recorded, not
//! offered; `[consolidation] auto_accept = "additions"` accepts one that
//! only adds or moves text.

pub mod gates;
mod turn;

use crate::mailbox::cause::Cause;
use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::brake::gate::Gate;
use crate::config::consolidation::AutoAccept;
use crate::config::{BrakeMode, Config};
use crate::conversation::store::Conversation;
use crate::exchange::door::{Door, Unrecorded};
use crate::exchange::report::TickReport;
use crate::exchange::run::{Exchange, Opening, Toolset};
use crate::exchange::ExchangeError;
use crate::home::layout::rel;
use crate::home::Home;
use crate::json_file::{self, JsonFile};
use crate::mailbox::outbox::{self, Letter};
use crate::model::{self, TurnFacts};
use crate::proposals::{self, Draft, State};
use crate::provenance;
use crate::repo::{DiffSince, Identity, Repo};

/// What the consolidations so far have left: `state/consolidation.json`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ConsolidationRecord {
    /// The operator asked for one (`hearth consolidate`).
    #[serde(default)]
    pub requested: bool,
    /// When the last one ran.
    #[serde(default)]
    pub last: Option<DateTime<Utc>>,
    /// How it ended: `proposed 3`, `nothing to change`, `refused: …`.
    #[serde(default)]
    pub outcome: Option<String>,
}

impl JsonFile for ConsolidationRecord {
    const VERSION: u32 = 1;
}

impl ConsolidationRecord {
    /// The record (empty when there is none). One that cannot be read is
    /// named in the log and read as empty: a consolidation is then due
    /// only by size or age, and the next one writes it anew.
    pub fn load(home: &Home) -> ConsolidationRecord {
        match json_file::load(&home.path(rel::CONSOLIDATION)) {
            Ok(record) => record.unwrap_or_default(),
            Err(e) => {
                tracing::warn!("{e}; read as empty, and written anew");
                ConsolidationRecord::default()
            }
        }
    }

    /// Writes it atomically.
    pub fn save(&self, home: &Home) -> Result<(), crate::atomic::WriteError> {
        json_file::save(&home.path(rel::CONSOLIDATION), self)
    }
}

/// Why a consolidation is due now, if it is: asked for, the identity layer
/// at or over the warning line (at most once a day), or `every_days` since
/// the last. Never while a consolidation proposal waits for the operator.
pub fn due(
    record: &ConsolidationRecord,
    identity_chars: usize,
    warn_chars: usize,
    every_days: u64,
    waiting: bool,
    now: DateTime<Utc>,
) -> Option<String> {
    if waiting {
        return None;
    }
    if record.requested {
        return Some("the operator asked for it (`hearth consolidate`)".into());
    }
    // By size at most once a day: a layer the operator's own lines keep
    // over the line would otherwise pay for a refused consolidation at
    // every idle tick.
    let day_since = record
        .last
        .is_none_or(|last| now - last >= chrono::Duration::days(1));
    if identity_chars >= warn_chars && day_since {
        return Some(format!(
            "the identity layer is {identity_chars} characters, at or over its warning line of {warn_chars}"
        ));
    }
    let stale = record
        .last
        .is_none_or(|last| now - last >= chrono::Duration::days(every_days as i64));
    (every_days > 0 && stale).then(|| format!("[consolidation] every_days = {every_days}"))
}

/// Whether the idle tick at `now` consolidates, and why.
pub fn due_now(home: &Home, config: &Config, now: DateTime<Utc>) -> Option<String> {
    let boot = crate::boot::boot(home, &config.boot);
    let warn = (crate::boot::WARN_AT * config.boot.identity_budget_chars as f64) as usize;
    let waiting = proposals::list(home)
        .unwrap_or_default()
        .iter()
        .any(|p| p.kind == "consolidation" && p.status.waiting());
    due(
        &ConsolidationRecord::load(home),
        boot.layer.identity_chars,
        warn,
        config.consolidation.every_days,
        waiting,
        now,
    )
}

/// Every identity-class file under `memory/`, with its text.
fn identity_files(home: &Home, must_read: &[String]) -> BTreeMap<String, String> {
    let mut files = BTreeMap::new();
    for entry in walkdir::WalkDir::new(home.path(rel::MEMORY))
        .into_iter()
        .flatten()
    {
        let path = entry.path();
        if !entry.file_type().is_file() || path.extension().is_none_or(|x| x != "md") {
            continue;
        }
        let rel_path = home.relative(path);
        let Ok(text) = std::fs::read_to_string(path) else {
            continue;
        };
        if rel_path != rel::PROMPT
            && provenance::identity_class(&rel_path, Some(&text), &text, must_read)
        {
            files.insert(rel_path, text);
        }
    }
    files
}

/// Runs tick `number`'s consolidation exchange (`why` it is due) and
/// records how it ended in `report` and `state/consolidation.json`.
pub fn run(
    home: &Home,
    config: &Config,
    number: u64,
    api_key: Option<&str>,
    why: &str,
    report: &mut TickReport,
    now: DateTime<Utc>,
) -> Result<(), ExchangeError> {
    let before = identity_files(home, &config.brake.must_read);
    let repo = Repo::open(home.root()).ok();
    let operator_lines = operator_lines(repo.as_ref(), &before);
    let since = diff_since_last(home, repo.as_ref());
    let shown = since.as_ref().map(|d| d.text.as_str()).unwrap_or_default();
    let vouched = provenance::vouch::Vouched::load_or_none(home);
    let marks = input_marks(home, &before, &since, &vouched);
    let (system, user) = turn::render(&before, &operator_lines, shown, why, config, &marks);
    let opening = Opening {
        number,
        now,
        api_key,
        system: vec![model::SystemBlock {
            source: "consolidation".into(),
            text: system,
            outside: crate::outside::Outside::none(),
        }],
        // What it is shown carries its lines' origins on the message that
        // shows them: outside words in the identity or in the diff make
        // the exchange, and its proposal, rest on them.
        conversation: Conversation {
            messages: vec![user.message],
            ..Conversation::default()
        },
        facts: TurnFacts {
            tick: number,
            ..TurnFacts::default()
        },
        gate: Gate::without_override(BrakeMode::Off, Vec::new(), number, now),
        outside: crate::outside::Outside::none(),
        tools: Toolset {
            staging: true,
            sleeps: false,
            ..Toolset::builtins()
        },
    };
    let mut exchange = Exchange::open(home, config, opening);
    let mut door = Door {
        record: &mut Unrecorded,
        on_text: &mut |text| tracing::debug!("consolidation: {text}"),
        next_exchange_in: None,
        cache_key: None,
        spend_cap_usd: None,
    };
    let so_far = std::mem::take(&mut report.outcome);
    report.outcome = exchange.run(&mut door, so_far)?;
    let outcome = if report.outcome.whole() {
        let draft = Judged {
            before: &before,
            operator_lines: &operator_lines,
            taint: &exchange.tools.taint,
            reply: &report.outcome.reply,
        };
        settle(home, config, number, &draft, now)?
    } else {
        "failed: the exchange did not finish; nothing was offered".to_string()
    };
    tracing::info!("consolidation: {outcome}");
    report.consolidation = Some(outcome.clone());
    ConsolidationRecord {
        requested: false,
        last: Some(now),
        outcome: Some(outcome),
    }
    .save(home)?;
    Ok(())
}

/// For each identity file, the lines the operator wrote (by blame): the
/// gates keep them. A file edited since `HEAD` counts whole as theirs.
fn operator_lines(
    repo: Option<&Repo>,
    files: &BTreeMap<String, String>,
) -> BTreeMap<String, Vec<String>> {
    files
        .iter()
        .map(|(path, text)| {
            let origins = repo.map(|r| r.line_origins(path)).unwrap_or_default();
            let lines: Vec<String> = if origins.len() == text.lines().count() {
                text.lines()
                    .zip(&origins)
                    // A line from an accepted proposal is the agent's
                    // wording, though the operator committed it.
                    .filter(|(_, o)| o.author != Identity::hearth().name && o.proposal.is_none())
                    .map(|(l, _)| l.to_string())
                    .collect()
            } else {
                text.lines().map(str::to_string).collect()
            };
            (path.clone(), lines)
        })
        .collect()
}

/// Why the diff since the last consolidation could not be read.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct DiffUnread(#[from] crate::repo::RepoError);

/// The diff of `memory/` since the last accepted consolidation (empty
/// when there was none), or why it could not be read.
fn diff_since_last(home: &Home, repo: Option<&Repo>) -> Result<DiffSince, DiffUnread> {
    let last = proposals::list(home)
        .unwrap_or_default()
        .into_iter()
        .rfind(|p| p.kind == "consolidation" && p.status == State::Accepted);
    match (repo, &last) {
        (Some(repo), Some(p)) => repo
            .diff_since(&p.commit, rel::MEMORY, 20_000)
            .map_err(DiffUnread::from),
        _ => Ok(DiffSince::default()),
    }
}

/// What the gates judge of a consolidation that finished.
#[derive(Clone, Copy)]
struct Judged<'a> {
    before: &'a BTreeMap<String, String>,
    operator_lines: &'a BTreeMap<String, Vec<String>>,
    taint: &'a provenance::Taint,
    reply: &'a str,
}

/// The outside content a consolidation is given, by where it shows it:
/// outside lines of each identity file, and — for the diff — of every
/// file it adds to or changes (by the names libgit2 gives, never read
/// back out of the diff's text) and of the lines it shows removed.
/// Closed world: a diff that could not be read is outside.
fn input_marks(
    home: &Home,
    identity: &BTreeMap<String, String>,
    since: &Result<DiffSince, DiffUnread>,
    vouched: &provenance::vouch::Vouched,
) -> turn::InputMarks {
    let judge = provenance::OriginJudge::open(home);
    let files = identity
        .keys()
        .filter_map(|path| Some((path.clone(), judge.of_file(path, None, vouched)?)))
        .collect();
    let diff = match since {
        Ok(since) => {
            let changed = since
                .changed
                .iter()
                .filter_map(|path| judge.of_file(path, None, vouched));
            let removed = since
                .removed
                .iter()
                .filter_map(|(path, lines)| provenance::origins::of_removed(&judge, path, lines));
            let mut sources: Vec<String> = changed.chain(removed).collect();
            sources.sort();
            sources.dedup();
            sources
        }
        Err(why) => vec![format!(
            "{} (the diff since the last consolidation could not be read: {why})",
            rel::MEMORY
        )],
    };
    turn::InputMarks { files, diff }
}

/// Judges the exchange's draft, and offers it (or says why not).
fn settle(
    home: &Home,
    config: &Config,
    number: u64,
    judged: &Judged<'_>,
    now: DateTime<Utc>,
) -> Result<String, ExchangeError> {
    let Judged {
        before,
        operator_lines,
        taint,
        reply,
    } = *judged;
    let after: BTreeMap<String, Option<String>> = taint
        .draft
        .iter()
        .map(|(k, v)| {
            (
                k.clone(),
                v.as_ref().map(|b| String::from_utf8_lossy(b).into_owned()),
            )
        })
        .collect();
    let identity_after = identity_chars_after(home, config, before, &after);
    let warn_chars = (crate::boot::WARN_AT * config.boot.identity_budget_chars as f64) as usize;
    let verdict = gates::judge(&gates::Case {
        before,
        after: &after,
        operator_lines,
        notes: &taint.notes,
        max_removed_pct: config.consolidation.max_removed_pct,
        identity_chars_after: identity_after,
        warn_chars,
    });
    match verdict {
        gates::Judgement::NothingToChange => Ok("nothing to change".into()),
        gates::Judgement::Refused(reasons) => {
            let body = format!(
                "Tick {number} ran a consolidation of the identity memory; it was not offered:\n\n{}\n\n\
                 Nothing on main changed. The next one runs when it is due again (or `hearth consolidate`).\n",
                reasons.iter().map(|r| format!("- {r}")).collect::<Vec<_>>().join("\n")
            );
            let mut flare = Letter::flare(
                Cause::Consolidation,
                "a consolidation was refused at the gate",
                body,
            );
            flare.tick = Some(number);
            outbox::post(home, &flare, now)?;
            Ok(format!("refused: {}", reasons.join("; ")))
        }
        gates::Judgement::Offer {
            removed,
            total,
            additions_only,
        } => {
            let why = format!(
                "The identity memory was consolidated in tick {number}: {removed} of {total} lines \
                 removed or moved.\n\n{}\n",
                reply.trim()
            );
            offer(
                home,
                config,
                number,
                taint,
                why,
                &after,
                additions_only,
                now,
            )
        }
    }
}

/// How long the identity layer would be with the draft accepted: today's
/// length, grown or shrunk by what the draft changes in identity files.
fn identity_chars_after(
    home: &Home,
    config: &Config,
    before: &BTreeMap<String, String>,
    after: &BTreeMap<String, Option<String>>,
) -> usize {
    let boot = crate::boot::boot(home, &config.boot);
    let grew: i64 = after
        .iter()
        .filter(|(path, _)| before.contains_key(*path) || path.as_str() == rel::IDENTITY)
        .map(|(path, text)| {
            text.as_deref().map_or(0, |t| t.chars().count()) as i64
                - before.get(path).map_or(0, |t| t.chars().count()) as i64
        })
        .sum();
    (boot.layer.identity_chars as i64 + grew).max(0) as usize
}

/// Offers the draft as a proposal, and accepts it at once when
/// `[consolidation] auto_accept = "additions"` allows (it only adds or
/// moves text, and rests on no outside content). How it ended, in words.
#[allow(clippy::too_many_arguments)]
fn offer(
    home: &Home,
    config: &Config,
    number: u64,
    taint: &provenance::Taint,
    mut why: String,
    after: &BTreeMap<String, Option<String>>,
    additions_only: bool,
    now: DateTime<Utc>,
) -> Result<String, ExchangeError> {
    for (path, notes) in &taint.notes {
        for note in notes {
            why.push_str(&format!("\n- {path}: {note}"));
        }
    }
    let draft = Draft {
        title: "consolidate identity memory".into(),
        why,
        by: format!("tick {number}"),
        kind: "consolidation".into(),
        outside: taint.outside.clone(),
        files: after
            .iter()
            .map(|(k, v)| (k.clone(), v.as_ref().map(|t| t.as_bytes().to_vec())))
            .collect(),
    };
    let proposal = match proposals::propose(home, None, &draft, now) {
        Ok(p) => p,
        Err(e) => return Ok(format!("failed: the proposal could not be recorded: {e}")),
    };
    let auto = additions_only && config.consolidation.auto_accept == AutoAccept::Additions;
    if auto && taint.tainted() {
        return Ok(format!(
            "proposed {}; not accepted by itself ([consolidation] auto_accept never takes \
             outside content: it rests on {})",
            proposal.n, taint.outside
        ));
    }
    if !auto {
        return Ok(format!("proposed {}", proposal.n));
    }
    Ok(
        match proposals::accept(
            home,
            proposal.n,
            Some(&proposal.commit),
            &Identity::hearth(),
            now,
        ) {
            Ok(proposals::Accepted::Merged(..)) => format!(
            "proposed {} and accepted it ([consolidation] auto_accept: it only adds or moves text)",
            proposal.n
        ),
            Ok(proposals::Accepted::NeedsReview(_)) => {
                format!("proposed {}; it needs review", proposal.n)
            }
            Err(e) => format!("proposed {}; accepting it failed: {e}", proposal.n),
        },
    )
}
