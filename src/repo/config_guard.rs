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

impl Repo {
    /// Judges `tree` (just written from `index`) and returns the tree to
    /// commit: when its `hearth.toml` holds a password in a URL, the index
    /// entry is put back as `head` had it (or removed), the tree written
    /// again, the file taken out of `changed` and the reason added to
    /// `problems`. A blob that cannot be read is judged as holding one
    /// (closed world).
    pub(super) fn keep_password_out(
        &self,
        tree: Oid,
        head: Option<&Tree<'_>>,
        index: &mut Index,
        changed: &mut Vec<super::RepoPath>,
        problems: &mut Vec<String>,
    ) -> Result<Oid, RepoError> {
        let id = tree;
        let e = |e| self.error(e);
        let tree = self.git.find_tree(tree).map_err(e)?;
        let Ok(entry) = tree.get_path(Path::new(CONFIG)) else {
            return Ok(id);
        };
        let before = head.and_then(|h| h.get_path(Path::new(CONFIG)).ok());
        if before.as_ref().is_some_and(|b| b.id() == entry.id()) {
            return Ok(id); // as committed already
        }
        let secret = match self.git.find_blob(entry.id()) {
            Ok(blob) => holds_password(&String::from_utf8_lossy(blob.content())),
            Err(_) => true,
        };
        if !secret {
            return Ok(id);
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
        changed.retain(|p| p.to_string() != CONFIG);
        problems.push(format!(
            "{CONFIG}: holds a password in a URL, so it is left out of this commit (and of \
             every push) until it holds none: put the password in the environment \
             (HEARTH_GIT_USERNAME, HEARTH_GIT_PASSWORD)"
        ));
        index.write_tree_to(&self.git).map_err(e)
    }
}
