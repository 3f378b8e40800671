//! `hearth ask`: the shell-side door to the same agent (DESIGN 10). Every
//! shell command is a new process that knows nothing, so what it knows is
//! injected, every time, deterministically, before the model speaks:
//! - the same system blocks as a tick (prompt, identity layer), byte for
//!   byte, so the provider's prompt cache serves both doors;
//! - the warm digest, `state/warm.md` ([`warm`]);
//! - hot memory: the last two exchanges, by either door;
//! - tier context by the tick's keyword classifier: *continuation* → the
//!   exchanges before those (six in all), *mission* → eight and the
//!   directive, *knowledge* → recall's results with citations.
//!
//! The question is written ahead to `state/sessions.jsonl` before the model
//! is called; the answer streams to the caller and is stored when the
//! stream ends (marked incomplete if it was cut). Tools are the tick's,
//! under the same sandbox and brake; what an ask changes is one commit.

mod attachment;
pub mod journal;
mod outside;
mod turn;
pub mod warm;

pub use attachment::{Attachment, ATTACHMENT_BYTES};

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};

use crate::boot;
use crate::brake;
use crate::config::{Config, ProviderKind};
use crate::conversation::estimate_tokens;
use crate::conversation::sessions::{self, Line};
use crate::conversation::store::Conversation;
use crate::exchange::door::Door;
use crate::exchange::outcome::Outcome;
use crate::exchange::run::{Exchange, Opening, Toolset};
use crate::exchange::tier::{classify, Tier};
use crate::exchange::{record, ExchangeError, Spent};
use crate::home::layout::rel;
use crate::home::lock::{AskLock, CommitLock};
use crate::home::Home;
use crate::model::{self, InboxFact, Recalled, TurnFacts};
use crate::repo::{Identity, Repo};
use crate::tools;
use turn::{recall_for, user_turn};

/// What the operator asked.
pub struct Question {
    /// The words.
    pub text: String,
    /// Piped input, if any, as read: at most [`ATTACHMENT_BYTES`].
    pub attachment: Option<Attachment>,
    /// Offer only the tools that do not write.
    pub read_only: bool,
    /// The operator said on the command line that piped stdin is their
    /// own words (`--stdin-is-mine`); else it is outside content.
    pub stdin_is_mine: bool,
    /// Who the question's own words are from when that is not the
    /// operator at a shell: an MCP client relays what its model read (web
    /// pages, issues), so its words are outside unless the operator
    /// started the server with `--client-is-operator`.
    pub relayed_by: Option<String>,
    /// The provider's key, read by the caller.
    pub api_key: Option<String>,
    /// The caller's environment, for operator tools' allow-lists.
    pub environment: BTreeMap<String, String>,
}

/// What came of it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Asked {
    /// The session id (question and answer lines share it).
    pub id: String,
    /// The answer's text.
    pub answer: String,
    /// What the agent sent the operator with `send` meanwhile, as shown.
    pub sent: Vec<String>,
    /// Whether it arrived whole.
    pub complete: bool,
    /// The tier the classifier chose.
    pub tier: Tier,
    /// Estimated tokens by part of the request.
    pub tokens: BTreeMap<String, u64>,
    /// The provider's usage: input, output.
    pub usage: (u64, u64),
    /// What it cost.
    pub cost_usd: f64,
    /// Why it is incomplete, when it is.
    pub problems: Vec<String>,
}

