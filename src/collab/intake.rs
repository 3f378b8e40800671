//! Taking a peer's handoff in (DESIGN 14): what the receiving home writes
//! — an inbox message with the header its model reads, its own record of
//! the collaboration, a line in `state/handoffs.jsonl` — decided over
//! plain values. The supervisor does the reading and writing.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::handoff::Handoff;
use super::{Collaboration, Stage};

/// One handoff taken in: a line of `state/handoffs.jsonl`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Taken {
    /// The peer it came from.
    pub peer: String,
    /// Its file in the peer's `outbox/`.
    pub file: String,
    /// The peer's commit that holds it, when the peer had committed it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sent_in: Option<String>,
    /// The blob it was read from (what tells it rewritten later under the
    /// same name); none in lines written before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blob: Option<String>,
    /// The collaboration.
    pub slug: String,
    /// Its round.
    pub round: u32,
    /// The inbox message it became.
    pub inbox: String,
    /// When it was taken.
    pub at: DateTime<Utc>,
}

/// The most handoffs one tick takes (of its one collaboration): a
/// participant's backlog is read a part at a time, oldest first, so each
/// tick fits its context and the agent always makes progress.
pub const MAX_HANDOFFS_A_TICK: usize = 16;

/// Which of a tick's inbox messages (`inbox/…` paths with their estimated
/// tokens, oldest first) it takes now, and the collaboration they belong
/// to: every message that is not a handoff, and the handoffs of one
/// collaboration only — the oldest one's, at most [`MAX_HANDOFFS_A_TICK`]
/// and `budget` tokens of them (the first always) — so that the tick's
/// tools run in one working directory and its turn fits. The others wait
/// for the next tick.
pub fn route(taken: &[Taken], inbox: &[(String, u64)], budget: u64) -> (Vec<bool>, Option<String>) {
    let slugs: std::collections::HashMap<&str, &str> = taken
        .iter()
        .map(|t| (t.inbox.as_str(), t.slug.as_str()))
        .collect();
    let slug_of = |rel: &String| slugs.get(rel.as_str()).copied();
    let chosen = inbox.iter().find_map(|(rel, _)| slug_of(rel));
    let (mut handoffs, mut tokens) = (0, 0u64);
    let keep = inbox
        .iter()
        .map(|(rel, size)| match slug_of(rel) {
            None => true,
            Some(slug)
                if Some(slug) == chosen
                    && handoffs < MAX_HANDOFFS_A_TICK
                    && (handoffs == 0 || tokens + size <= budget) =>
            {
                handoffs += 1;
                tokens += size;
                true
            }
            Some(_) => false,
        })
        .collect();
    (keep, chosen.map(str::to_string))
}

/// The part of a backlog one look takes: at most `max`, each peer's
/// oldest first (by `order`), the peers in turn — so a peer that floods
/// this home delays another's handoffs by one share of a batch, never by
/// its whole backlog.
pub fn fair_batch<T, K: Ord>(
    items: Vec<T>,
    peer: impl Fn(&T) -> &str,
    order: impl Fn(&T) -> K,
    max: usize,
) -> Vec<T> {
    let mut by_peer: std::collections::BTreeMap<String, Vec<T>> = Default::default();
    for item in items {
        by_peer
            .entry(peer(&item).to_string())
            .or_default()
            .push(item);
    }
    let mut queues: Vec<std::collections::VecDeque<T>> = by_peer
        .into_values()
        .map(|mut items| {
            items.sort_by_key(&order);
            items.into()
        })
        .collect();
    let mut batch = Vec::new();
    while batch.len() < max && queues.iter().any(|q| !q.is_empty()) {
        for queue in &mut queues {
            if batch.len() == max {
                break;
            }
            if let Some(item) = queue.pop_front() {
                batch.push(item);
            }
        }
    }
    batch
}

/// Why a handoff or notice from a peer is not taken into a collaboration:
/// a collaboration belongs to its participants.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotAdmitted {
    /// The sender is not one of the participants this home knows (or, for
    /// a collaboration new here, the one it claims does not hold both).
    NotParticipant {
        /// The participants this home's record (or the claim) holds.
        participants: Vec<String>,
    },
    /// The round it claims is not one from the sender to this home.
    NotItsRound,
    /// Past `[collaborations] max_rounds`: it waits.
    PastMaxRounds,
}

