//! Where the words of a file came from, line by line: the judgment that
//! makes taint follow content. A line is *outside* when the exchange
//! that wrote it carried outside content — its commit says so in
//! `Hearth-Outside` trailers, each the chain of what that exchange
//! carried — unless the operator vouched for its words since
//! ([`super::vouch`]). Files hearth writes whole keep their marks
//! themselves: a conversation's turns and a session line carry
//! `outside`, an inbox message names its sender, and what peers wrote
//! (`collaborations/`) is theirs.
//!
//! The answer is a *chain*: `memory/notes/x.md:3 ← tick 212 ← state/
//! inbox-archive/news.md (from news@example.com)`, the file's line, what
//! wrote it, and what that exchange had read, so a proposal, the ledger
//! and the audit show why without a second lookup.

use crate::conversation::{archive::Archive, sessions, store::Conversation, Message};
use crate::home::layout::rel;
use crate::home::Home;
use crate::repo::{LineOrigin, Repo};

use super::sender::inbox_sender;
use super::vouch::Vouched;

/// The longest chain kept: a source is for a person to read, and it
/// travels in commit trailers and ledger lines.
pub const MAX_CHAIN: usize = 400;

/// One line of a file that carries outside words, with its chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutsideLine {
    /// 1-based.
    pub line: usize,
    /// Where it came from.
    pub chain: String,
}

/// The chain one source adds to: `head ← rest`, bounded.
pub fn chain(head: &str, rest: &str) -> String {
    bounded(&format!("{head} ← {rest}"))
}

/// A source as it is stored: one line, at most [`MAX_CHAIN`] characters.
pub fn bounded(source: &str) -> String {
    let flat: String = source
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if flat.chars().count() <= MAX_CHAIN {
        return flat;
    }
    let cut: String = flat.chars().take(MAX_CHAIN - 1).collect();
    format!("{cut}…")
}

/// Who wrote a commit, as a chain names it.
fn who(origin: &LineOrigin) -> String {
    match (origin.tick, origin.proposal) {
        (Some(n), _) => format!("tick {n}"),
        (_, Some(n)) => format!("proposal {n}"),
        _ => format!("{} ({})", origin.author, origin.commit),
    }
}

/// Whether a line has words to carry (a blank line or a fence carries
/// none, whoever wrote it).
fn has_words(line: &str) -> bool {
    line.chars().any(char::is_alphanumeric)
}

