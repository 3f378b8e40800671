//! Why a peer's handoff was not taken in, by what the operator can check.

/// Why a file in a peer's `outbox/` was not taken in: named once in the
/// log and in `hearth status`, and left where it is.
#[derive(Debug, thiserror::Error)]
pub enum IntakeError {
    /// Not a regular file of bounded size (a FIFO, a device, too big), or
    /// unreadable.
    #[error("peer {peer}: {source}; it is not taken")]
    Unreadable {
        /// The peer.
        peer: String,
        /// What the bounded read said.
        #[source]
        source: crate::bounded::BoundedError,
    },
    /// Not UTF-8 text.
    #[error("peer {peer}: {path} is not UTF-8 text; it is not taken")]
    NotText {
        /// The peer.
        peer: String,
        /// The file.
        path: String,
    },
    /// Not a handoff hearth can read.
    #[error("peer {peer}: {path} is not a handoff hearth can read: {why}")]
    NotAHandoff {
        /// The peer.
        peer: String,
        /// The file.
        path: String,
        /// What is wrong with it.
        why: super::record::ParseError,
    },
    /// It says it comes from another home than the one it is in.
    #[error(
        "peer {peer}: {path} says it is from {claims:?}; a home hands off only as itself, so it is not taken"
    )]
    NotFromPeer {
        /// The peer whose outbox holds it.
        peer: String,
        /// The file.
        path: String,
        /// Who it claims to be from.
        claims: String,
    },
    /// This home's record of the collaboration could not be read.
    #[error(transparent)]
    Record(#[from] super::store::RecordError),
    /// The commit lock could not be taken.
    #[error(transparent)]
    Lock(#[from] crate::home::lock::LockError),
    /// Writing the inbox message, the record or the ledger line failed.
    #[error(transparent)]
    Write(#[from] crate::atomic::WriteError),
}
