//! Writing what the peers handed off (DESIGN 14), all that is ready at
//! once: each handoff's inbox message, this home's record of each
//! collaboration (once per collaboration, its rounds merged in order), the
//! ledger lines (one write), and one commit; then the commit that took
//! them goes into each record, in one more. A backlog of hundreds after an
//! outage is two commits, not two per handoff.
//!
//! The order keeps "exactly once" through a kill at any point: the ledger
//! lines, which say "taken", are written after every message and record
//! they stand for. Killed before them, the next start finds the messages
//! (in `inbox/` or its archive), writes no second copy, merges the rounds
//! into the records by number, and only then records them.

use crate::mailbox::cause::Cause;
use std::collections::BTreeMap;

use super::Supervisor;
use crate::collab::handoff::Handoff;
use crate::collab::intake::{self, Taken};
use crate::collab::intake_error::IntakeError;
use crate::collab::{store, Collaboration};
use crate::home::layout::rel;
use crate::home::lock::CommitLock;
use crate::intake::{refusal, Ready};
use crate::repo::Identity;

/// What one intake wrote, for its commits.
#[derive(Default)]
struct TakenBatch {
    /// Every path to commit.
    paths: Vec<String>,
    /// The ledger lines.
    lines: Vec<String>,
    /// Each collaboration's record as it stands now, by slug.
    records: BTreeMap<String, Collaboration>,
    /// The rounds taken (not notices), by slug.
    rounds: BTreeMap<String, Vec<u32>>,
    /// Each handoff as the commit says it (`from alice, design-x round
    /// 1`), with its inbox message, for the commit and the log.
    said: Vec<(String, String)>,
    /// How many were new (not found already written by a supervisor that
    /// was killed before recording them).
    new: usize,
}

