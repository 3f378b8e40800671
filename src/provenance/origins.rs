//! The handle that judges what an exchange reads (`OriginJudge`): the home's
//! repository opened once for the exchange, and through it the set of
//! outside words read once per HEAD, so a recall of many hits or a long
//! run of reads does not reopen and reparse them for every judgment. The
//! judgments themselves: a file or a recall unit, a listing's names, the
//! lines a write keeps — each closed-world (what cannot be proven the
//! operator's is outside, and says why). The rules for lines and chains
//! are [`super::origin`]'s.

use crate::conversation::{archive::Archive, sessions, store::Conversation};
use crate::home::layout::rel;
use crate::home::Home;
use crate::repo::{Repo, RepoError};
use std::sync::Arc;

use super::origin::{
    bounded, chain, has_words, of_turns, outside_lines, summary, under, OutsideLine,
};
use super::sender::inbox_sender;
use super::vouch::Vouched;

/// What the replayed store of line origins covers: every place a judgment
/// or a citation asks who wrote lines of — the memory, the conversation
/// archives, the sessions, the collaborations. One scope for every process
/// that replays (a store of another scope is rebuilt, never half-trusted).
pub const REPLAYED: [&str; 4] = [
    rel::MEMORY,
    rel::ARCHIVE,
    rel::SESSIONS,
    rel::COLLABORATIONS,
];

/// The home's repository, with its line origins replayed up to HEAD first
/// (milliseconds for the commits since the last replay: the hand edits a
/// tick starts with, an ask's commit), so every judgment reads the store
/// instead of walking history with a blame. A replay that fails (a
/// shallow history, a full disk) leaves the judgments to the blame, which
/// meets the same history and says why.
pub fn open_repo(home: &Home) -> Result<Repo, crate::repo::RepoError> {
    let repo = Repo::open(home.root())?;
    if let Err(e) = repo.update_line_origins(&REPLAYED) {
        tracing::debug!("line origins not replayed: {e}");
    }
    Ok(repo)
}

/// The home and its repository, opened once for an exchange's judgments.
pub struct OriginJudge {
    home: Home,
    repo: Result<Repo, Arc<RepoError>>,
}

/// Why where a file's words came from could not be told. Each is outside
/// (the closed world), and each says which thing failed, so a caller can
/// tell "cannot read" from "read, and outside" (a judgment's `Ok(Some)`)
/// and a missing file from a broken history.
#[derive(Debug, Clone, thiserror::Error)]
pub enum Unproven {
    /// The file (or a journal) could not be read.
    #[error("{path}: {source}")]
    Unreadable {
        /// What could not be read.
        path: String,
        /// Why.
        source: Arc<std::io::Error>,
    },
    /// A record of hearth's does not parse.
    #[error("{path} does not parse: {why}")]
    Unparsable {
        /// The record.
        path: String,
        /// What the parser said.
        why: String,
    },
    /// A recall unit (`#turn-N`, `#line-N`) its holder does not have.
    #[error("{place}: {what}")]
    NoSuchUnit {
        /// The unit asked for.
        place: String,
        /// What is missing.
        what: &'static str,
    },
    /// The home's history could not be read.
    #[error("its history cannot be read: {0}")]
    History(Arc<RepoError>),
    /// A tainted ask's journal could not be read, so what it wrote under
    /// `memory/` is not known.
    #[error("an ask's journal cannot be read ({0})")]
    AskJournal(Box<Unproven>),
}

impl Unproven {
    fn unreadable(path: impl std::fmt::Display, e: std::io::Error) -> Unproven {
        Unproven::Unreadable {
            path: path.to_string(),
            source: Arc::new(e),
        }
    }

    fn unparsable(path: impl std::fmt::Display, e: serde_json::Error) -> Unproven {
        Unproven::Unparsable {
            path: path.to_string(),
            why: e.to_string(),
        }
    }

    fn history(e: RepoError) -> Unproven {
        Unproven::History(Arc::new(e))
    }
}

