//! Packing the home's history, so `.git` grows by what changed and not by
//! a compressed copy of every file version a tick touched. Every tick
//! writes a few loose objects (its ledger line makes a new blob of the
//! ledger); left loose, each is a whole zlib copy, and a year of ticks is
//! gigabytes. A pack stores them as deltas.
//!
//! The policy follows `git gc --auto`: past `loose_max` loose objects, the
//! new history since the last pack (`refs/hearth/packed`) goes into one new
//! pack; past `packs_max` packs, everything reachable goes into one. Only
//! objects written into a pack that is already in place are removed, so
//! nothing unreachable is ever pruned (git's `gc` would; hearth leaves
//! that to the operator). libgit2's pack builder does the delta search,
//! so the `git` program is not needed.
//!
//! Building a pack only reads objects, so it runs beside commits; the
//! caller's lock (the home's commit lock) is taken only to put the pack in
//! place and remove what it makes redundant, so a pack never lands while
//! a commit is being written, and `hearth say` waits for the swap, not for
//! the delta search.

use crate::io_hint::IoError;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

use git2::{Oid, Revwalk};

use super::{Repo, RepoError};

/// Commits to an era of [`Repo::insert_by_era`]: about what one
/// incremental pack holds at the default `[git] pack_loose`.
const ERA: usize = 64;

/// Where the tip of the packed history is kept.
pub const PACKED_REF: &str = "refs/hearth/packed";

/// What a pack did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Packed {
    /// Objects written into the new pack (0: nothing was done).
    pub objects: usize,
    /// Loose objects removed because the new pack holds them.
    pub loose_removed: usize,
    /// Older packs removed because the new one holds all they held.
    pub packs_removed: usize,
    /// Whether everything was repacked into one pack.
    pub full: bool,
}

/// When to pack.
#[derive(Debug, Clone, Copy)]
pub struct PackPolicy {
    /// Pack once this many loose objects have piled up.
    pub loose_max: usize,
    /// Repack everything into one once this many packs exist.
    pub packs_max: usize,
}

impl Repo {
    fn objects_dir(&self) -> PathBuf {
        self.git.path().join("objects")
    }

    /// The loose objects, by id (a read of the 256 fan-out directories).
    pub fn loose_objects(&self) -> Vec<Oid> {
        let dir = self.objects_dir();
        let mut ids = Vec::new();
        for fan in 0..=255u8 {
            let prefix = format!("{fan:02x}");
            let Ok(entries) = std::fs::read_dir(dir.join(&prefix)) else {
                continue;
            };
            for entry in entries.flatten() {
                let name = entry.file_name();
                let name = name.to_string_lossy();
                if name.len() == 38 {
                    if let Ok(id) = Oid::from_str(&format!("{prefix}{name}")) {
                        ids.push(id);
                    }
                }
            }
        }
        ids
    }

    /// A cheap estimate of [`Repo::loose_objects`]' count: 16 of the 256
    /// fan-out directories read, times 16 (`git gc --auto` reads one).
    pub fn loose_estimate(&self) -> usize {
        let dir = self.objects_dir();
        (0..16u8)
            .map(|n| {
                std::fs::read_dir(dir.join(format!("{:02x}", n * 16)))
                    .map(|entries| entries.count())
                    .unwrap_or(0)
            })
            .sum::<usize>()
            * 16
    }

    /// The packs' index files (`objects/pack/pack-*.idx`).
    pub fn packs(&self) -> Vec<PathBuf> {
        let dir = self.objects_dir().join("pack");
        let mut packs: Vec<PathBuf> = std::fs::read_dir(&dir)
            .map(|entries| {
                entries
                    .flatten()
                    .map(|e| e.path())
                    .filter(|p| {
                        p.extension().is_some_and(|x| x == "idx")
                            && p.file_name()
                                .is_some_and(|n| n.to_string_lossy().starts_with("pack-"))
                    })
                    .collect()
            })
            .unwrap_or_default();
        packs.sort();
        packs
    }

