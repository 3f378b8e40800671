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
use crate::conversation::sessions::{self, Line};
use crate::conversation::store::Conversation;
use crate::conversation::{estimate_tokens, Block, Message, Role};
use crate::exchange::door::Door;
use crate::exchange::driver;
use crate::exchange::report::TickReport;
use crate::exchange::tier::{classify, Tier};
use crate::exchange::ExchangeError;
use crate::exchange::{record, SpentToday};
use crate::home::layout::rel;
use crate::home::lock::{AskLock, CommitLock};
use crate::home::Home;
use crate::model::{self, InboxFact, Recalled, TurnFacts};
use crate::repo::{Identity, Repo};
use crate::tools::{self, ToolContext};
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
    /// The day's budget is spent.
    #[error(
        "the daily budget is spent: ${spent:.4} of [budget] daily_usd = ${cap:.2} today (UTC)"
    )]
    Budget {
        /// Spent today.
        spent: f64,
        /// The cap.
        cap: f64,
    },
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
            AskError::Budget { .. } => "it resets at midnight UTC; raise [budget] daily_usd in \
                 hearth.toml to spend more today, or `hearth recall` searches memory for free"
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
    let lines = sessions::read(home);
    let spent = SpentToday::of(home, now);
    if spent.over(config.budget.daily_usd).is_some() {
        return Err(AskError::Budget {
            spent: spent.total(),
            cap: config.budget.daily_usd,
        });
    }
    let id = format!(
        "{}-{}",
        now.format("%Y%m%dT%H%M%S%.3fZ"),
        std::process::id()
    );
    // Warm from the supervisor's snapshot when nothing under memory/
    // changed since; else assembled (and kept for the next ask).
    let (system, boot_required) = boot::snapshot::system_and_required(home, &config.boot);
    // Hot memory is the operator's: exchanges that carried outside words
    // stay out (recall can still find them, which taints).
    let exchanges = outside::clean(sessions::exchanges(&lines));
    let mut outside = outside::at_start(question);
    let tier = classify(&question.text);
    // The directive the mission tier quotes brings its lines' origins.
    if tier == Tier::Mission {
        let vouched = tools::taint::vouch::Vouched::load_or_none(home);
        outside.extend(tools::taint::origin::of_file(
            home,
            rel::DIRECTIVE,
            None,
            &vouched,
        ));
    }
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
    let (user_text, mut tokens) = user_turn(home, question, tier, &exchanges, shown);
    let system_tokens: u64 = system.iter().map(|b| estimate_tokens(&b.text)).sum();
    tokens.insert("system".into(), system_tokens);

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
            outside: outside.clone(),
        },
    )
    .map_err(ExchangeError::from)?;
    let asked = exchange(
        home,
        config,
        question,
        now,
        on_text,
        &mut journal,
        Asking {
            id,
            system,
            boot_required,
            tier,
            recall,
            user_text,
            tokens,
            outside,
        },
    );
    if let Err(e) = &asked {
        // Its writes until the error are its own commit, not left for the
        // operator's next look.
        journal::finish(home, journal::Whose::Mine, &format!("it failed: {e}"), now);
    }
    asked
}

/// What [`ask`] decided before the exchange.
struct Asking {
    id: String,
    system: Vec<crate::model::SystemBlock>,
    boot_required: Vec<String>,
    tier: Tier,
    recall: Vec<(String, String)>,
    user_text: String,
    tokens: BTreeMap<String, u64>,
    outside: Vec<String>,
}