/// The part of an ask's journal (`ask::journal::Journal`) a judgment
/// needs: what it wrote, and what it carried from outside.
#[derive(serde::Deserialize)]
struct AskInFlight {
    #[serde(default)]
    touched: Vec<String>,
    #[serde(default)]
    outside: crate::outside::Outside,
}

/// The files tainted asks in progress wrote and have not committed yet,
/// each with the first of its ask's sources, read from their journals at
/// each judgment (an ask may start while an exchange runs). An error: a
/// journal that could not be read.
fn asks_in_flight(home: &Home) -> Result<Vec<(String, String)>, Unproven> {
    let entries = match std::fs::read_dir(home.path(rel::ASKS)) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(Unproven::unreadable(rel::ASKS, e)),
    };
    let mut written = Vec::new();
    for entry in entries {
        let path = entry
            .map_err(|e| Unproven::unreadable(rel::ASKS, e))?
            .path();
        if path.extension().is_none_or(|x| x != "json") {
            continue;
        }
        let shown = path.display();
        let bytes = std::fs::read(&path).map_err(|e| Unproven::unreadable(&shown, e))?;
        let ask: AskInFlight =
            serde_json::from_slice(&bytes).map_err(|e| Unproven::unparsable(&shown, e))?;
        if let Some(first) = ask.outside.first() {
            written.extend(ask.touched.into_iter().map(|t| (t, first.to_string())));
        }
    }
    Ok(written)
}

/// Whether `rel_path` is a file a tainted ask in progress wrote: its
/// source, chained to the ask's first. A journal that cannot be read
/// proves nothing about `memory/`.
fn written_by_a_tainted_ask(home: &Home, rel_path: &str) -> Result<Option<String>, Unproven> {
    match asks_in_flight(home) {
        Ok(written) => Ok(written
            .iter()
            .find(|(t, _)| t == rel_path)
            .map(|(_, first)| {
                chain(
                    &format!("{rel_path} (written by an ask in progress)"),
                    first,
                )
            })),
        Err(why) if under(rel_path, rel::MEMORY) => Err(Unproven::AskJournal(Box::new(why))),
        Err(_) => Ok(None),
    }
}

impl std::fmt::Debug for OriginJudge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "OriginJudge({})", self.home.root().display())
    }
}

/// Whether any line of `text` (of lines `lines`, when given) has the words
/// of a line an outside exchange's commit added: if none has, no line can
/// have an outside origin, and the file's blame is not needed. When the
/// set cannot be read, the blame decides.
fn may_hold_outside_words(repo: &Repo, text: &str, lines: Option<(usize, usize)>) -> bool {
    let Ok(words) = repo.outside_words() else {
        return true;
    };
    if words.lines.is_empty() {
        return false;
    }
    text.lines()
        .enumerate()
        .filter(|(i, _)| lines.is_none_or(|(a, b)| *i + 1 >= a && *i < b))
        .any(|(_, line)| has_words(line) && words.lines.contains(&crate::repo::line_digest(line)))
}

/// hearth's records under `state/` that hold only what hearth counted or
/// the operator said: the budget's sums, which flares the operator read,
/// the words the operator vouched for. Every other record — the ledger,
/// the books of proposals, requests, handoffs and jobs, the healer's and
/// the brake's logs — quotes what exchanges chose (senders' names,
/// subjects, file names, tool errors) without the origin of each word, so
/// reading one is reading outside words: the closed world's rule, whatever
/// the record says today.
fn operators_own_record(rel_path: &str) -> bool {
    [rel::BUDGET, rel::FLARES_READ, rel::VOUCHED].contains(&rel_path)
}

/// A record hearth writes as JSON under `state/` (not the conversation
/// and the session log, which carry their own marks).
fn hearths_record(rel_path: &str) -> bool {
    let Some(name) = rel_path.strip_prefix("state/") else {
        return false;
    };
    (name.ends_with(".json") || name.ends_with(".jsonl"))
        && rel_path != rel::MESSAGES
        && rel_path != rel::SESSIONS
        && !under(rel_path, rel::ARCHIVE)
}

/// Why nothing could be proven of a file: the source it is judged by.
fn unproven(rel_path: &str, why: impl std::fmt::Display) -> String {
    bounded(&format!(
        "{rel_path} (its origin could not be proven: {why})"
    ))
}

