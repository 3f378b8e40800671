//! What a running supervisor publishes on disk for every reader (`hearth
//! status`, the metrics, the operator's page): its pid and phase and the
//! tick in progress ([`phase`]), what its pushes did ([`push`]), what the
//! fetches of each peer on another host said ([`peer_fetch`]), and the
//! room the disk has ([`room`]). The supervisor writes these; the read
//! room above reads them, and neither imports the other's
//! insides.

pub mod mail;
pub mod peer_fetch;
pub mod phase;
pub mod push;
pub mod room;