impl Supervisor<'_> {
    /// Takes every handoff in `ready` (oldest first within each peer) and
    /// commits them together; how many were new.
    pub(super) fn take_all(&mut self, ready: Vec<Ready>) -> Result<usize, IntakeError> {
        let now = self.options.clock.now();
        let _lock = CommitLock::acquire(self.home)?;
        let mut written = TakenBatch::default();
        for r in &ready {
            // One that cannot be taken (its record unreadable, the disk
            // refusing its message) is named and left for the next look;
            // the others are taken. Nothing of it was written.
            if let Err(problem) = self.write_one(r, &mut written, now) {
                self.report_once(problem.to_string());
            }
        }
        if written.lines.is_empty() {
            return Ok(0);
        }
        // Each record once, with all its rounds (written whether or not a
        // message was: a round taken twice keeps one, rounds merging by
        // number).
        for record in written.records.values() {
            written.paths.push(store::save(self.home, record)?);
        }
        if let Some(pause) = self.options.intake_pause.filter(|_| written.new > 0) {
            std::thread::sleep(pause);
        }
        crate::atomic::append_line(&self.home.path(rel::HANDOFFS), &written.lines.join("\n"))?;
        written.paths.insert(0, rel::HANDOFFS.to_string());
        for (what, inbox) in &written.said {
            tracing::info!("took handoff {what} ({inbox})");
        }
        let new = written.new;
        self.commit_taken(written, now);
        Ok(new)
    }

    /// The inbox message and the ledger line for `r`, its round merged
    /// into the record held in `written`.
    fn write_one(
        &self,
        r: &Ready,
        written: &mut TakenBatch,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Result<(), IntakeError> {
        let h = &r.handoff;
        let inbox_rel = self.inbox_landing(r)?;
        let name = inbox_rel.rsplit('/').next().unwrap_or_default().to_string();
        let already = self.home.path(&inbox_rel).exists()
            || self.home.path(rel::INBOX_ARCHIVE).join(&name).exists();
        let slug = h.collaboration.slug.clone();
        // The record as this batch left it (kept there until this
        // handoff is written: one that fails takes nothing from it).
        let mine = match written.records.get(&slug) {
            Some(record) => Some(record.clone()),
            None => store::load(self.home, &slug)?,
        };
        let max_rounds = self.config.collaborations.max_rounds;
        let me = crate::collab::own_name(self.home);
        if let Err(refused) = intake::admit(h, &r.peer, &me, mine.as_ref(), max_rounds) {
            return Err(refusal(&r.peer, &r.file, h, refused, max_rounds));
        }
        let intake = match h.notice.as_deref() {
            Some(_) => intake::take_notice(h, &r.peer, mine),
            None => intake::take(h, &r.peer, mine, max_rounds, Some(r.sent_in.clone())),
        };
        if !already {
            if h.notice.as_deref() == Some("max-rounds") {
                written.paths.extend(self.flare_max_rounds(h, &r.peer, now));
            }
            crate::atomic::write(&self.home.path(&inbox_rel), intake.inbox_text.as_bytes())?;
            written.paths.push(inbox_rel.clone());
            written.new += 1;
        }
        written.records.insert(slug.clone(), intake.record);
        let taken = Taken {
            peer: r.peer.clone(),
            file: r.file.clone(),
            sent_in: Some(r.sent_in.clone()),
            blob: Some(r.blob.clone()),
            slug: slug.clone(),
            round: h.round,
            inbox: inbox_rel.clone(),
            at: now,
        };
        written
            .lines
            .push(serde_json::to_string(&taken).expect("a ledger line serialises"));
        let what = match h.notice.as_deref() {
            Some(what) => format!("notice from {}, {slug} {what}", r.peer),
            None => {
                written
                    .rounds
                    .entry(slug.clone())
                    .or_default()
                    .push(h.round);
                format!("from {}, {slug} round {}", r.peer, h.round)
            }
        };
        written.said.push((what, inbox_rel));
        Ok(())
    }

    /// Where `r`'s inbox message lands (relative to the home): one file
    /// directly in `inbox/`, checked where the bytes land, as the sandbox
    /// checks a tool's path — a name that would hold a separator, or an
    /// `inbox/` that resolves outside the home, is refused.
    fn inbox_landing(&self, r: &Ready) -> Result<String, IntakeError> {
        let name = intake::inbox_name(&r.peer, &r.file);
        let longest = crate::collab::peer_file::MAX_FILE_NAME_BYTES;
        let plain = crate::collab::peer_file::check_within(&name, longest).is_ok()
            && matches!(
                std::path::Path::new(&name).components().collect::<Vec<_>>()[..],
                [std::path::Component::Normal(_)]
            );
        let inbox = self.home.path(rel::INBOX);
        let inside = match (inbox.canonicalize(), self.home.root().canonicalize()) {
            (Ok(inbox), Ok(root)) => inbox.parent() == Some(root.as_path()),
            // Not made yet: the write makes it, under the home.
            (Err(_), Ok(_)) => !inbox.is_symlink(),
            _ => false,
        };
        if !plain || !inside {
            return Err(IntakeError::BadName {
                peer: r.peer.clone(),
                name: crate::collab::peer_file::BadName {
                    name: r.file.clone(),
                    why: "would not land in inbox/",
                },
            });
        }
        Ok(format!("{}/{name}", rel::INBOX))
    }

    /// Commits what was written, and then, for the rounds, the commit that
    /// took them into their records. A commit that fails is logged: what
    /// was taken stays, and the next commit carries it.
    fn commit_taken(&mut self, written: TakenBatch, now: chrono::DateTime<chrono::Utc>) {
        let specs: Vec<&str> = written.paths.iter().map(String::as_str).collect();
        let said: Vec<&str> = written.said.iter().map(|(what, _)| what.as_str()).collect();
        let message = match said.as_slice() {
            [one] => format!("handoff: {one}"),
            many => format!("handoff: {} taken\n\n{}", many.len(), many.join("\n")),
        };
        let taken_in = match self.repo.commit(&specs, &Identity::hearth(), &message, now) {
            Ok(Some(taken_in)) => taken_in,
            Ok(None) => return,
            Err(e) => {
                tracing::warn!("could not commit the handoffs taken ({e}); the next commit will");
                return;
            }
        };
        let mut paths = Vec::new();
        for (slug, rounds) in &written.rounds {
            let Some(mut record) = written.records.get(slug).cloned() else {
                continue;
            };
            for round in record.rounds.iter_mut().filter(|r| rounds.contains(&r.n)) {
                round.taken_in = Some(taken_in.clone());
            }
            match store::save(self.home, &record) {
                Ok(rel) => paths.push(rel),
                Err(e) => tracing::warn!("could not record which commit took {slug}: {e}"),
            }
        }
        if paths.is_empty() {
            return;
        }
        let specs: Vec<&str> = paths.iter().map(String::as_str).collect();
        let message = format!(
            "handoff: taken in {} ({})",
            &taken_in[..taken_in.len().min(10)],
            written
                .rounds
                .keys()
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
        );
        if let Err(e) = self.repo.commit(&specs, &Identity::hearth(), &message, now) {
            tracing::warn!("could not record which commit took the handoffs: {e}");
        }
    }

    /// A peer's notice that a collaboration reached its rounds limit
    /// there, flared to the operator; the flare's path, if it was written.
    fn flare_max_rounds(
        &self,
        h: &Handoff,
        peer: &str,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Option<String> {
        let slug = &h.collaboration.slug;
        let flare = crate::mailbox::outbox::Letter::flare(
            Cause::Collab,
            format!("collaboration {slug} reached its rounds limit at {peer}"),
            format!(
                "{}\n\nRead collaborations/{slug}.md: if the rounds still make progress, \
                 the operators raise [collaborations] max_rounds; else `hearth collab \
                 complete {slug}` or `abandon` it.",
                h.message.trim_end()
            ),
        );
        crate::mailbox::outbox::post(self.home, &flare, now)
            .inspect_err(|e| tracing::warn!("could not write the collab flare: {e}"))
            .ok()
    }
}
