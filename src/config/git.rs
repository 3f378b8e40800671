//! `[git]`: who the operator is on their commits, how the history is
//! packed, and the off-box copy (push).

use serde::{Deserialize, Serialize};

/// `[git]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GitConfig {
    /// The operator's name on their commits.
    pub operator_name: String,
    /// The operator's email on their commits.
    pub operator_email: String,
    /// Push each commit to `remote` (batched, in the background).
    pub push: bool,
    /// The remote pushed to.
    pub remote: String,
    /// Minutes of failed pushes before one `push` flare.
    pub push_flare_min: u64,
    /// Pack the history once this many loose objects have piled up
    /// (git's own `gc.auto` is 6,700; a tick writes about five).
    pub pack_loose: usize,
    /// Repack everything into one pack once this many packs exist
    /// (git's `gc.autoPackLimit` is 50).
    pub pack_max_packs: usize,
    /// Seconds a commit waits for another git process's lock (the
    /// operator's `git commit` with its editor open) before the supervisor
    /// puts its commits off and tries again later; commands give up then.
    pub lock_wait_s: u64,
}

impl Default for GitConfig {
    fn default() -> Self {
        GitConfig {
            operator_name: "operator".into(),
            operator_email: "operator@localhost".into(),
            push: false,
            remote: "origin".into(),
            push_flare_min: 60,
            pack_loose: 500,
            pack_max_packs: 50,
            lock_wait_s: 5,
        }
    }
}
