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
    /// Its name cannot stand as a file here (a separator, `..`, a control
    /// character…): it is data, never a path.
    #[error("peer {peer}: a file in its outbox/ named {name}; it is not taken (a name a peer's tree carries is never made a path here)")]
    BadName {
        /// The peer.
        peer: String,
        /// The name, and what is wrong with it.
        name: super::peer_file::BadName,
    },
    /// A handoff taken already whose words were changed since, under the
    /// same name: the new words are not taken; the operator decides.
    #[error("peer {peer}: {path} was changed after it was taken (its blob was {was}, is {now}); the new words are not taken: compare them (`git show {was}` and `git show {now}` in the peer's repository) and ask its operator to hand off anew")]
    Rewritten {
        /// The peer.
        peer: String,
        /// The file.
        path: String,
        /// The blob taken.
        was: String,
        /// The blob there now.
        now: String,
    },
    /// The sender is not one of the collaboration's participants here.
    #[error("peer {peer}: {path} is in collaboration {slug}, which {peer} is not part of here (its participants: {participants}); it is not taken")]
    NotParticipant {
        /// The peer.
        peer: String,
        /// The file.
        path: String,
        /// The collaboration.
        slug: String,
        /// Its participants in this home's record.
        participants: String,
    },
    /// The round it claims is not the sender's to this home.
    #[error("peer {peer}: {path} claims round {round} of {slug}, which its own record does not hold as a round from {peer} to this agent; it is not taken")]
    NotItsRound {
        /// The peer.
        peer: String,
        /// The file.
        path: String,
        /// The collaboration.
        slug: String,
        /// The round claimed.
        round: u32,
    },
    /// Past `[collaborations] max_rounds`: it waits.
    #[error("peer {peer}: {path} is round {round} of {slug}, past [collaborations] max_rounds ({max}); it waits: raise max_rounds in hearth.toml to take it, or `hearth collab complete {slug}`")]
    PastMaxRounds {
        /// The peer.
        peer: String,
        /// The file.
        path: String,
        /// The collaboration.
        slug: String,
        /// Its round.
        round: u32,
        /// The limit.
        max: u32,
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