/// The exchange itself, from the question line to the commit.
fn exchange(
    home: &Home,
    config: &Config,
    question: &Question,
    now: DateTime<Utc>,
    on_text: &mut dyn FnMut(&str),
    journal: &mut journal::Journal,
    asking: Asking,
) -> Result<Asked, AskError> {
    let Asking {
        id,
        system,
        boot_required,
        tier,
        recall,
        user_text,
        tokens,
        outside,
    } = asking;
    let mut asked = question.text.clone();
    if let Some(a) = &question.attachment {
        let more = if a.more { ", and more not read" } else { "" };
        asked.push_str(&format!("\n[with {} bytes of piped input{more}]", a.bytes));
    }
    sessions::append(
        home,
        &Line {
            v: sessions::VERSION,
            id: id.clone(),
            time: now,
            kind: "question".into(),
            asked,
            tier: Some(format!("{tier:?}").to_lowercase()),
            tokens: tokens.clone(),
            outside: outside.clone(),
            ..Line::default()
        },
    )
    .map_err(ExchangeError::from)?;

    let mut conversation = Conversation::default();
    conversation.messages.push(Message {
        outside: outside.clone(),
        role: Role::User,
        content: vec![Block::Text { text: user_text }],
    });
    let (operator, _) = tools::operator::load(home, &tools::BUILTINS);
    let trust = tools::trust::Trust::load(home);
    // The ask says nothing of a server that fails: the ticks flare it.
    let connected = tools::mcp::connect(operator, &trust, &question.environment, home.root());
    let operator = connected.tools;
    let mut specs = tools::specs(&operator, None);
    if question.read_only {
        specs.retain(|s| !tools::writes(&operator, &s.name));
    }
    let facts = TurnFacts {
        tick: 0,
        inbox: Vec::new(),
        ask: Some(InboxFact {
            rel: "ask".into(),
            text: question.text.clone(),
            notes: Vec::new(),
            recalled: recall
                .iter()
                .map(|(place, text)| Recalled {
                    place: place.clone(),
                    text: text.clone(),
                })
                .collect(),
        }),
    };
    let required = brake::required::required(home, &boot_required, &config.brake.must_read);
    let gate = brake::gate::Gate::without_override(
        config.brake.mode,
        required.into_iter().map(|r| r.path).collect(),
        0,
        now,
    );
    let mut report = TickReport::new(0, now);
    let journal = std::cell::RefCell::new(journal);
    let write_ahead = |rel: &str| journal.borrow_mut().ahead(home, rel);
    // Tick 0: the ask's door. It answers the shell: no sleep to ask for,
    // no handing work to peers (the ticks'), the home as workdir.
    let mut tool_ctx = ToolContext {
        max_sleep_h: 0,
        environment: question.environment.clone(),
        write_ahead: Some(&write_ahead),
        mcp: connected.servers,
        ..ToolContext::new(home, config, 0, now, operator, trust)
    };
    for source in &outside {
        tool_ctx.taint.read(source.clone());
    }
    let provider = model::provider_for(&config.model, question.api_key.as_deref())?;
    driver::tool_loop(
        &mut Door {
            record: &mut journal::Journaled {
                home,
                journal: &journal,
            },
            on_text,
            // No later exchange sends this ask's conversation again: only
            // its own tool rounds read what it caches.
            next_exchange_in: None,
            cache_key: Some(&home.cache_key()),
        },
        provider,
        &driver::Given {
            home,
            config,
            api_key: question.api_key.as_deref(),
            system: &system,
            specs: &specs,
            facts: &facts,
            gate: &gate,
        },
        &mut conversation,
        &mut tool_ctx,
        &mut report,
    )?;
    let cost = crate::exchange::cost_usd(&report.usage, config.price().as_ref());
    let complete = report.failures.is_empty();
    let answer = report.reply.trim().to_string();
    // What the agent told the operator with `send` reaches the shell too,
    // after the reply; the record keeps both, as a tick's does.
    let sent = record::sent(&report.actions);
    for message in &sent {
        on_text(&format!("\n{message}\n"));
    }
    let answer_line = Line {
        v: sessions::VERSION,
        id: id.clone(),
        time: now,
        kind: "answer".into(),
        said: record::said(&answer, &report.actions),
        complete: Some(complete),
        usage: Some((report.usage.input_tokens, report.usage.output_tokens)),
        cost_usd: cost,
        provider: config.model.provider.as_str().into(),
        outside: tool_ctx.taint.sources.clone(),
        ..Line::default()
    };
    // The sessions as they will be once the answer is on them: the warm
    // digest is made before the commit lock is taken (it may call the
    // model), the answer line written under it.
    let mut lines = sessions::read(home);
    lines.push(answer_line.clone());
    let asks = lines.iter().filter(|l| l.kind == "question").count();
    let every = config.ask.warm_every.max(1) as usize;
    let mut changed = vec![rel::SESSIONS.to_string()];
    let mut answer_line = answer_line;
    if asks % every == 0 {
        let fresh = match config.model.provider {
            ProviderKind::Offline => None,
            _ => {
                let (fresh, usage) = warm::summarise(
                    config,
                    question.api_key.as_deref(),
                    &outside::clean(sessions::exchanges(&lines)),
                );
                // The digest's call is this ask's spend too.
                answer_line.cost_usd += crate::exchange::cost_usd(&usage, config.price().as_ref());
                fresh
            }
        };
        let digest =
            fresh.unwrap_or_else(|| warm::extract(&outside::clean(sessions::exchanges(&lines))));
        crate::atomic::write(&home.path(rel::WARM), digest.as_bytes())
            .map_err(ExchangeError::from)?;
        changed.push(rel::WARM.into());
    }
    changed.extend(tool_ctx.effects.touched.iter().cloned());
    changed.extend(tool_ctx.effects.sent.iter().cloned());
    if home.path(rel::BRAKE_LOG).exists() {
        changed.push(rel::BRAKE_LOG.into());
    }
    // The answer line and the commit under one hold of the commit lock, so
    // a supervisor committing hand edits meanwhile cannot take the answer
    // into its own commit and leave the ask none.
    let lock = CommitLock::acquire(home).map_err(ExchangeError::from)?;
    sessions::append(home, &answer_line).map_err(ExchangeError::from)?;
    let outside = tool_ctx.taint.sources.clone();
    commit(
        home,
        &question.text,
        &changed,
        &outside,
        now,
        lock,
        &journal.borrow(),
    )?;
    Ok(Asked {
        id,
        answer,
        sent,
        complete,
        tier,
        tokens,
        usage: (report.usage.input_tokens, report.usage.output_tokens),
        cost_usd: answer_line.cost_usd,
        problems: report.failures.iter().map(|f| f.detail.clone()).collect(),
    })
}

/// One commit `ask: <question, shortened>`, authored like a tick's, under
/// the commit lock the caller holds (a supervisor meanwhile waits for it).
fn commit(
    home: &Home,
    question: &str,
    paths: &[String],
    outside: &[String],
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
