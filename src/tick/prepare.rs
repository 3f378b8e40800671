//! Assembling a tick (DESIGN 3, 5): the boot's system blocks, the
//! conversation (compacted if it outgrew its budget), the inbox with what
//! recall found for it, a heal's note, and the user turn built from them.
//! Nothing here changes the home, so `hearth context` shows exactly what the
//! next tick would send.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};

use super::context;
use super::healer_note::HealerNote;
use crate::boot;
use crate::config::Config;
use crate::conversation::archive::{self as history, Compaction};
use crate::conversation::store::{Broken, Conversation};
use crate::conversation::{estimate_tokens, Message};
use crate::exchange::tier::Tier;
use crate::exchange::ExchangeError;
use crate::home::Home;
use crate::mailbox::inbox::{self, InboxMessage};
use crate::memory::MemoryProblem;
use crate::model::{self, InboxFact, Recalled, TurnFacts};
use crate::recall::index::Hit;
use crate::repo::Repo;
use crate::tools;

/// Everything the next model call would receive, assembled without
/// changing anything in the home: what `hearth context` prints, and what
/// [`run`](super::run) then commits to.
pub struct Prepared {
    /// The tick's number.
    pub number: u64,
    /// The system blocks, byte-stable from tick to tick.
    pub system: Vec<model::SystemBlock>,
    /// The conversation as it will be sent: compacted if it had to be, with
    /// this tick's user turn last.
    pub conversation: Conversation,
    /// The tools the model may call.
    pub tools: Vec<model::ToolSpec>,
    /// The operator's tools that parse (`tools/*.toml`), each trusted MCP
    /// server's tools in its manifest's place.
    pub operator: Vec<tools::operator::OperatorTool>,
    /// The manifests that do not parse, by file and line, and the MCP
    /// servers that did not start or answer.
    pub tool_problems: Vec<tools::operator::ManifestProblem>,
    /// The MCP servers started to list their tools, kept for the calls.
    pub mcp: tools::mcp::Servers,
    /// The inbox messages this tick answers, oldest first.
    pub inbox: Vec<InboxMessage>,
    /// For each of them, what recall found (best first).
    pub recall: Vec<Vec<Hit>>,
    /// Which context the user turn carries.
    pub tier: Tier,
    /// Estimated tokens per part of the request (prompt, identity, history, inbox…).
    pub tokens_by_part: BTreeMap<String, u64>,
    /// Memories the brake will require reading.
    pub required_reads: Vec<String>,
    /// What the boot found wrong with the memory (named, not fatal).
    pub problems: Vec<MemoryProblem>,
    /// `messages.json` did not parse; a committed copy stands in.
    pub broken: Option<Broken>,
    /// Turns that move to an archive before this tick.
    pub compaction: Option<(Compaction, Vec<Message>)>,
    /// A heal's note, consumed by this tick.
    pub healer_note: Option<HealerNote>,
    /// The collaboration whose handoffs this tick reads, if any.
    pub collaboration: Option<String>,
    /// `state/healer_note.json` did not parse: the problem, by file.
    pub broken_note: Option<String>,
}

