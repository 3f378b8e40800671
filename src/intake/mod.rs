//! The intake's reading side (DESIGN 14): what each peer posted for this
//! agent and whether it may be taken ([`survey()`]), where a peer is read
//! from ([`source`]), and the memo of handoffs already read ([`reads`]).
//! The supervisor takes what is ready (writing the inbox message, the
//! record, the ledger line and the commit); `hearth status` names what is
//! not. The admission rules themselves are `collab::intake`'s.

pub mod reads;
pub mod source;
pub mod survey;

pub use reads::HandoffReads;
pub use source::Source;
pub use survey::{missing, problems, refusal, survey, Ready, Survey, UnaskedFounding};
