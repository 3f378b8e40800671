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
//! Here, the pure rules: which lines are outside given their origins,
//! chains and their bounds. Reading files and history to judge them is
//! `origins.rs`'s.
//!
//! The answer is a *chain*: `memory/notes/x.md:3 ← tick 212 ← state/
//! inbox-archive/news.md (from news@example.com)`, the file's line, what
//! wrote it, and what that exchange had read, so a proposal, the ledger
//! and the audit show why without a second lookup.

use crate::conversation::Message;
use crate::repo::LineOrigin;

use super::vouch::Vouched;

/// The longest chain kept and the bounding of a source, with the list
/// they are kept in: [`crate::outside`].
pub use crate::outside::{bounded, MAX_CHAIN};

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
pub(super) fn has_words(line: &str) -> bool {
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

/// Whether `path` lies under the home's directory `dir` (both relative).
pub(super) fn under(path: &str, dir: &str) -> bool {
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
            time: 0,
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