    /// Packs when the policy says it is time; otherwise does nothing.
    /// `lock` is taken to install the pack (see the module's note).
    pub fn pack_if_due<G>(
        &self,
        policy: PackPolicy,
        lock: impl Fn() -> Result<G, RepoError>,
    ) -> Result<Packed, RepoError> {
        // Read all 256 directories (1-1.5 ms a tick) only once a sample
        // of 16 says the pile may be near the limit; small limits (tests)
        // are counted exactly every time.
        if policy.loose_max >= 256 && self.loose_estimate() * 4 < policy.loose_max * 3 {
            return Ok(Packed::default());
        }
        let loose = self.loose_objects();
        if loose.len() < policy.loose_max {
            return Ok(Packed::default());
        }
        if self.packs().len() < policy.packs_max {
            return self.pack(false, &loose, lock);
        }
        // Past the pack limit: the new history still goes into a pack of
        // its own first. It packs in a moment; the full repack after it
        // may take minutes, and a supervisor stopped meanwhile (often, in
        // a simulated month) would otherwise never pack anything again.
        let new = self.pack(false, &loose, &lock)?;
        let mut done = self.pack(true, &self.loose_objects(), &lock)?;
        done.loose_removed += new.loose_removed;
        Ok(done)
    }

    /// Writes the history since the last pack (or all of it, `full`) into
    /// one new pack, then removes what that pack makes redundant among
    /// `loose` and the older packs.
    pub fn pack<G>(
        &self,
        full: bool,
        loose: &[Oid],
        lock: impl FnOnce() -> Result<G, RepoError>,
    ) -> Result<Packed, RepoError> {
        let err = |e: git2::Error| super::git_error(&self.root, e);
        let Some(head) = self.git.head().ok().and_then(|h| h.target()) else {
            return Ok(Packed::default());
        };
        let old_packs = self.packs();
        let mut walk = self.git.revwalk().map_err(err)?;
        self.push_everything(&mut walk, head).map_err(err)?;
        if !full {
            if let Some(packed) = self.ref_target(PACKED_REF) {
                // Unknown to this repository (a clone, say): pack it all.
                if self.git.find_commit(packed).is_ok() {
                    walk.hide(packed).map_err(err)?;
                }
            }
        }
        let mut builder = self.git.packbuilder().map_err(err)?;
        self.insert_by_era(&mut builder, walk).map_err(err)?;
        if builder.object_count() == 0 {
            return Ok(Packed::default());
        }
        // Written apart first, so its contents can be listed on their own
        // before it joins the repository.
        let staging = self.git.path().join("hearth-pack.tmp");
        let _ = std::fs::remove_dir_all(&staging);
        let staged_packs = staging.join("pack");
        std::fs::create_dir_all(&staged_packs).map_err(|e| self.io(&staging, e))?;
        let result = self.write_and_install(&mut builder, &staging, &old_packs, full, loose, lock);
        let _ = std::fs::remove_dir_all(&staging);
        let mut done = result?;
        done.full = full;
        self.git
            .reference(PACKED_REF, head, true, "hearth: packed")
            .map_err(err)?;
        self.drop_reflog(PACKED_REF);
        Ok(done)
    }

    /// Inserts `walk`'s commits, oldest first, each with the trees and
    /// blobs it changed (compared by id with its first parent's tree),
    /// named by path *and era* — [`ERA`] commits to an era.
    ///
    /// Why the era: the pack builder looks for deltas among neighbours
    /// sorted by name, then size, in a window of 10. A home's hot files
    /// (`state/messages.json`, trimmed to `[context] history_tokens`)
    /// have thousands of versions of about the same size; sorted by size
    /// alone, a version's neighbours come from anywhere in the year and
    /// the deltas are nearly whole files. A full repack of 8,500 ticks
    /// made a 104 MB pack (git's own `repack -adf` made 130 MB) where
    /// the incremental packs it replaced held 17 MB. With the era in the
    /// name, versions meet only versions of their own era, as they did in
    /// the incremental packs.
    fn insert_by_era(
        &self,
        builder: &mut git2::PackBuilder<'_>,
        walk: Revwalk<'_>,
    ) -> Result<(), git2::Error> {
        let mut commits: Vec<Oid> = walk.collect::<Result<_, _>>()?;
        commits.reverse();
        for (i, id) in commits.iter().enumerate() {
            let era = i / ERA;
            let commit = self.git.find_commit(*id)?;
            builder.insert_object(*id, None)?;
            let tree = commit.tree()?;
            let before = commit.parent(0).ok().and_then(|p| p.tree().ok());
            self.insert_changed(builder, &tree, before.as_ref(), "", era)?;
        }
        Ok(())
    }

