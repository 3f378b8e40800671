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
    /// The collaboration.
    pub slug: String,
    /// Its round.
    pub round: u32,
    /// The inbox message it became.
    pub inbox: String,
    /// When it was taken.
    pub at: DateTime<Utc>,
}

/// Which of a tick's inbox messages (`inbox/…` paths, oldest first) it
/// takes now, and the collaboration they belong to: every message that is
/// not a handoff, and the handoffs of one collaboration only — the oldest
/// one's — so that the tick's tools run in one working directory. The
/// others wait for the next tick.
pub fn route(taken: &[Taken], inbox: &[String]) -> (Vec<bool>, Option<String>) {
    let slug_of = |rel: &String| {
        taken
            .iter()
            .find(|t| &t.inbox == rel)
            .map(|t| t.slug.clone())
    };
    let chosen = inbox.iter().find_map(slug_of);
    let keep = inbox
        .iter()
        .map(|rel| slug_of(rel).is_none_or(|s| Some(&s) == chosen.as_ref()))
        .collect();
    (keep, chosen)
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

/// Decides the intake of a status notice (`kind: notice`): the record
/// takes the sender's status when the collaboration was completed, keeps
/// this home's events, and the inbox says what happened.
pub fn take_notice(h: &Handoff, mine: Option<Collaboration>) -> Intake {
    let what = h.notice.as_deref().unwrap_or("");
    let mut record = mine.unwrap_or_else(|| h.collaboration.clone());
    match what {
        "complete" if record.status != Stage::Abandoned => record.status = Stage::Complete,
        // An operator's status change travels: the latest one stands.
        "pause" | "abandon" | "reopen" => record.status = h.collaboration.status,
        "rename" => record.name.clone_from(&h.collaboration.name),
        _ => {}
    }
    for event in &h.collaboration.events {
        if !record.events.contains(event) {
            record.events.push(event.clone());
        }
    }
    record.events.sort_by_key(|e| e.at);
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

/// Decides the intake of round `h.round`, which the sender committed in
/// `sent_in`. The sender's record is the base (it holds the new round); a
/// status this home's operator set (paused, complete, abandoned) stands,
/// status changes made here are kept, and what this home knew of the
/// rounds (the commits on its side) is kept too.
pub fn take(
    h: &Handoff,
    mine: Option<Collaboration>,
    max_rounds: u32,
    sent_in: Option<String>,
) -> Intake {
    let mut record = h.collaboration.clone();
    if let Some(round) = record.rounds.iter_mut().find(|r| r.n == h.round) {
        round.sent_in = round.sent_in.take().or(sent_in);
    }
    if let Some(mine) = mine {
        record.learn(&mine.rounds);
        if mine.status != Stage::Active {
            record.status = mine.status;
        }
        for event in mine.events {
            if !record.events.contains(&event) {
                record.events.push(event);
            }
        }
        record.events.sort_by_key(|e| e.at);
        for round in mine.rounds {
            if !record.rounds.iter().any(|r| r.n == round.n) {
                record.rounds.push(round);
            }
        }
        record.rounds.sort_by_key(|r| r.n);
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
        let first = take(&sent.handoff, None, 12, Some("c0ffee".into()));
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
        let again = take(&sent.handoff, Some(mine), 12, None);
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
    fn a_tick_takes_one_collaborations_handoffs_and_every_other_message() {
        let taken = |inbox: &str, slug: &str| Taken {
            peer: "alice".into(),
            file: inbox.into(),
            sent_in: None,
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
        let inbox: Vec<String> = [
            "inbox/a.md",
            "inbox/h2.md",
            "inbox/h1.md",
            "inbox/h3.md",
            "inbox/b.md",
        ]
        .map(String::from)
        .into();
        let (keep, slug) = route(&ledger, &inbox);
        assert_eq!(slug.as_deref(), Some("w2-work"), "the oldest handoff's");
        assert_eq!(keep, [true, true, false, false, true]);
        let (keep, slug) = route(&ledger, &["inbox/a.md".to_string()]);
        assert_eq!((keep, slug), (vec![true], None));
    }
}
