//! What the page's handlers share: the page as it serves ([`Page`]), and
//! the home a request is about once the gates let it in ([`At`]).

use std::sync::Mutex;

use super::guard::Served;
use super::homes::Homes;
use super::session::Sessions;
use crate::clock::Clock;
use crate::home::Home;

/// The page as it serves: what every request shares.
pub(super) struct Page {
    pub(super) homes: Homes,
    pub(super) clock: Clock,
    pub(super) token: Option<String>,
    pub(super) served: Served,
    pub(super) secure_cookies: bool,
    pub(super) allow_act: bool,
    pub(super) sessions: Mutex<Sessions>,
    /// Event streams open now.
    pub(super) streams: std::sync::atomic::AtomicUsize,
    /// The environment the command was given: the model's key for the
    /// chat API's asks, and what operator tools may be given of it.
    pub(super) environment: std::collections::BTreeMap<String, String>,
    /// The hearth program the chat API asks with (`hearth ask`, a child
    /// without the page's token).
    pub(super) program: Option<std::path::PathBuf>,
}

/// The home a request is about, and where its pages are (`/h/NAME` with
/// `--homes`, empty for the one home).
#[derive(Clone)]
pub(super) struct At {
    pub(super) home: Home,
    pub(super) base: String,
}