    fn insert_changed(
        &self,
        builder: &mut git2::PackBuilder<'_>,
        tree: &git2::Tree<'_>,
        before: Option<&git2::Tree<'_>>,
        dir: &str,
        era: usize,
    ) -> Result<(), git2::Error> {
        builder.insert_object(tree.id(), Some(&format!("{dir}/#{era}")))?;
        for entry in tree.iter() {
            let old = before.and_then(|b| b.get_name_bytes(entry.name_bytes()));
            if old.as_ref().is_some_and(|o| o.id() == entry.id()) {
                continue;
            }
            let path = format!("{dir}/{}", String::from_utf8_lossy(entry.name_bytes()));
            match entry.kind() {
                Some(git2::ObjectType::Tree) => {
                    let sub = self.git.find_tree(entry.id())?;
                    let old_sub = old
                        .filter(|o| o.kind() == Some(git2::ObjectType::Tree))
                        .and_then(|o| self.git.find_tree(o.id()).ok());
                    self.insert_changed(builder, &sub, old_sub.as_ref(), &path, era)?;
                }
                Some(git2::ObjectType::Blob) => {
                    builder.insert_object(entry.id(), Some(&format!("{path}#{era}")))?;
                }
                _ => {} // a submodule's commit is not in this repository
            }
        }
        Ok(())
    }

    /// Every ref's target and what its reflog remembers, so a full pack
    /// keeps what `git gc` would keep.
    fn push_everything(&self, walk: &mut Revwalk<'_>, head: Oid) -> Result<(), git2::Error> {
        walk.push(head)?;
        for reference in self.git.references()?.flatten() {
            let Some(name) = reference.name() else {
                continue;
            };
            if name == PACKED_REF {
                continue;
            }
            if let Ok(commit) = reference.peel_to_commit() {
                walk.push(commit.id())?;
            }
            if let Ok(log) = self.git.reflog(name) {
                for entry in log.iter() {
                    if self.git.find_commit(entry.id_new()).is_ok() {
                        walk.push(entry.id_new())?;
                    }
                }
            }
        }
        Ok(())
    }

    fn write_and_install<G>(
        &self,
        builder: &mut git2::PackBuilder<'_>,
        staging: &Path,
        old_packs: &[PathBuf],
        full: bool,
        loose: &[Oid],
        lock: impl FnOnce() -> Result<G, RepoError>,
    ) -> Result<Packed, RepoError> {
        let err = |e: git2::Error| super::git_error(&self.root, e);
        let staged_packs = staging.join("pack");
        builder.write(&staged_packs, 0o444).map_err(err)?;
        let objects = builder.object_count();
        // What the new pack makes redundant is decided while it is still
        // apart (an odb of the staged pack alone), and removed only once
        // the pack is in place.
        let new_pack = git2::Odb::new().map_err(err)?;
        new_pack
            .add_disk_alternate(&staging.to_string_lossy())
            .map_err(err)?;
        let redundant_loose: Vec<Oid> = loose
            .iter()
            .copied()
            .filter(|id| new_pack.exists(*id))
            .collect();
        let redundant_packs: Vec<&PathBuf> = if full {
            old_packs
                .iter()
                .filter(|idx| self.pack_is_covered(idx, &new_pack))
                .collect()
        } else {
            Vec::new()
        };
        drop(new_pack);

        let _guard = lock()?;
        self.remove_orphan_packs();

        // The pack first, its index last: readers find a pack by its index.
        let pack_dir = self.objects_dir().join("pack");
        std::fs::create_dir_all(&pack_dir).map_err(|e| self.io(&pack_dir, e))?;
        let mut staged: Vec<PathBuf> = std::fs::read_dir(&staged_packs)
            .map_err(|e| self.io(&staged_packs, e))?
            .flatten()
            .map(|e| e.path())
            .collect();
        staged.sort_by_key(|p| p.extension().is_some_and(|x| x == "idx"));
        let mut installed = HashSet::new();
        for from in &staged {
            let Some(name) = from.file_name() else {
                continue;
            };
            let to = pack_dir.join(name);
            std::fs::File::open(from)
                .and_then(|f| f.sync_all())
                .map_err(|e| self.io(from, e))?;
            std::fs::rename(from, &to).map_err(|e| self.io(&to, e))?;
            installed.insert(to);
        }
        crate::atomic::sync_dir(&pack_dir).map_err(|e| self.io(&pack_dir, e))?;

        let mut done = Packed {
            objects,
            ..Packed::default()
        };
        let objects_dir = self.objects_dir();
        for id in redundant_loose {
            let hex = id.to_string();
            if std::fs::remove_file(objects_dir.join(&hex[..2]).join(&hex[2..])).is_ok() {
                done.loose_removed += 1;
            }
        }
        // A pack rewritten with the same contents has the same name: it is
        // the new one, never removed.
        for idx in redundant_packs
            .into_iter()
            .filter(|p| !installed.contains(*p))
        {
            for ext in ["keep", "pack", "rev", "idx"] {
                let _ = std::fs::remove_file(idx.with_extension(ext));
            }
            done.packs_removed += 1;
        }
        self.git.odb().map_err(err)?.refresh().map_err(err)?;
        Ok(done)
    }