/// Why an ask could not be made.
#[derive(Debug, thiserror::Error)]
pub enum AskError {
    /// The day's budget is spent, in the words the ticks' gate uses.
    #[error("{0}")]
    Budget(String),
    /// The tick machinery failed (a write, git).
    #[error(transparent)]
    Exchange(#[from] ExchangeError),
    /// The provider could not be built.
    #[error(transparent)]
    Model(#[from] model::ModelError),
}

impl AskError {
    /// What to do about it.
    pub fn hint(&self) -> String {
        match self {
            AskError::Budget(_) => "it resets at midnight UTC; raise [budget] daily_usd in \
                 hearth.toml to spend more today, or `hearth recall --no-rerank` searches memory without a model call"
                .into(),
            AskError::Exchange(e) => e.hint(),
            AskError::Model(e) => e.hint(),
        }
    }
}

/// Asks `question` of the agent in `home`; `on_text` receives the answer
/// as it streams.
pub fn ask(
    home: &Home,
    config: &Config,
    question: &Question,
    now: DateTime<Utc>,
    on_text: &mut dyn FnMut(&str),
) -> Result<Asked, AskError> {
    if let Some(reason) = Spent::today(home, now).over(config.budget.daily_usd) {
        return Err(AskError::Budget(reason));
    }
    let id = format!(
        "{}-{}",
        now.format("%Y%m%dT%H%M%S%.3fZ"),
        std::process::id()
    );
    let turn = compose(home, config, question);
    // Held until the ask's commit (the end of this function): a supervisor
    // meanwhile does not take what the tools write, or the question line
    // already written, for hand edits.
    let _writing = AskLock::acquire(home).map_err(ExchangeError::from)?;
    // An ask killed before now (its process is gone) is finished first:
    // its writes are its own, not the operator's.
    journal::finish(home, journal::Whose::Gone, "its process was gone", now);
    // Write-ahead: what this ask writes is named before it is written
    // (its journal), and the question is on disk before any model sees it.
    let mut journal = journal::Journal::begin(
        home,
        journal::Journal {
            id: id.clone(),
            pid: std::process::id(),
            question: question.text.clone(),
            touched: Vec::new(),
            usage: (0, 0),
            cost_usd: 0.0,
            provider: config.model.provider.as_str().into(),
            outside: turn.outside.clone(),
        },
    )
    .map_err(ExchangeError::from)?;
    let asked = exchange(
        home,
        config,
        question,
        &id,
        turn,
        now,
        on_text,
        &mut journal,
    );
    if let Err(e) = &asked {
        // Its writes until the error are its own commit, not left for the
        // operator's next look.
        journal::finish(home, journal::Whose::Mine, &format!("it failed: {e}"), now);
    }
    asked
}

/// The ask's turn, composed before anything is written: what the model is
/// shown, by tier, and the outside content it carries.
struct Composed {
    system: Vec<crate::model::SystemBlock>,
    boot_required: Vec<String>,
    tier: Tier,
    recall: Vec<(String, String)>,
    user_text: String,
    tokens: BTreeMap<String, u64>,
    outside: crate::outside::Outside,
}

/// Composes the turn for `question`: the tick's system blocks (warm from
/// the supervisor's snapshot when memory is unchanged), hot memory, the
/// tier's context.
fn compose(home: &Home, config: &Config, question: &Question) -> Composed {
    let (mut system, boot_required) = boot::snapshot::system_and_required(home, &config.boot);
    // Hot memory is the operator's: exchanges that carried outside words
    // stay out (recall can still find them, which taints).
    let exchanges = outside::clean(sessions::exchanges(&sessions::read(home)));
    // The identity layer it is shown, judged as a tick's is (its journal
    // knows the marks before the model is called).
    let mut outside = crate::provenance::identity::judge_system(home, config, &mut system, || {
        crate::exchange::ledger::tainted_ticks(home)
    });
    let tier = classify(&question.text);
    // Only the knowledge tier puts recall in front of the model; the
    // offline provider answers from it whatever the tier. Otherwise it is
    // not run: a reconcile of a large memory is most of an ask's start-up.
    let recall = if tier == Tier::Knowledge || config.model.provider == ProviderKind::Offline {
        recall_for(home, config, &question.text)
    } else {
        Vec::new()
    };
    let shown: &[(String, String)] = if tier == Tier::Knowledge {
        &recall
    } else {
        &[]
    };
    let written = user_turn(home, question, tier, &exchanges, shown);
    // What the turn's sections showed from outside marks the ask.
    outside.add_from(&written.message.outside);
    let user_text = written.text();
    let mut tokens = written.parts;
    let system_tokens: u64 = system.iter().map(|b| estimate_tokens(&b.text)).sum();
    tokens.insert("system".into(), system_tokens);
    Composed {
        system,
        boot_required,
        tier,
        recall,
        user_text,
        tokens,
        outside,
    }
}

/// The exchange itself, from the question line to the commit.
#[allow(clippy::too_many_arguments)]
fn exchange(
    home: &Home,
    config: &Config,
    question: &Question,
    id: &str,
    turn: Composed,
    now: DateTime<Utc>,
    on_text: &mut dyn FnMut(&str),
    journal: &mut journal::Journal,
) -> Result<Asked, AskError> {
    write_question(home, question, id, &turn, now)?;
    let journal = std::cell::RefCell::new(journal);
    let write_ahead = |rel: &str| journal.borrow_mut().ahead(home, rel);
    let (tier, tokens) = (turn.tier, turn.tokens.clone());
    let mut exchange = Exchange::open(
        home,
        config,
        opening(home, config, question, turn, now, &write_ahead),
    );
    if let Some(e) = exchange.model_error() {
        return Err(e.into());
    }
    let mut door = Door {
        record: &mut journal::Journaled {
            home,
            journal: &journal,
        },
        on_text,
        // No later exchange sends this ask's conversation again: only its
        // own tool rounds read what it caches.
        next_exchange_in: None,
        cache_key: Some(&home.cache_key()),
        spend_cap_usd: None,
    };
    let outcome = exchange.run(&mut door, Outcome::default())?;
    // What the agent told the operator with `send` reaches the shell too,
    // after the reply; the record keeps both, as a tick's does.
    let sent = record::sent(&outcome.actions);
    for message in &sent {
        on_text(&format!("\n{message}\n"));
    }
    // The warm digest is the ask's write too: named in its journal before
    // it is written, so an ask killed between the write and its commit
    // leaves it to its own interrupted commit, never to the operator's.
    journal
        .borrow_mut()
        .ahead(home, rel::WARM)
        .map_err(ExchangeError::from)?;
    let cost_usd = answer(home, config, question, id, &outcome, now, &journal.borrow())?;
    Ok(Asked {
        id: id.to_string(),
        answer: outcome.reply.trim().to_string(),
        sent,
        complete: outcome.whole(),
        tier,
        tokens,
        usage: (outcome.usage.input_tokens, outcome.usage.output_tokens),
        cost_usd,
        problems: outcome.failures.iter().map(|f| f.detail.clone()).collect(),
    })
}

/// The question line in `state/sessions.jsonl`, before any model sees it.
fn write_question(
    home: &Home,
    question: &Question,
    id: &str,
    turn: &Composed,
    now: DateTime<Utc>,
) -> Result<(), ExchangeError> {
    let mut asked = question.text.clone();
    if let Some(a) = &question.attachment {
        let more = if a.more { ", and more not read" } else { "" };
        asked.push_str(&format!("\n[with {} bytes of piped input{more}]", a.bytes));
    }
    Ok(sessions::append(
        home,
        &Line {
            v: sessions::VERSION,
            id: id.to_string(),
            time: now,
            kind: "question".into(),
            asked,
            tier: Some(format!("{:?}", turn.tier).to_lowercase()),
            tokens: turn.tokens.clone(),
            outside: turn.outside.clone(),
            ..Line::default()
        },
    )?)
}

/// What the ask's door states: tick 0, the question the one turn, the
/// operator's tools (only those that do not write if asked), no sleep to
/// ask for and no handing work to peers (the ticks'), the home as workdir,
/// each write named in the journal first; the brake without the ticks'
/// override.
fn opening<'a>(
    home: &Home,
    config: &Config,
    question: &'a Question,
    turn: Composed,
    now: DateTime<Utc>,
    write_ahead: &'a tools::WriteAhead<'a>,
) -> Opening<'a> {
    let required = brake::required::required(home, &turn.boot_required, &config.brake.must_read);
    let recalled = turn
        .recall
        .into_iter()
        .map(|(place, text)| Recalled { place, text });
    Opening {
        number: 0,
        now,
        api_key: question.api_key.as_deref(),
        system: turn.system,
        conversation: Conversation::asking(turn.user_text, turn.outside.clone()),
        facts: TurnFacts {
            tick: 0,
            inbox: Vec::new(),
            job: None,
            ask: Some(InboxFact {
                rel: "ask".into(),
                text: question.text.clone(),
                notes: Vec::new(),
                recalled: recalled.collect(),
            }),
        },
        gate: brake::gate::Gate::without_override(
            config.brake.mode,
            required.into_iter().map(|r| r.path).collect(),
            0,
            now,
        ),
        outside: turn.outside,
        tools: Toolset {
            // The ask says nothing of a server that fails: the ticks flare it.
            offered: tools::Offered::load(home, &question.environment),
            read_only: question.read_only,
            sleeps: false,
            environment: question.environment.clone(),
            write_ahead: Some(write_ahead),
            ..Toolset::builtins()
        },
    }
}

