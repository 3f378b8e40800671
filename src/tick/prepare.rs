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
use crate::jobs::turn::JobTurn;
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
    /// The tools the model may call (as the exchange will offer them).
    pub tools: Vec<model::ToolSpec>,
    /// The operator's tools, their servers running, and what could not be
    /// offered.
    pub offered: tools::Offered,
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
    /// Turns that carry outside words, moved to an archive before this
    /// tick because the tick itself is the operator's (`provenance`).
    pub quarantine: Option<(Compaction, Vec<Message>)>,
    /// What the turn carries from outside: a source per third-party
    /// message or handoff in it, then the marks of the turns kept. Empty:
    /// the tick starts clean.
    pub outside: crate::outside::Outside,
    /// Messages from outside left in the inbox for a tick of their own,
    /// because the operator's came with them.
    pub deferred: Vec<String>,
    /// The job this tick runs, as a provider may see it (its file, its
    /// prompt).
    pub job: Option<InboxFact>,
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
    job: Option<&JobTurn>,
) -> Result<Prepared, ExchangeError> {
    let repo = Repo::open(home.root()).ok();
    let (mut conversation, broken) = Conversation::read(home, repo.as_ref())?;
    let offered = tools::Offered::load(home, environment);
    let TickInbox {
        messages,
        collaboration,
        deferred,
        mut outside,
    } = tick_inbox(home, config, job)?;
    let quarantine = quarantine_or_carry(home, &mut conversation, &mut outside, now);
    // The operator's word on outside lines, read once for the tick's turn.
    let vouched = crate::provenance::vouch::Vouched::load_or_none(home);
    let recall = recall_for_inbox(home, config, &messages, &vouched);
    let token = crate::memory::watched::token(home);
    let mut boot = boot::boot(home, &config.boot);
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
    let asks = clean_asks(home);
    let (user_turn, mut parts, tier) = context::user_turn(&context::TurnInput {
        now,
        tick: number,
        inbox: &messages,
        asks: &asks,
        directive: directive.as_deref(),
        directive_outside: directive_origins(home, directive.as_deref(), &vouched),
        healer_note: healer_note.as_ref(),
        recall: &recall,
        job,
    });
    let judged = crate::provenance::identity::judge_system(home, config, &mut boot.system, || {
        crate::exchange::ledger::tainted_ticks(home)
    });
    outside.add_from(&user_turn.outside);
    outside.add_from(&judged);
    let tools = offered.specs(&tools::Peering::of(home, config), false);
    count_parts(&mut parts, &boot.system, &conversation, &tools);
    conversation.messages.push(user_turn);
    Ok(Prepared {
        number,
        system: boot.system,
        conversation,
        tools,
        offered,
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
        quarantine,
        outside,
        deferred,
        job: job.map(JobTurn::fact),
    })
}

/// Where the outside lines of `memory/directive.md` (`text`, when it
/// exists) came from, for the turn that quotes it.
fn directive_origins(
    home: &Home,
    text: Option<&str>,
    vouched: &crate::provenance::vouch::Vouched,
) -> Option<String> {
    text?;
    crate::provenance::identity::of_directive(home, vouched)
}

/// The asks of the sessions, for the tick's context: those that carried
/// outside words are not the operator's hot memory.
fn clean_asks(home: &Home) -> Vec<crate::conversation::sessions::SessionExchange> {
    use crate::conversation::sessions;
    sessions::exchanges(&sessions::read(home))
        .into_iter()
        .filter(|x| x.door == "ask" && x.outside.is_empty())
        .collect()
}

/// The inbox messages a tick takes, and what it leaves.
struct TickInbox {
    messages: Vec<InboxMessage>,
    collaboration: Option<String>,
    deferred: Vec<String>,
    /// A source per third-party message taken.
    outside: crate::outside::Outside,
}

/// The inbox a tick takes ([`intake`]); a job's run takes no message
/// (they wait for the next tick), and what it carries from outside is its
/// check's output, when that is.
fn tick_inbox(
    home: &Home,
    config: &Config,
    job: Option<&JobTurn>,
) -> Result<TickInbox, ExchangeError> {
    let Some(job) = job else {
        return intake(home, handoff_budget(config));
    };
    Ok(TickInbox {
        messages: Vec::new(),
        collaboration: None,
        deferred: Vec::new(),
        outside: job.outside_source().into_iter().collect(),
    })
}

/// The tokens a tick's handoffs may take: half of what the window leaves
/// beside the answer, so the prompt, the identity, the tools and some
/// history always fit beside them.
fn handoff_budget(config: &Config) -> u64 {
    config
        .context_window()
        .saturating_sub(u64::from(config.model.max_tokens))
        / 2
}

