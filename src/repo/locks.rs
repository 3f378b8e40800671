//! Leftovers of a killed git writer. A `kill -9` (or power loss) in the middle
//! of a commit leaves `.git/index.lock` and friends behind, and libgit2
//! refuses to write while they exist; its half-written objects stay as
//! `objects/**/tmp_object_git2_*`. Only safe to remove while no one else can
//! be writing: callers hold the run lock and the commit lock.

use std::path::{Path, PathBuf};

use super::RepoError;

/// Removes stale lock files and libgit2 temp objects under `root/.git`, and
/// returns what it removed (to be logged: the operator should know).
pub fn clean_stale_locks(root: &Path) -> Result<Vec<PathBuf>, RepoError> {
    let git_dir = root.join(".git");
    let mut stale = Vec::new();
    if let Ok(entries) = std::fs::read_dir(&git_dir) {
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_file() && path.extension().is_some_and(|e| e == "lock") {
                stale.push(path);
            }
        }
    }
    for entry in walkdir::WalkDir::new(git_dir.join("refs"))
        .into_iter()
        .flatten()
    {
        if entry.file_type().is_file() && entry.path().extension().is_some_and(|e| e == "lock") {
            stale.push(entry.into_path());
        }
    }
    for entry in walkdir::WalkDir::new(git_dir.join("objects"))
        .max_depth(2)
        .into_iter()
        .flatten()
    {
        let name = entry.file_name().to_string_lossy();
        if entry.file_type().is_file() && name.starts_with("tmp_object_git2_") {
            stale.push(entry.into_path());
        }
    }
    for path in &stale {
        std::fs::remove_file(path).map_err(|source| RepoError::Io {
            path: path.clone(),
            source,
        })?;
    }
    Ok(stale)
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // fixtures, not state
mod tests {
    use super::*;

    #[test]
    fn removes_locks_and_temp_objects_but_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        crate::repo::Repo::init(dir.path()).unwrap();
        let git = dir.path().join(".git");
        std::fs::write(git.join("index.lock"), "").unwrap();
        std::fs::create_dir_all(git.join("refs/hearth")).unwrap();
        std::fs::write(git.join("refs/hearth/good.lock"), "").unwrap();
        std::fs::create_dir_all(git.join("objects/ab")).unwrap();
        std::fs::write(git.join("objects/ab/tmp_object_git2_x1"), "").unwrap();
        std::fs::write(git.join("objects/ab/cdef"), "keep").unwrap();
        let removed = clean_stale_locks(dir.path()).unwrap();
        assert_eq!(removed.len(), 3, "{removed:?}");
        assert!(git.join("objects/ab/cdef").exists());
        assert!(git.join("HEAD").exists());
    }
}