    /// Packs without their index: what a `kill -9` between the two renames
    /// below leaves (no reader can use a pack without its index, so nothing
    /// else ever removes it). Only those older than [`ORPHAN_AGE`]: another
    /// git (the operator's `gc`) renames its pack before its index too.
    fn remove_orphan_packs(&self) {
        let pack_dir = self.objects_dir().join("pack");
        let Ok(entries) = std::fs::read_dir(&pack_dir) else {
            return;
        };
        let now = crate::clock::file_time_now();
        for path in entries.flatten().map(|e| e.path()) {
            let is_pack = path.extension().is_some_and(|x| x == "pack")
                && path
                    .file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("pack-"));
            if !is_pack || path.with_extension("idx").exists() {
                continue;
            }
            let old = std::fs::metadata(&path)
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| now.duration_since(t).ok())
                .is_some_and(|age| age > ORPHAN_AGE);
            if old {
                tracing::info!("removing {}: a pack without its index", path.display());
                for ext in ["pack", "rev"] {
                    let _ = std::fs::remove_file(path.with_extension(ext));
                }
            }
        }
    }

    /// Whether every object of the pack indexed at `idx` is in `new_pack`
    /// (a pack with a `.keep` file is never covered).
    fn pack_is_covered(&self, idx: &Path, new_pack: &git2::Odb<'_>) -> bool {
        if idx.with_extension("keep").exists() {
            return false;
        }
        let Ok(ids) = pack_index_ids(idx) else {
            return false;
        };
        ids.iter().all(|id| new_pack.exists(*id))
    }

    fn ref_target(&self, name: &str) -> Option<Oid> {
        self.git.find_reference(name).ok().and_then(|r| r.target())
    }

    fn io(&self, path: &Path, source: std::io::Error) -> RepoError {
        RepoError::Io(IoError::at(path, source).framed("could not write or remove {}"))
    }
}

/// The object ids a version-2 pack index lists (git's `pack-format`: a
/// header, 256 fan-out counts, then the sorted ids).
fn pack_index_ids(idx: &Path) -> std::io::Result<Vec<Oid>> {
    let bytes = std::fs::read(idx)?;
    let bad = || std::io::Error::new(std::io::ErrorKind::InvalidData, "not a v2 pack index");
    if bytes.len() < 8 + 256 * 4 || bytes[..8] != [0xff, 0x74, 0x4f, 0x63, 0, 0, 0, 2] {
        return Err(bad());
    }
    let at = 8 + 255 * 4;
    let count = u32::from_be_bytes(bytes[at..at + 4].try_into().map_err(|_| bad())?) as usize;
    let start = 8 + 256 * 4;
    let ids = bytes
        .get(start..start + count * 20)
        .ok_or_else(bad)?
        .chunks(20)
        .filter_map(|raw| Oid::from_bytes(raw).ok())
        .collect();
    Ok(ids)
}

/// How old a pack without its index must be before it is taken for the
/// leftover of an interrupted install rather than one being written.
const ORPHAN_AGE: std::time::Duration = std::time::Duration::from_secs(3600);

#[cfg(test)]
#[path = "pack_tests.rs"]
mod tests;