/// Reads the inbox for a tick: handoffs of one collaboration (its tools
/// run in one workdir), as many as fit `handoff_budget` tokens, and the operator's words and a stranger's never
/// in one turn (the operator's go first, clean; the others wait for the
/// next tick). A message that cannot be read is left in place, said.
fn intake(home: &Home, handoff_budget: u64) -> Result<TickInbox, ExchangeError> {
    let mut messages = Vec::new();
    for path in inbox::pending(home)? {
        match inbox::read(home, &path) {
            Ok(message) => messages.push(message),
            Err(e) => tracing::warn!("inbox message skipped, left in place: {e}"),
        }
    }
    let sized: Vec<(String, u64)> = messages
        .iter()
        .map(|m| (m.rel.clone(), estimate_tokens(&m.text)))
        .collect();
    let (keep, collaboration) = crate::collab::intake::route(
        &crate::collab::store::handoffs_taken(home),
        &sized,
        handoff_budget,
    );
    let mut keep = keep.into_iter();
    messages.retain(|_| keep.next().unwrap_or(true));
    judge_senders(home, &mut messages);
    let senders: Vec<Option<String>> = messages
        .iter()
        .map(|m| {
            m.sender
                .source(&m.rel)
                .map(|s| crate::provenance::origin::bounded(&s))
        })
        .collect();
    let mut deferred = Vec::new();
    let mut outside = crate::outside::Outside::none();
    if senders.iter().any(Option::is_none) {
        let mut senders = senders.into_iter();
        messages.retain(|m| {
            let outside = senders.next().flatten().is_some();
            if outside {
                deferred.push(m.rel.clone());
            }
            !outside
        });
    } else {
        outside.add_all(senders.into_iter().flatten());
    }
    Ok(TickInbox {
        messages,
        collaboration,
        deferred,
        outside,
    })
}

/// A clean tick carries no turn with outside words: they move to an
/// archive (recallable; recalling them taints), returned to be written.
/// An outside tick keeps them, and is tainted by them too.
fn quarantine_or_carry(
    home: &Home,
    conversation: &mut Conversation,
    outside: &mut crate::outside::Outside,
    now: DateTime<Utc>,
) -> Option<(Compaction, Vec<Message>)> {
    if outside.is_empty() {
        return history::quarantine(home, conversation, now);
    }
    for turn in &conversation.messages {
        outside.add_from(&turn.outside);
    }
    None
}

/// The request's estimated tokens by part: the prompt and identity
/// blocks, the history before this turn, and the tool definitions (on a
/// small local window, 2,048 tokens, they are a third of it).
fn count_parts(
    parts: &mut BTreeMap<String, u64>,
    system: &[model::SystemBlock],
    conversation: &Conversation,
    tools: &[model::ToolSpec],
) {
    for block in system {
        let part = if block.source == boot::PROMPT {
            "prompt"
        } else {
            "identity"
        };
        parts.insert(part.into(), estimate_tokens(&block.text));
    }
    let history = conversation.messages.iter().map(history::message_tokens);
    parts.insert("history".into(), history.sum());
    let tools = serde_json::to_string(tools).unwrap_or_default();
    parts.insert("tools".into(), estimate_tokens(&tools));
}

/// Judges who each inbox message is from, once, for every later step:
/// the operator, or — a peer's handoff (by the record of it taken, or its
/// file's name if the record is lost), or any sign of another sender in
/// the message itself (`crate::provenance::sender`) — someone else.
fn judge_senders(home: &Home, messages: &mut [InboxMessage]) {
    let taken = crate::collab::store::handoffs_taken(home);
    let peers: Vec<(&str, &str)> = taken
        .iter()
        .map(|t| (t.inbox.as_str(), t.peer.as_str()))
        .collect();
    for message in messages {
        message.sender = super::sender::of(message, &peers);
    }
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
            job: self.job.clone(),
        }
    }
}

/// What recall finds for each inbox message (the top `[recall] results`).
/// A recall that cannot run is logged and leaves the tick without it.
fn recall_for_inbox(
    home: &Home,
    config: &Config,
    inbox: &[InboxMessage],
    vouched: &crate::provenance::vouch::Vouched,
) -> Vec<Vec<Hit>> {
    if inbox.is_empty() {
        return Vec::new();
    }
    // Outside words (what peers wrote, lines tainted exchanges wrote,
    // marked turns) stay out of the turn unless the agent reads them
    // itself, which taints the exchange (`provenance`): an operator's
    // message must not reach identity through a proposal only because
    // recall quoted a stranger beside it.
    let k = config.recall.results;
    let found = crate::recall::fresh_index(home).and_then(|index| {
        inbox
            .iter()
            .map(|m| {
                index
                    .search(&m.text, k + crate::provenance::OUTSIDE_SLACK)
                    .map(|hits| crate::provenance::without_outside(home, hits, k, vouched))
            })
            .collect::<Result<Vec<_>, _>>()
    });
    found.unwrap_or_else(|e| {
        tracing::warn!("recall for the inbox failed: {e}");
        vec![Vec::new(); inbox.len()]
    })
}
