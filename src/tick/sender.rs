//! Who an inbox message is from: the one rule every step reads the
//! answer of (`InboxMessage.sender`, set once by the tick's preparation).

use crate::mailbox::inbox::{InboxMessage, Sender};

/// Who `message` is from, given the handoffs taken (`(inbox path,
/// peer)`): pure, so every door judges a message by this one rule.
pub fn of(message: &InboxMessage, handoffs: &[(&str, &str)]) -> Sender {
    let named = crate::provenance::inbox_sender(&message.text);
    let peer = handoffs
        .iter()
        .find(|(inbox, _)| *inbox == message.rel)
        .map(|(_, peer)| format!("a handoff from {peer}"));
    let handoff_file = message
        .rel
        .rsplit('/')
        .next()
        .is_some_and(|name| name.starts_with("handoff-"))
        .then(|| "a handoff".to_string());
    match peer
        .or(handoff_file)
        .or_else(|| named.as_ref().map(|who| format!("from {who}")))
    {
        Some(label) => Sender::Outside { label, from: named },
        None => Sender::Operator,
    }
}
