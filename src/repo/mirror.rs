//! A peer's repository on another machine, fetched read only into a mirror
//! of this home's own (`.hearth/peers/NAME.git`, bare), never into the
//! home's history: nothing of it is merged anywhere, and nothing is ever
//! pushed to the peer. Its handoffs are read from the fetched, committed
//! tree, exactly as a local peer's are from its own.

use std::path::Path;

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use git2::{Oid, Repository};

use super::credentials::RemoteCredentials;
use super::error::RepoError;
use super::git_cli::GitCommand;
use super::{git_error, Repo};

/// A file of a committed tree: its name as the tree holds it, and its
/// blob (what tells a file rewritten under the same name).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeadFile {
    /// The entry's name.
    pub name: String,
    /// Its blob's id.
    pub blob: String,
}

/// What a fetch found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fetched {
    /// The peer's branch now (its newest commit), if it has one.
    pub head: Option<String>,
    /// It was elsewhere before, and what is fetched now does not descend
    /// from it: the peer's history was rewritten (a force-push), or its
    /// branch moved to a side line. Nothing of it is taken twice.
    pub rewritten: bool,
}

impl Repo {
    /// The mirror at `dir` (created, bare, when missing), for `fetch`.
    pub fn mirror(dir: &Path) -> Result<Repo, RepoError> {
        super::enable_fsync();
        let git = match Repository::open_bare(dir) {
            Ok(git) => git,
            Err(_) => {
                std::fs::create_dir_all(dir)
                    .map_err(|source| RepoError::Io(crate::io_hint::IoError::at(dir, source)))?;
                let mut opts = git2::RepositoryInitOptions::new();
                opts.bare(true).initial_head("main");
                Repository::init_opts(dir, &opts).map_err(|e| git_error(dir, e))?
            }
        };
        Ok(Repo {
            git,
            root: dir.to_path_buf(),
            index_fresh: std::cell::Cell::new(false),
            lock_wait: super::locks::LOCK_WAIT,
            outside_memo: Default::default(),
        })
    }

    /// The mirror at `dir`: `None` when none was made there yet (nothing
    /// fetched), an error when one is there and cannot be opened.
    pub fn open_mirror(dir: &Path) -> Result<Option<Repo>, RepoError> {
        if !dir.exists() {
            return Ok(None);
        }
        let git = Repository::open_bare(dir).map_err(|e| git_error(dir, e))?;
        Ok(Some(Repo {
            git,
            root: dir.to_path_buf(),
            index_fresh: std::cell::Cell::new(false),
            lock_wait: super::locks::LOCK_WAIT,
            outside_memo: Default::default(),
        }))
    }

    /// Fetches the peer's `main` from `url` into this mirror (its
    /// `refs/heads/main`, forced: the peer owns its history) with the `git`
    /// command, bounded by `timeout` and stopped when `cancel` turns true,
    /// and says where it is now and whether it was rewritten. A peer with
    /// no `main` yet (it has not pushed) is no failure: nothing is there.
    pub fn fetch_peer(
        &self,
        url: &str,
        credentials: &RemoteCredentials,
        timeout: Duration,
        cancel: &AtomicBool,
    ) -> Result<Fetched, RepoError> {
        let before = self.branch_head();
        let git = GitCommand {
            git_dir: &self.root,
            credentials,
            timeout,
            cancel: Some(cancel),
        };
        let what = format!("fetching {}", crate::config::secret_url::masked(url));
        let args = [
            "fetch",
            "--quiet",
            "--no-tags",
            "--no-write-fetch-head",
            "--no-recurse-submodules",
            url,
            "+refs/heads/main:refs/heads/main",
        ];
        match git.run(&what, &args) {
            Ok(_) => {}
            Err(RepoError::Git { message, .. }) if message.contains("couldn't find remote ref") => {
                return Ok(Fetched {
                    head: before.map(|o| o.to_string()),
                    rewritten: false,
                });
            }
            Err(e) => return Err(e),
        }
        let head = self.branch_head();
        let rewritten = match (&before, &head) {
            (Some(old), Some(new)) if old != new => !self.descends(new, old),
            (Some(_), None) => true,
            _ => false,
        };
        Ok(Fetched {
            head: head.map(|o| o.to_string()),
            rewritten,
        })
    }

    /// The files directly in `dir` of the committed tree (HEAD: a mirror's
    /// is its fetched branch), each with its blob; none when nothing is
    /// committed yet or `dir` is not in the tree. Names are given as the
    /// tree holds them (read lossily where they are not UTF-8): the caller
    /// checks them before it builds anything from them. A HEAD, commit or
    /// tree that cannot be read (a corrupt repository) is an error, never
    /// an empty outbox.
    pub fn files_at_head(&self, dir: &str) -> Result<Vec<HeadFile>, RepoError> {
        let head = match self.git.head() {
            Ok(head) => head,
            Err(e) if e.code() == git2::ErrorCode::UnbornBranch => return Ok(Vec::new()),
            Err(e) => return Err(self.error(e)),
        };
        let tree = head
            .peel_to_commit()
            .and_then(|c| c.tree())
            .map_err(|e| self.error(e))?;
        let entry = match tree.get_path(Path::new(dir)) {
            Ok(entry) => entry,
            Err(e) if e.code() == git2::ErrorCode::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(self.error(e)),
        };
        let Some(sub) = entry
            .to_object(&self.git)
            .map_err(|e| self.error(e))?
            .into_tree()
            .ok()
        else {
            return Ok(Vec::new());
        };
        let mut files: Vec<HeadFile> = sub
            .iter()
            // Regular files only: a symlink's blob is a path, not words.
            .filter(|e| matches!(e.filemode(), 0o100644 | 0o100755))
            .map(|e| HeadFile {
                name: String::from_utf8_lossy(e.name_bytes()).into_owned(),
                blob: e.id().to_string(),
            })
            .collect();
        files.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(files)
    }

    /// The bytes of blob `id`, if it holds at most `max` bytes
    /// (`Err(size)` when larger: the size is read from the object's header,
    /// so a huge blob is never inflated to be refused).
    pub fn read_blob(&self, id: &str, max: u64) -> Option<Result<Vec<u8>, u64>> {
        let oid = Oid::from_str(id).ok()?;
        let (size, kind) = self.git.odb().ok()?.read_header(oid).ok()?;
        if kind != git2::ObjectType::Blob {
            return None;
        }
        if size as u64 > max {
            return Some(Err(size as u64));
        }
        Some(Ok(self.git.find_blob(oid).ok()?.content().to_vec()))
    }

    /// The bytes of `rel` on the mirror's branch, if it is a file there of
    /// at most `max` bytes (`Err(size)` when larger).
    pub fn read_at_head(&self, rel: &str, max: u64) -> Option<Result<Vec<u8>, u64>> {
        let commit = self.git.find_commit(self.branch_head()?).ok()?;
        let entry = commit.tree().ok()?.get_path(Path::new(rel)).ok()?;
        self.read_blob(&entry.id().to_string(), max)
    }

    /// The mirror's `refs/heads/main`.
    fn branch_head(&self) -> Option<Oid> {
        self.git.refname_to_id("refs/heads/main").ok()
    }

    /// Whether `new` has `old` in its history.
    fn descends(&self, new: &Oid, old: &Oid) -> bool {
        self.git.graph_descendant_of(*new, *old).unwrap_or(false)
    }
}