/// What one recall unit of a conversation archive (`turn-N`) or of the
/// session log (`line-N`) carries from outside; an error when the unit
/// cannot be found or read.
fn of_unit(home: &Home, file: &str, fragment: &str) -> Result<Option<String>, Unproven> {
    let place = format!("{file}#{fragment}");
    let no_such = |what| Unproven::NoSuchUnit {
        place: place.clone(),
        what,
    };
    let bytes = std::fs::read(home.path(file)).map_err(|e| Unproven::unreadable(file, e))?;
    let number = |prefix: &str| {
        fragment
            .strip_prefix(prefix)
            .and_then(|n| n.parse::<usize>().ok())
            .and_then(|n| n.checked_sub(1))
    };
    if let Some(i) = number("turn-") {
        let archive: Archive =
            serde_json::from_slice(&bytes).map_err(|e| Unproven::unparsable(file, e))?;
        let turn = archive
            .messages
            .get(i)
            .ok_or_else(|| no_such("no such turn"))?;
        return Ok(of_turns(&place, std::iter::once(turn)));
    }
    let i = number("line-").ok_or_else(|| no_such("not a turn or a line"))?;
    let text = String::from_utf8_lossy(&bytes);
    let raw = text.lines().nth(i).ok_or_else(|| no_such("no such line"))?;
    let line: sessions::Line =
        serde_json::from_str(raw).map_err(|e| Unproven::unparsable(&place, e))?;
    Ok(line.outside.first().map(|m| chain(&place, m)))
}

/// Whether `rel` names a recall unit (`state/archive/x.json#turn-3`,
/// `state/sessions.jsonl#line-9`) rather than a file: only those two
/// holders have units, and a file of that very name is a file (a note
/// may be called `orders#1.md`).
fn unit_of<'a>(home: &Home, rel_path: &'a str) -> Option<(&'a str, &'a str)> {
    let (file, fragment) = rel_path.split_once('#')?;
    let holds_units =
        file == rel::SESSIONS || (under(file, rel::ARCHIVE) && file.ends_with(".json"));
    (holds_units && !home.path(rel_path).exists()).then_some((file, fragment))
}

impl OriginJudge {
    /// The handle for `home`: its repository opened once (an error kept,
    /// to be said by every judgment it spoils).
    pub fn open(home: &Home) -> OriginJudge {
        OriginJudge {
            home: home.clone(),
            repo: open_repo(home).map_err(Arc::new),
        }
    }

    /// What reading `rel` (a file in the home, symlinks resolved) brings
    /// in from outside, lines `lines` (1-based, inclusive) of it when
    /// given, as one source; `None` only when it is proven all the
    /// operator's, hearth's and clean exchanges'. Closed world: a file,
    /// record or history that cannot be read or parsed is outside, and
    /// the source says why.
    pub fn of_file(
        &self,
        rel_path: &str,
        lines: Option<(usize, usize)>,
        vouched: &Vouched,
    ) -> Option<String> {
        judge_file(self, rel_path, lines, vouched)
            .unwrap_or_else(|why| Some(unproven(rel_path, why)))
    }

    fn repo(&self) -> Result<&Repo, Unproven> {
        self.repo
            .as_ref()
            .map_err(|e| Unproven::History(Arc::clone(e)))
    }
}

/// [`OriginJudge::of_file`] with a handle of its own, for a single judgment.
pub fn of_file(
    home: &Home,
    rel_path: &str,
    lines: Option<(usize, usize)>,
    vouched: &Vouched,
) -> Option<String> {
    OriginJudge::open(home).of_file(rel_path, lines, vouched)
}