/// Records the answer and commits the ask: the answer line (with the warm
/// digest's cost when one is made now), what the tools wrote, one commit.
/// Returns what the ask cost.
fn answer(
    home: &Home,
    config: &Config,
    question: &Question,
    id: &str,
    outcome: &Outcome,
    now: DateTime<Utc>,
    journal: &journal::Journal,
) -> Result<f64, ExchangeError> {
    let mut answer_line = Line {
        v: sessions::VERSION,
        id: id.to_string(),
        time: now,
        kind: "answer".into(),
        said: record::said(outcome.reply.trim(), &outcome.actions),
        complete: Some(outcome.whole()),
        usage: Some((outcome.usage.input_tokens, outcome.usage.output_tokens)),
        cost_usd: outcome.cost_usd,
        provider: config.model.provider.as_str().into(),
        outside: outcome.effects.outside.clone(),
        ..Line::default()
    };
    let mut changed = vec![rel::SESSIONS.to_string()];
    // The warm digest is made before the commit lock is taken (it may call
    // the model); it is written under it, with the answer line.
    let digest = warm::make(home, config, question, &answer_line);
    changed.extend(outcome.effects.touched.iter().cloned());
    changed.extend(outcome.effects.sent.iter().cloned());
    if home.path(rel::BRAKE_LOG).exists() {
        changed.push(rel::BRAKE_LOG.into());
    }
    // The digest, the answer line and the commit under one hold of the
    // commit lock, so a supervisor committing hand edits meanwhile cannot
    // take them into its own commit and leave the ask none.
    let lock = CommitLock::acquire(home)?;
    if !journal.is_open(home) {
        // A signal's handler finished the ask as interrupted and committed
        // what it had written: nothing more is written, or it would be
        // left for the operator's next commit.
        return Ok(answer_line.cost_usd);
    }
    if let Some((text, digest_cost)) = digest {
        warm::write(home, &text)?;
        answer_line.cost_usd += digest_cost;
        changed.push(rel::WARM.into());
    }
    sessions::append(home, &answer_line)?;
    commit(
        home,
        &question.text,
        &changed,
        &outcome.effects.outside,
        now,
        lock,
        journal,
    )?;
    Ok(answer_line.cost_usd)
}

/// One commit `ask: <question, shortened>`, authored like a tick's, under
/// the commit lock the caller holds (a supervisor meanwhile waits for it).
fn commit(
    home: &Home,
    question: &str,
    paths: &[String],
    outside: &crate::outside::Outside,
    now: DateTime<Utc>,
    _lock: CommitLock,
    journal: &journal::Journal,
) -> Result<(), ExchangeError> {
    let repo = Repo::open(home.root())?;
    let specs: Vec<&str> = paths.iter().map(String::as_str).collect();
    let mut message = format!("ask: {}", shorten(question));
    outside::trailers(&mut message, outside);
    repo.commit(&specs, &Identity::hearth(), &message, now)?;
    // Under the commit lock still: no one finishes it as interrupted.
    journal.end(home);
    Ok(())
}

/// The question on one line, at most 60 characters: a commit's subject.
fn shorten(question: &str) -> String {
    question
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .take(60)
        .collect()
}