/// Whether `h`, from `peer` to `me`, may be taken into this home's record
/// `mine` (none: the collaboration is new here). Only a participant hands
/// off or sends a notice in a collaboration; a new one is founded only
/// with the sender and this home among its participants; a handoff's
/// round is the sender's own, to this home, within `max_rounds`.
pub fn admit(
    h: &Handoff,
    peer: &str,
    me: &str,
    mine: Option<&Collaboration>,
    max_rounds: u32,
) -> Result<(), NotAdmitted> {
    let participants = match mine {
        Some(mine) => &mine.participants,
        None => &h.collaboration.participants,
    };
    let founding_without_me = mine.is_none() && !participants.iter().any(|p| p == me);
    if !participants.iter().any(|p| p == peer) || founding_without_me {
        return Err(NotAdmitted::NotParticipant {
            participants: participants.clone(),
        });
    }
    if h.notice.is_some() {
        return Ok(());
    }
    let own = h
        .collaboration
        .rounds
        .iter()
        .any(|r| r.n == h.round && r.from == peer && r.to == me);
    if !own {
        return Err(NotAdmitted::NotItsRound);
    }
    if h.round > max_rounds {
        return Err(NotAdmitted::PastMaxRounds);
    }
    Ok(())
}

/// The sender's record as this home may take it: only `peer`'s own rounds
/// and its own events; an event its operator made (`by: operator` there)
/// is its operator's, never this home's.
fn as_said_by(peer: &str, theirs: &Collaboration) -> Collaboration {
    let mut c = theirs.clone();
    c.rounds.retain(|r| r.from == peer);
    c.events = own_events(peer, &theirs.events);
    c
}

/// The events of `events` that `peer` may say: its own (as it), and its
/// operator's (as `PEER's operator`).
fn own_events(peer: &str, events: &[super::Transition]) -> Vec<super::Transition> {
    events
        .iter()
        .filter_map(|e| {
            let by = match e.by.as_str() {
                "operator" => format!("{peer}'s operator"),
                by if by == peer => by.to_string(),
                _ => return None,
            };
            Some(super::Transition { by, ..e.clone() })
        })
        .collect()
}

/// Adds to `record` the events of `events` it does not hold, in time order.
fn merge_events(record: &mut Collaboration, events: Vec<super::Transition>) {
    for event in events {
        if !record.events.contains(&event) {
            record.events.push(event);
        }
    }
    record.events.sort_by_key(|e| e.at);
}

/// The inbox file a handoff becomes: named after the peer and its file, so
/// taking the same handoff twice finds the first copy.
pub fn inbox_name(peer: &str, file: &str) -> String {
    let stem = file.strip_suffix(".md").unwrap_or(file);
    format!("handoff-{peer}-{stem}.md")
}

/// What to write for a handoff `h` from `peer` (its outbox file `file`),
/// given this home's record of the collaboration, if any.
pub struct Intake {
    /// The inbox message: the header, then the message.
    pub inbox_text: String,
    /// This home's record after taking it.
    pub record: Collaboration,
}

/// Decides the intake of a status notice (`kind: notice`) from `peer`,
/// admitted by [`admit`]: the record takes the sender's status when the
/// collaboration was completed or its operator changed it, takes the
/// sender's own events, and the inbox says what happened.
pub fn take_notice(h: &Handoff, peer: &str, mine: Option<Collaboration>) -> Intake {
    let what = h.notice.as_deref().unwrap_or("");
    let mut record = mine.unwrap_or_else(|| as_said_by(peer, &h.collaboration));
    match what {
        "complete" if record.status != Stage::Abandoned => record.status = Stage::Complete,
        // An operator's status change travels: the latest one stands.
        "pause" | "abandon" | "reopen" => record.status = h.collaboration.status,
        "rename" => record.name.clone_from(&h.collaboration.name),
        _ => {}
    }
    merge_events(&mut record, own_events(peer, &h.collaboration.events));
    let inbox_text = format!(
        "Notice from {} — collaboration \"{}\" ({}), now {}:\n\n{}\n",
        h.from,
        record.name,
        record.slug,
        record.status.as_str(),
        h.message.trim_end()
    );
    Intake { inbox_text, record }
}

