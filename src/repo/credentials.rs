//! What hearth may authenticate with when it reaches another machine (a
//! push, a peer's fetch): only what its environment holds, never a file
//! hearth writes. The SSH agent or keys of the user it runs as need no
//! value here; these are for `https://`.

/// `HEARTH_GIT_USERNAME` and `HEARTH_GIT_PASSWORD`, read by `cli` and
/// passed down.
#[derive(Debug, Clone, Default)]
pub struct RemoteCredentials {
    /// `HEARTH_GIT_USERNAME`.
    pub username: Option<String>,
    /// `HEARTH_GIT_PASSWORD` (a token, for most hosts).
    pub password: Option<String>,
}