fn judge_file(
    origins: &OriginJudge,
    rel_path: &str,
    lines: Option<(usize, usize)>,
    vouched: &Vouched,
) -> Result<Option<String>, Unproven> {
    let home = &origins.home;
    if rel_path == rel::COLLABORATIONS || rel_path.starts_with("collaborations/") {
        return Ok(Some(format!("{rel_path} (written by peers)")));
    }
    // Recall cites a conversation turn as `#turn-N` and a session answer
    // as `#line-N`: judged by that turn's or line's own marks.
    if let Some((file, fragment)) = unit_of(home, rel_path) {
        return of_unit(home, file, fragment);
    }
    let path = home.path(rel_path);
    let read = || std::fs::read(&path).map_err(|e| Unproven::unreadable(rel_path, e));
    if under(rel_path, rel::INBOX) || under(rel_path, rel::INBOX_ARCHIVE) {
        let text = String::from_utf8_lossy(&read()?).into_owned();
        return Ok(inbox_sender(&text).map(|who| format!("{rel_path} (from {who})")));
    }
    if rel_path == rel::MESSAGES {
        let conversation: Conversation =
            serde_json::from_slice(&read()?).map_err(|e| Unproven::unparsable(rel_path, e))?;
        return Ok(of_turns(rel_path, &conversation.messages));
    }
    if under(rel_path, rel::ARCHIVE) {
        let archive: Archive =
            serde_json::from_slice(&read()?).map_err(|e| Unproven::unparsable(rel_path, e))?;
        return Ok(of_turns(rel_path, &archive.messages));
    }
    if rel_path == rel::SESSIONS {
        let marked = sessions::read(home)
            .into_iter()
            .find_map(|l| l.outside.first().map(str::to_string));
        return Ok(marked.map(|m| chain(rel_path, &m)));
    }
    if operators_own_record(rel_path) {
        return Ok(None);
    }
    // A flare reports what went wrong in the words of what went wrong
    // (a tool's error, a sender's name): hearth's record of outside words.
    if under(rel_path, rel::OUTBOX) && rel_path.contains("-flare-") {
        return Ok(Some(format!(
            "{rel_path} (a flare, which quotes what it reports)"
        )));
    }
    if hearths_record(rel_path) {
        return Ok(Some(format!(
            "{rel_path} (hearth's record, which quotes what exchanges and senders chose)"
        )));
    }
    // Written by a tainted ask still running (or cut): not committed
    // yet, so no history says so; its journal does.
    if let Some(source) = written_by_a_tainted_ask(home, rel_path)? {
        return Ok(Some(source));
    }
    let text = String::from_utf8_lossy(&read()?).into_owned();
    let repo = origins.repo()?;
    // Blame only a file that holds words an outside exchange once added.
    if !may_hold_outside_words(repo, &text, lines) {
        return Ok(None);
    }
    let origins = repo
        .line_origins_on_disk(rel_path)
        .map_err(Unproven::history)?;
    let mut found = outside_lines(rel_path, &text, &origins, vouched);
    if let Some((start, end)) = lines {
        found.retain(|l| l.line >= start && l.line <= end);
    }
    Ok(summary(&found))
}

/// What lines a diff shows as removed from `rel` (a deleted file's whole
/// text, or lines rewritten since) bring in from outside, as one source:
/// no file on disk holds them any more, so no blame can clear them, and
/// any of them an outside commit once added is outside. Closed world: a
/// history that cannot be read is outside.
pub fn of_removed(origins: &OriginJudge, rel_path: &str, removed: &str) -> Option<String> {
    let repo = match origins.repo() {
        Ok(repo) => repo,
        Err(e) => return Some(unproven(rel_path, e)),
    };
    may_hold_outside_words(repo, removed, None).then(|| {
        bounded(&format!(
            "{rel_path} (lines since removed, which an outside exchange had written)"
        ))
    })
}

