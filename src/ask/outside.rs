//! What an ask carries from outside (`provenance`): piped stdin unless
//! the operator vouched for it on the command line, the question itself
//! when an MCP client relayed it, and never the hot
//! memory of exchanges that carried outside words; and how its commit says
//! what it carried.

use super::Question;
use crate::conversation::sessions;
use crate::outside::Outside;
use crate::repo::trailers;

/// Exchanges with no outside words in them.
pub(super) fn clean(exchanges: Vec<sessions::SessionExchange>) -> Vec<sessions::SessionExchange> {
    exchanges
        .into_iter()
        .filter(|x| x.outside.is_empty())
        .collect()
}

/// What the ask carries from outside before anything is read: piped
/// stdin, unless the operator said it is theirs (`curl … | hearth ask`
/// is a stranger's page, and mail piped in names its sender).
pub(super) fn at_start(question: &Question) -> Outside {
    let mut sources: Outside = question
        .relayed_by
        .iter()
        .map(|who| format!("the question, relayed by {who}"))
        .collect();
    let Some(attachment) = question
        .attachment
        .as_ref()
        .filter(|_| !question.stdin_is_mine)
    else {
        return sources;
    };
    sources.add(match crate::provenance::inbox_sender(&attachment.text) {
        Some(who) => format!("piped stdin of `hearth ask` (from {who})"),
        None => "piped stdin of `hearth ask` (not vouched for: --stdin-is-mine)".into(),
    });
    sources
}

/// Appends a `Hearth-Outside` trailer per source to a commit message.
pub(super) fn trailers(message: &mut String, sources: &Outside) {
    if sources.is_empty() {
        return;
    }
    if !message.ends_with("\n\n") {
        message.push_str(if message.ends_with('\n') {
            "\n"
        } else {
            "\n\n"
        });
    }
    message.push_str(&trailers::outside_lines(sources));
}