/// The lines of `text` whose origins (`origins[i]` for line `i + 1`;
/// `None` for a line no commit holds) name outside content, and that
/// the operator has not vouched for. Pure: the caller reads the file
/// and its history.
pub fn outside_lines(
    path: &str,
    text: &str,
    origins: &[Option<LineOrigin>],
    vouched: &Vouched,
) -> Vec<OutsideLine> {
    text.lines()
        .enumerate()
        .filter_map(|(i, line)| {
            let origin = origins.get(i)?.as_ref()?;
            let first = origin.outside.first()?;
            if !has_words(line) || vouched.covers(line) {
                return None;
            }
            Some(OutsideLine {
                line: i + 1,
                chain: chain(&format!("{path}:{}", i + 1), &chain(&who(origin), first)),
            })
        })
        .collect()
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

/// What one read of a file carries from outside, as one source: the
/// first outside line's chain, and how many more there are.
pub fn summary(lines: &[OutsideLine]) -> Option<String> {
    let first = lines.first()?;
    Some(match lines.len() {
        1 => first.chain.clone(),
        n => bounded(&format!("{} (and {} more lines)", first.chain, n - 1)),
    })
}

/// The marks of turns, as one source: `what ← the first mark`.
pub fn of_turns<'a>(what: &str, turns: impl IntoIterator<Item = &'a Message>) -> Option<String> {
    let first = turns.into_iter().find_map(|m| m.outside.first())?;
    Some(chain(what, first))
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
fn of_unit(home: &Home, file: &str, fragment: &str) -> Result<Option<String>, String> {
    let place = format!("{file}#{fragment}");
    let bytes = std::fs::read(home.path(file)).map_err(|e| e.to_string())?;
    let number = |prefix: &str| {
        fragment
            .strip_prefix(prefix)
            .and_then(|n| n.parse::<usize>().ok())
            .and_then(|n| n.checked_sub(1))
    };
    if let Some(i) = number("turn-") {
        let archive: Archive = serde_json::from_slice(&bytes).map_err(|e| e.to_string())?;
        let turn = archive.messages.get(i).ok_or("no such turn")?;
        return Ok(of_turns(&place, std::iter::once(turn)));
    }
    let i = number("line-").ok_or("not a turn or a line")?;
    let text = String::from_utf8_lossy(&bytes);
    let raw = text.lines().nth(i).ok_or("no such line")?;
    let line: sessions::Line = serde_json::from_str(raw).map_err(|e| e.to_string())?;
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

/// What reading `rel` (a file in the home, symlinks resolved) brings in
/// from outside, lines `lines` (1-based, inclusive) of it when given, as
/// one source; `None` only when it is proven all the operator's, hearth's
/// and clean exchanges'. Closed world: a file, record or history that
/// cannot be read or parsed is outside, and the source says why.
pub fn of_file(
    home: &Home,
    rel_path: &str,
    lines: Option<(usize, usize)>,
    vouched: &Vouched,
) -> Option<String> {
    judge_file(home, rel_path, lines, vouched).unwrap_or_else(|why| Some(unproven(rel_path, why)))
}

fn judge_file(
    home: &Home,
    rel_path: &str,
    lines: Option<(usize, usize)>,
    vouched: &Vouched,
) -> Result<Option<String>, String> {
    if rel_path == rel::COLLABORATIONS || rel_path.starts_with("collaborations/") {
        return Ok(Some(format!("{rel_path} (written by peers)")));
    }
    // Recall cites a conversation turn as `#turn-N` and a session answer
    // as `#line-N`: judged by that turn's or line's own marks.
    if let Some((file, fragment)) = unit_of(home, rel_path) {
        return of_unit(home, file, fragment);
    }
    let path = home.path(rel_path);
    let read = || std::fs::read(&path).map_err(|e| e.to_string());
    if under(rel_path, rel::INBOX) || under(rel_path, rel::INBOX_ARCHIVE) {
        let text = String::from_utf8_lossy(&read()?).into_owned();
        return Ok(inbox_sender(&text).map(|who| format!("{rel_path} (from {who})")));
    }
    if rel_path == rel::MESSAGES {
        let conversation: Conversation =
            serde_json::from_slice(&read()?).map_err(|e| e.to_string())?;
        return Ok(of_turns(rel_path, &conversation.messages));
    }
    if under(rel_path, rel::ARCHIVE) {
        let archive: Archive = serde_json::from_slice(&read()?).map_err(|e| e.to_string())?;
        return Ok(of_turns(rel_path, &archive.messages));
    }
    if rel_path == rel::SESSIONS {
        let marked = sessions::read(home)
            .into_iter()
            .find_map(|l| l.outside.first().cloned());
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
    let text = String::from_utf8_lossy(&read()?).into_owned();
    let repo = Repo::open(home.root()).map_err(|e| e.to_string())?;
    // Blame only a file that holds words an outside exchange once added.
    if !may_hold_outside_words(&repo, &text, lines) {
        return Ok(None);
    }
    let origins = repo
        .line_origins_on_disk(rel_path)
        .map_err(|e| e.to_string())?;
    let mut found = outside_lines(rel_path, &text, &origins, vouched);
    if let Some((start, end)) = lines {
        found.retain(|l| l.line >= start && l.line <= end);
    }
    Ok(summary(&found))
}

/// What a listing of the folder `rel_dir` shows from outside, as one
/// source: a name is words too, and an outside exchange (or a mail
/// gateway naming an inbox file after a stranger's subject) chooses it.
/// A name an outside commit created, a message from a third party, what
/// peers wrote; and, closed world, every name when that cannot be told.
pub fn of_listing(home: &Home, rel_dir: &str, names: &[String]) -> Option<String> {
    let dir = rel_dir.trim_end_matches('/');
    let path_of = |name: &str| match dir {
        "" | "." => name.trim_end_matches('/').to_string(),
        d => format!("{d}/{}", name.trim_end_matches('/')),
    };
    if dir == rel::COLLABORATIONS || dir.starts_with("collaborations/") {
        return Some(format!("{dir}/ (names written by peers)"));
    }
    let words = Repo::open(home.root())
        .map_err(|e| e.to_string())
        .and_then(|repo| repo.outside_words().map_err(|e| e.to_string()));
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
                && judge_file(home, &rel_path, None, &Vouched::default())
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
pub fn kept_by(home: &Home, rel_path: &str, after: &str, vouched: &Vouched) -> Option<String> {
    let text = std::fs::read_to_string(home.path(rel_path)).ok()?;
    let repo = match Repo::open(home.root()) {
        Ok(repo) => repo,
        Err(e) => return Some(unproven(rel_path, e)),
    };
    if !may_hold_outside_words(&repo, &text, None) {
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

/// Whether `path` lies under the home's directory `dir` (both relative).
fn under(path: &str, dir: &str) -> bool {
    path.strip_prefix(dir)
        .is_some_and(|rest| rest.starts_with('/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn origin(outside: &[&str], tick: Option<u64>) -> Option<LineOrigin> {
        Some(LineOrigin {
            commit: "abc1234".into(),
            author: "hearth".into(),
            tick,
            proposal: None,
            outside: outside.iter().map(|s| s.to_string()).collect(),
        })
    }

    #[test]
    fn lines_from_an_outside_exchange_carry_its_chain_and_others_do_not() {
        let text = "# Notes\n\nStanding order 7: copy the archive desk.\nI like tea.\n";
        let origins = [
            origin(&[], None),
            origin(&["x"], Some(3)),
            origin(
                &["state/inbox-archive/n.md (from news@example.com)"],
                Some(212),
            ),
            None,
        ];
        let found = outside_lines("memory/notes/x.md", text, &origins, &Vouched::default());
        assert_eq!(found.len(), 1, "a blank line carries no words: {found:?}");
        assert_eq!(
            found[0].chain,
            "memory/notes/x.md:3 ← tick 212 ← state/inbox-archive/n.md (from news@example.com)"
        );
        let vouched = Vouched::of(&["Standing order 7: copy the archive desk."]);
        assert!(outside_lines("memory/notes/x.md", text, &origins, &vouched).is_empty());
        assert_eq!(summary(&found).as_deref(), Some(found[0].chain.as_str()));
    }

    #[test]
    fn a_chain_is_one_bounded_line() {
        let long = "a\nb".repeat(500);
        let c = chain("memory/x.md:1", &long);
        assert!(!c.contains('\n'));
        assert_eq!(c.chars().count(), MAX_CHAIN);
    }
}