/// Assembles tick `number` as it would run now. Reads only, but for
/// starting the trusted MCP servers among the operator's tools to list
/// theirs (with the variables their manifests name from `environment`).
pub fn prepare(
    home: &Home,
    config: &Config,
    number: u64,
    now: DateTime<Utc>,
    environment: &BTreeMap<String, String>,
) -> Result<Prepared, ExchangeError> {
    let repo = Repo::open(home.root()).ok();
    let (mut conversation, broken) = Conversation::read(home, repo.as_ref())?;
    let (operator, mut tool_problems) = tools::operator::load(home, &tools::BUILTINS);
    let trust = tools::trust::Trust::load(home);
    let connected = tools::mcp::connect(operator, &trust, environment, home.root());
    let operator = connected.tools;
    tool_problems.extend(connected.problems);

    let mut messages = Vec::new();
    for path in inbox::pending(home)? {
        match inbox::read(home, &path) {
            Ok(message) => messages.push(message),
            Err(e) => tracing::warn!("inbox message skipped, left in place: {e}"),
        }
    }
    // Handoffs of one collaboration a tick: its tools run in one workdir.
    let rels: Vec<String> = messages.iter().map(|m| m.rel.clone()).collect();
    let (keep, collaboration) =
        crate::collab::intake::route(&crate::collab::store::handoffs_taken(home), &rels);
    let mut keep = keep.into_iter();
    messages.retain(|_| keep.next().unwrap_or(true));
    let recall = recall_for_inbox(home, config, &messages);
    let token = crate::memory::watched::token(home);
    let boot = boot::boot(home, &config.boot);
    if let Some(token) = &token {
        // Kept for `hearth ask`: the first ask after a tick starts warm.
        boot::snapshot::save(home, &config.boot, token, &boot);
    }
    let compaction =
        history::plan(home, &conversation, config.context.history_tokens, now).map(|c| {
            let archived = history::apply(&mut conversation, &c);
            (c, archived)
        });
    let directive = std::fs::read_to_string(home.directive_path()).ok();
    let (healer_note, broken_note) = match HealerNote::read(home) {
        Ok(note) => (note, None),
        Err(problem) => (None, Some(problem.to_string())),
    };
    let asks: Vec<_> =
        crate::conversation::sessions::exchanges(&crate::conversation::sessions::read(home))
            .into_iter()
            .filter(|x| x.door == "ask")
            .collect();
    let (user_turn, mut parts, tier) = context::user_turn(&context::TurnInput {
        now,
        tick: number,
        inbox: &messages,
        asks: &asks,
        directive: directive.as_deref(),
        healer_note: healer_note.as_ref(),
        recall: &recall,
    });
    for block in &boot.system {
        let part = if block.source == boot::PROMPT {
            "prompt"
        } else {
            "identity"
        };
        parts.insert(part.into(), estimate_tokens(&block.text));
    }
    parts.insert(
        "history".into(),
        conversation
            .messages
            .iter()
            .map(history::message_tokens)
            .sum(),
    );
    conversation.messages.push(user_turn);
    let tools = tools::specs(&operator, Some(&tools::Peering::of(home, config)));
    // Every request carries the tool definitions too: on a small local
    // window (2,048 tokens) they are a third of it.
    parts.insert(
        "tools".into(),
        estimate_tokens(&serde_json::to_string(&tools).unwrap_or_default()),
    );
    Ok(Prepared {
        number,
        system: boot.system,
        conversation,
        tools,
        operator,
        tool_problems,
        mcp: connected.servers,
        inbox: messages,
        collaboration,
        recall,
        tier,
        tokens_by_part: parts,
        required_reads: boot.required_reads,
        problems: boot.problems,
        broken,
        broken_note,
        compaction,
        healer_note,
    })
}

impl Prepared {
    /// The turn's facts as a provider receives them (plain strings).
    pub fn facts(&self) -> TurnFacts {
        let inbox = self
            .inbox
            .iter()
            .enumerate()
            .map(|(i, message)| InboxFact {
                rel: message.rel.clone(),
                text: message.text.clone(),
                notes: message.notes.clone(),
                recalled: self
                    .recall
                    .get(i)
                    .into_iter()
                    .flatten()
                    .map(|hit| Recalled {
                        place: hit.place(),
                        text: hit.text.clone(),
                    })
                    .collect(),
            })
            .collect();
        TurnFacts {
            tick: self.number,
            inbox,
            ask: None,
        }
    }
}

/// What recall finds for each inbox message (the top `[recall] results`).
/// A recall that cannot run is logged and leaves the tick without it.
fn recall_for_inbox(home: &Home, config: &Config, inbox: &[InboxMessage]) -> Vec<Vec<Hit>> {
    if inbox.is_empty() {
        return Vec::new();
    }
    // What peers wrote (collaborations/) stays out of the turn unless the
    // agent reads it itself, which taints the exchange (`tools::taint`):
    // an operator's message must not reach identity through a proposal
    // only because recall quoted a peer beside it.
    let k = config.recall.results;
    let found = crate::recall::fresh_index(home).and_then(|index| {
        inbox
            .iter()
            .map(|m| {
                index
                    .search(&m.text, k + tools::taint::PEER_SLACK)
                    .map(|hits| tools::taint::without_peers(hits, k))
            })
            .collect::<Result<Vec<_>, _>>()
    });
    found.unwrap_or_else(|e| {
        tracing::warn!("recall for the inbox failed: {e}");
        vec![Vec::new(); inbox.len()]
    })
}
