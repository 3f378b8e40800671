//! Mail, both ways (`[mail]`): the operator's mailbox read over IMAP
//! ([`watch`]), each new mail one inbox message ([`take`], [`letter`]),
//! the operator's only when proven ([`verdict`], checked by [`dkim`]);
//! what was taken counted in a ledger so intake is exactly once
//! ([`ledger`]).
//!
//! A channel is this shape: a watch that turns what arrives into inbox
//! messages with a verdict, and a way back for the agent's letters. A
//! second channel is one more room beside this one.

pub mod dkim;
pub mod imap;
pub mod ledger;
pub mod letter;
pub mod reply;
pub mod take;
pub mod verdict;
pub mod watch;