/// Decides the intake of round `h.round` from `peer`, admitted by
/// [`admit`], which the sender committed in `sent_in`. This home's record
/// is the base when it has one: its status, name, workdir and events
/// stand; the sender adds its own rounds and events only, and the
/// participants it hands to. What this home knew of the rounds (the
/// commits on its side) is kept.
pub fn take(
    h: &Handoff,
    peer: &str,
    mine: Option<Collaboration>,
    max_rounds: u32,
    sent_in: Option<String>,
) -> Intake {
    let theirs = as_said_by(peer, &h.collaboration);
    let mut record = match mine {
        None => theirs.clone(),
        Some(mut mine) => {
            for p in &theirs.participants {
                if !mine.participants.contains(p) {
                    mine.participants.push(p.clone());
                }
            }
            // What the sender knows of every round (the commits on its
            // side of this home's own rounds too) fills in what is
            // unknown here; it adds no round.
            mine.learn(&h.collaboration.rounds);
            for round in &theirs.rounds {
                if !mine.rounds.iter().any(|r| r.n == round.n) {
                    mine.rounds.push(round.clone());
                }
            }
            mine.rounds.sort_by_key(|r| r.n);
            merge_events(&mut mine, theirs.events.clone());
            mine
        }
    };
    if let Some(round) = record.rounds.iter_mut().find(|r| r.n == h.round) {
        round.sent_in = round.sent_in.take().or(sent_in);
    }
    let mut header = h.header(max_rounds);
    if record.status != Stage::Active {
        header.push_str(&format!(
            "\nNote: your operator has marked this collaboration {}; do not hand off in it \
             until it is reopened.",
            record.status.as_str()
        ));
    }
    Intake {
        inbox_text: format!("{header}\n\n---\n\n{}\n", h.message.trim_end()),
        record,
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::collab::handoff::{plan, HandoffAsk};
    use crate::collab::Change;
    use crate::config::collab::CollaborationsConfig;

    fn at(min: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_800_000_000 + min * 60, 0).unwrap()
    }

    #[test]
    fn the_senders_round_joins_what_the_receiver_knew_and_its_operators_pause_stands() {
        let peers = [(
            "bob".to_string(),
            crate::config::collab::PeerAt::Path(PathBuf::from("/h/bob")),
        )]
        .into();
        let settings = CollaborationsConfig::default();
        let request = HandoffAsk {
            to: "bob".into(),
            message: "Draft one".into(),
            name: Some("Design X".into()),
            ..HandoffAsk::default()
        };
        let sent = plan("alice", &peers, &settings, &request, None, |_| false, at(0)).unwrap();
        let first = take(&sent.handoff, "alice", None, 12, Some("c0ffee".into()));
        assert_eq!(first.record.rounds[0].sent_in.as_deref(), Some("c0ffee"));
        assert!(
            first.inbox_text.starts_with("Handoff from alice"),
            "{}",
            first.inbox_text
        );
        assert!(
            first.inbox_text.ends_with("---\n\nDraft one\n"),
            "{}",
            first.inbox_text
        );
        assert_eq!(first.record.rounds.len(), 1);

        let mut mine = first.record;
        mine.change(Change::Pause, "operator", "bob's operator", at(1))
            .unwrap();
        mine.rounds[0].taken_in = Some("beef".into());
        let again = take(&sent.handoff, "alice", Some(mine), 12, None);
        let round = &again.record.rounds[0];
        assert_eq!(
            (round.sent_in.as_deref(), round.taken_in.as_deref()),
            (Some("c0ffee"), Some("beef")),
            "what the receiver knew of the round is kept"
        );
        assert_eq!(again.record.status, Stage::Paused);
        assert_eq!(again.record.events.len(), 2, "{:?}", again.record.events);
        assert!(again
            .inbox_text
            .contains("marked this collaboration paused"));
        assert_eq!(
            inbox_name("alice", "x-handoff-design-x-1-to-bob.md"),
            "handoff-alice-x-handoff-design-x-1-to-bob.md"
        );
    }

    #[test]
    fn a_flooding_peer_gets_its_share_of_a_batch_and_no_more() {
        let mut items: Vec<(&str, u32)> = (0..1000).map(|n| ("mallory", n)).collect();
        items.extend([("alice", 7), ("alice", 3), ("bob", 1)]);
        let batch = fair_batch(items, |i| i.0, |i| i.1, 6);
        assert_eq!(
            batch,
            [
                ("alice", 3),
                ("bob", 1),
                ("mallory", 0),
                ("alice", 7),
                ("mallory", 1),
                ("mallory", 2)
            ]
        );
    }

    #[test]
    fn a_tick_takes_one_collaborations_handoffs_and_every_other_message() {
        let taken = |inbox: &str, slug: &str| Taken {
            peer: "alice".into(),
            file: inbox.into(),
            sent_in: None,
            blob: None,
            slug: slug.into(),
            round: 1,
            inbox: inbox.into(),
            at: at(0),
        };
        let ledger = [
            taken("inbox/h1.md", "w1-work"),
            taken("inbox/h2.md", "w2-work"),
            taken("inbox/h3.md", "w1-work"),
        ];
        let inbox: Vec<(String, u64)> = [
            "inbox/a.md",
            "inbox/h2.md",
            "inbox/h1.md",
            "inbox/h3.md",
            "inbox/b.md",
        ]
        .map(|rel| (rel.to_string(), 10))
        .into();
        let (keep, slug) = route(&ledger, &inbox, 1000);
        assert_eq!(slug.as_deref(), Some("w2-work"), "the oldest handoff's");
        assert_eq!(keep, [true, true, false, false, true]);
        let (keep, slug) = route(&ledger, &[("inbox/a.md".to_string(), 10)], 1000);
        assert_eq!((keep, slug), (vec![true], None));
        // Past the budget the others wait; the first is always taken.
        let (keep, _) = route(&ledger, &inbox[2..4], 15);
        assert_eq!(keep, [true, false]);
        let (keep, _) = route(&ledger, &[("inbox/h1.md".to_string(), 99)], 15);
        assert_eq!(keep, [true]);
    }
}