/// What a listing of the folder `rel_dir` shows from outside, as one
/// source: a name is words too, and an outside exchange (or a mail
/// gateway naming an inbox file after a stranger's subject) chooses it.
/// A name an outside commit created, a message from a third party, what
/// peers wrote; and, closed world, every name when that cannot be told.
pub fn of_listing(origins: &OriginJudge, rel_dir: &str, names: &[String]) -> Option<String> {
    let dir = rel_dir.trim_end_matches('/');
    let path_of = |name: &str| match dir {
        "" | "." => name.trim_end_matches('/').to_string(),
        d => format!("{d}/{}", name.trim_end_matches('/')),
    };
    if dir == rel::COLLABORATIONS || dir.starts_with("collaborations/") {
        return Some(format!("{dir}/ (names written by peers)"));
    }
    let words = origins
        .repo()
        .and_then(|repo| repo.outside_words().map_err(Unproven::history));
    let words = match words {
        Ok(words) => words,
        Err(why) => return Some(unproven(&format!("{dir}/"), why)),
    };
    for name in names {
        let rel_path = path_of(name);
        let message = under(&rel_path, rel::INBOX) || under(&rel_path, rel::INBOX_ARCHIVE);
        let from_outside = words.names.contains(&crate::repo::name_digest(&rel_path))
            || (message
                && !name.ends_with('/')
                && judge_file(origins, &rel_path, None, &Vouched::default())
                    .map_or(true, |found| found.is_some()));
        if from_outside {
            return Some(bounded(&format!(
                "{dir}/ (the name {name} was chosen outside the operator)"
            )));
        }
    }
    None
}

/// The outside lines of `rel` as it is now that a write leaving `after`
/// keeps, as one source: a clean exchange that turns a stranger's note
/// into identity (`core: true`, a move into `memory/core/`) carries the
/// stranger's words without reading them. Closed world: a history that
/// cannot be read is outside.
pub fn kept_by(
    origins: &OriginJudge,
    rel_path: &str,
    after: &str,
    vouched: &Vouched,
) -> Option<String> {
    let text = std::fs::read_to_string(origins.home.path(rel_path)).ok()?;
    let repo = match origins.repo() {
        Ok(repo) => repo,
        Err(e) => return Some(unproven(rel_path, e)),
    };
    if !may_hold_outside_words(repo, &text, None) {
        return None;
    }
    let origins = match repo.line_origins_on_disk(rel_path) {
        Ok(origins) => origins,
        Err(e) => return Some(unproven(rel_path, e)),
    };
    let kept: std::collections::BTreeSet<&str> = after.lines().map(str::trim).collect();
    let lines: Vec<OutsideLine> = outside_lines(rel_path, &text, &origins, vouched)
        .into_iter()
        .filter(|l| {
            text.lines()
                .nth(l.line - 1)
                .is_some_and(|t| kept.contains(t.trim()))
        })
        .collect();
    summary(&lines)
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // fixtures, not state
mod tests {
    use super::*;

    /// The closed world tells its failures apart: a file that is not
    /// there, a record that does not parse and a history that cannot be
    /// read are each outside, and each says which it was.
    #[test]
    fn a_missing_file_a_broken_record_and_a_lost_history_are_told_apart() {
        let dir = tempfile::tempdir().unwrap();
        let now = chrono::DateTime::from_timestamp(1_790_000_000, 0).unwrap();
        let home = crate::home::init(dir.path(), now).unwrap().home;
        let judge = OriginJudge::open(&home);
        let vouched = Vouched::default();
        match judge_file(&judge, "memory/gone.md", None, &vouched) {
            Err(Unproven::Unreadable { path, source }) => {
                assert_eq!(path, "memory/gone.md");
                assert_eq!(source.kind(), std::io::ErrorKind::NotFound);
            }
            other => panic!("a missing file is unreadable, not {other:?}"),
        }
        std::fs::write(home.path(rel::MESSAGES), "{ torn").unwrap();
        assert!(matches!(
            judge_file(&judge, rel::MESSAGES, None, &vouched),
            Err(Unproven::Unparsable { .. })
        ));
        std::fs::write(home.path("memory/a.md"), "a line\n").unwrap();
        std::fs::remove_dir_all(home.root().join(".git")).unwrap();
        let blind = OriginJudge::open(&home);
        match judge_file(&blind, "memory/a.md", None, &vouched) {
            Err(e @ Unproven::History(_)) => {
                assert!(e.to_string().starts_with("its history cannot be read"))
            }
            other => panic!("a lost history is said as such, not {other:?}"),
        }
        let said = blind.of_file("memory/a.md", None, &vouched).unwrap();
        assert!(said.contains("its origin could not be proven"), "{said}");
    }
}
