//! What an ask carries from outside (`provenance`): never the hot memory
//! of exchanges that carried outside words; and how its commit says what
//! it carried. (Piped stdin the operator did not vouch for, and a question
//! an MCP client relayed, mark the ask where its turn shows them:
//! `turn.rs`.)

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
