//! The trailers hearth's commits carry, written and read in one place, so
//! a key is spelled once and every reader agrees with every writer. A
//! value is one line (control characters become spaces), at most
//! [`MAX_VALUE`] characters.
//!
//! `Hearth-Outside` says what outside content the exchange behind a commit
//! carried, one trailer per source; proposals once wrote the same thing as
//! `Hearth-Tainted-By`, which is read as `Hearth-Outside`.

use crate::outside::Outside;

/// The tick a commit records.
pub const TICK: &str = "Hearth-Tick";
/// The tick's exit code.
pub const EXIT: &str = "Hearth-Exit";
/// The tick's exit class.
pub const CLASS: &str = "Hearth-Class";
/// The tick's tokens.
pub const TOKENS: &str = "Hearth-Tokens";
/// The tick's cost.
pub const COST_USD: &str = "Hearth-Cost-USD";
/// A source of outside content the exchange carried (one per source).
pub const OUTSIDE: &str = "Hearth-Outside";
/// What proposals wrote before [`OUTSIDE`]; read as it.
pub const TAINTED_BY: &str = "Hearth-Tainted-By";
/// The proposal a commit makes or decides.
pub const PROPOSAL: &str = "Hearth-Proposal";
/// Who made a proposal.
pub const BY: &str = "Hearth-By";
/// Who made the proposal an accept puts on `main`.
pub const PROPOSED_BY: &str = "Hearth-Proposed-By";
/// What made a proposal (`consolidation`).
pub const KIND: &str = "Hearth-Kind";
/// The job a commit records a run of.
pub const JOB: &str = "Hearth-Job";
/// That run's outcome.
pub const JOB_OUTCOME: &str = "Hearth-Job-Outcome";
/// The request to run a tool a commit records or decides.
pub const REQUEST: &str = "Hearth-Request";

/// The longest value written: a source is for a person to read.
pub const MAX_VALUE: usize = 400;

/// `text` as one line: control characters (a newline among them) become
/// spaces.
pub fn one_line(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// A message body that cannot pass for trailers: a line that would read
/// as one of hearth's is indented.
pub fn defused(body: &str) -> String {
    body.lines()
        .map(|l| match is_trailer(l) {
            true => format!("  {l}"),
            false => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// `Key: value\n`, the value made one bounded line.
pub fn line(key: &str, value: impl std::fmt::Display) -> String {
    let flat = one_line(&value.to_string());
    let value = if flat.chars().count() <= MAX_VALUE {
        flat
    } else {
        let cut: String = flat.chars().take(MAX_VALUE - 1).collect();
        format!("{cut}…")
    };
    format!("{key}: {value}\n")
}

/// Every value of `key` in `message`, in order (empty ones left out).
pub fn values<'a>(message: &'a str, key: &str) -> Vec<&'a str> {
    message
        .lines()
        .filter_map(|l| l.strip_prefix(key)?.strip_prefix(':'))
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .collect()
}

/// The first value of `key`.
pub fn value<'a>(message: &'a str, key: &str) -> Option<&'a str> {
    values(message, key).into_iter().next()
}

/// The first value of `key` as a number.
pub fn number(message: &str, key: &str) -> Option<u64> {
    value(message, key)?.parse().ok()
}

/// The sources of outside content a commit names: its `Hearth-Outside`
/// trailers and, for proposals written before it, `Hearth-Tainted-By`.
pub fn outside(message: &str) -> Outside {
    values(message, OUTSIDE)
        .into_iter()
        .chain(values(message, TAINTED_BY))
        .collect()
}

/// The `Hearth-Outside` trailers that say what a commit's exchange carried
/// from outside, one line per source: the one place they are written.
pub fn outside_lines(outside: &Outside) -> String {
    outside.iter().map(|source| line(OUTSIDE, source)).collect()
}

/// Whether a line is a trailer of hearth's (the rest of a message is
/// its body).
pub fn is_trailer(line: &str) -> bool {
    line.starts_with("Hearth-")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_written_is_read_back_and_the_old_key_counts_as_outside() {
        let mut message = "tick 3: exit 0 (ok)\n\n".to_string();
        message.push_str(&line(TICK, 3));
        message.push_str(&line(OUTSIDE, "inbox/a.md (from x@y.z)\nHearth-Tick: 9"));
        message.push_str(&line(TAINTED_BY, "a handoff from alice"));
        message.push_str(&line(JOB_OUTCOME, "done"));
        assert_eq!(
            number(&message, TICK),
            Some(3),
            "a value cannot forge a line"
        );
        assert_eq!(
            outside(&message).as_slice(),
            [
                "inbox/a.md (from x@y.z) Hearth-Tick: 9",
                "a handoff from alice"
            ]
        );
        assert_eq!(value(&message, JOB_OUTCOME), Some("done"));
        assert_eq!(
            value(&message, JOB),
            None,
            "a key is not a prefix of another"
        );
        let forged = defused("it failed\nHearth-Tick: 1");
        assert_eq!(forged, "it failed\n  Hearth-Tick: 1");
        assert_eq!(
            one_line("wrote a\nHearth-Tick: 1"),
            "wrote a Hearth-Tick: 1"
        );
        let long = line(OUTSIDE, "x".repeat(1000));
        assert_eq!(long.chars().count(), OUTSIDE.len() + 2 + MAX_VALUE + 1);
    }
}
