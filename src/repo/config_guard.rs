//! No commit carries a password in `hearth.toml`, whoever makes it: the
//! tree a commit is about to be made of is judged before any ref moves,
//! and a `hearth.toml` that holds a URL with a password is left as the
//! parent had it (or out, when the parent had none). Judging after the
//! commit and taking it back left a window in which the push thread could
//! send the commit off the box.

use std::path::Path;

use git2::{Index, IndexEntry, IndexTime, Oid, Tree};

use super::{Repo, RepoError};
use crate::config::secret_url::holds_password;
use crate::config::FILE as CONFIG;

/// What [`Repo::keep_password_out`] did.
pub(super) enum Kept {
    /// The tree holds no password: commit it as it is.
    Clean,
    /// `hearth.toml` was put back as the parent had it: commit this tree.
    PutBack(Oid),
}

impl Repo {
    /// Judges `tree` (just written from `index`): when its `hearth.toml`
    /// holds a password in a URL, the index entry is put back as `head`
    /// had it (or removed) and the tree is written again. A blob that
    /// cannot be read is judged as holding one (closed world).
    pub(super) fn keep_password_out(
        &self,
        tree: Oid,
        head: Option<&Tree<'_>>,
        index: &mut Index,
    ) -> Result<Kept, RepoError> {
        let e = |e| self.error(e);
        let tree = self.git.find_tree(tree).map_err(e)?;
        let Ok(entry) = tree.get_path(Path::new(CONFIG)) else {
            return Ok(Kept::Clean);
        };
        let before = head.and_then(|h| h.get_path(Path::new(CONFIG)).ok());
        if before.as_ref().is_some_and(|b| b.id() == entry.id()) {
            return Ok(Kept::Clean); // as committed already
        }
        let secret = match self.git.find_blob(entry.id()) {
            Ok(blob) => holds_password(&String::from_utf8_lossy(blob.content())),
            Err(_) => true,
        };
        if !secret {
            return Ok(Kept::Clean);
        }
        index.remove_path(Path::new(CONFIG)).map_err(e)?;
        if let Some(before) = before {
            let zero = IndexTime::new(0, 0);
            let put_back = IndexEntry {
                ctime: zero,
                mtime: zero,
                dev: 0,
                ino: 0,
                mode: before.filemode() as u32,
                uid: 0,
                gid: 0,
                file_size: 0,
                id: before.id(),
                flags: u16::try_from(CONFIG.len()).unwrap_or(0xfff),
                flags_extended: 0,
                path: CONFIG.as_bytes().to_vec(),
            };
            index.add(&put_back).map_err(e)?;
        }
        Ok(Kept::PutBack(index.write_tree().map_err(e)?))
    }
}
