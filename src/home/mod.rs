//! The home: the git repository that is the agent's whole mind.
//!
//! [`Home`] only knows paths; opening one checks that it is a hearth home.
//! Finding which directory is the home (`--home`, `$HEARTH_HOME`, the current
//! directory) is [`resolve`], which takes the environment's values as
//! arguments so the library never reads the environment itself.

mod init;
pub mod layout;
pub mod lock;
mod templates;

use crate::io_hint::IoError;
use std::path::{Path, PathBuf};

pub use init::{init, is_missing_or_empty, InitReport};

/// Why a directory could not be used as a home.
#[derive(Debug, thiserror::Error)]
pub enum HomeError {
    /// No `--home`, no `$HEARTH_HOME`, and the current directory is no home.
    #[error("no hearth home given, and neither {} nor a directory above it holds a hearth.toml", cwd.display())]
    NotFound {
        /// The current directory.
        cwd: PathBuf,
    },
    /// The directory has no `hearth.toml`.
    #[error("{} is not a hearth home: it has no hearth.toml", path.display())]
    NotAHome {
        /// The directory or file.
        path: PathBuf,
    },
    /// `hearth run` would not initialise a directory that holds other files.
    #[error("{} is not empty and is not a hearth home (no hearth.toml)", path.display())]
    NotEmpty {
        /// The directory or file.
        path: PathBuf,
    },
    /// `hearth.toml` is there but is not a file.
    #[error("{} is not a file (a directory or something else stands where the configuration belongs)", path.display())]
    ConfigNotAFile {
        /// The directory or file.
        path: PathBuf,
    },
    /// A file operation failed.
    #[error(transparent)]
    Io(#[from] IoError),
    /// A file could not be written.
    #[error(transparent)]
    Write(#[from] crate::atomic::WriteError),
    /// git failed.
    #[error(transparent)]
    Repo(#[from] crate::repo::RepoError),
    /// The configuration could not be read.
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
}

impl HomeError {
    /// What the operator can do about it.
    pub fn hint(&self) -> String {
        match self {
            HomeError::NotFound { .. } => {
                "pass --home DIR, set HEARTH_HOME, or run `hearth init DIR` to create one".into()
            }
            HomeError::NotAHome { path } | HomeError::NotEmpty { path } => format!(
                "run `hearth init {}` to make it a home (existing files are kept)",
                path.display()
            ),
            HomeError::ConfigNotAFile { path } => format!(
                "move it out of the way (`mv {0} {0}.moved`), then run `hearth init {1}`: it \
                 writes a fresh hearth.toml and keeps every other file",
                path.display(),
                path.parent().unwrap_or(path).display()
            ),
            HomeError::Repo(e) => e.hint(),
            HomeError::Config(e) => e.hint(),
            HomeError::Io(e) => e.hint(),
            HomeError::Write(e) => e.hint(),
        }
    }
}

/// The paths of one home. Cheap to clone; holds no open files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Home {
    root: PathBuf,
}

/// Top-level names the agent's tools may never touch.
pub const PROTECTED: [&str; 3] = [".git", layout::rel::RUNTIME, layout::rel::CONFIG];

impl Home {
    /// Opens an existing home: `root` must hold a `hearth.toml`.
    pub fn open(root: &Path) -> Result<Home, HomeError> {
        let root = absolute(root)?;
        let config = root.join("hearth.toml");
        if !config.is_file() {
            if std::fs::symlink_metadata(&config).is_ok() && !config.is_file() {
                return Err(HomeError::ConfigNotAFile { path: config });
            }
            return Err(HomeError::NotAHome { path: root });
        }
        Ok(Home { root })
    }

    /// A home at `root` whether or not it exists yet (for `init`).
    pub fn at(root: &Path) -> Result<Home, HomeError> {
        Ok(Home {
            root: absolute(root)?,
        })
    }

    /// The home's root directory (absolute).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// A key that is the same for every request of this home and differs
    /// between homes, for a provider's cache routing (OpenAI's
    /// `prompt_cache_key`): a digest of the root's path (FNV-1a, fixed so
    /// it survives upgrades), never the path itself.
    pub fn cache_key(&self) -> String {
        use std::os::unix::ffi::OsStrExt;
        let digest = self
            .root
            .as_os_str()
            .as_bytes()
            .iter()
            .fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
                (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
            });
        format!("hearth-{digest:016x}")
    }
    /// `path` relative to the root, with `/` separators, as git and the
    /// ledgers name files.
    pub fn relative(&self, path: &Path) -> String {
        let rel = path.strip_prefix(&self.root).unwrap_or(path);
        rel.components()
            .map(|c| c.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/")
    }
}

/// Which directory is the home: `--home`, else `$HEARTH_HOME`, else the
/// nearest directory from `cwd` upward that holds a `hearth.toml`.
pub fn resolve(flag: Option<&Path>, env: Option<&Path>, cwd: &Path) -> Result<PathBuf, HomeError> {
    if let Some(dir) = flag.or(env).filter(|p| !p.as_os_str().is_empty()) {
        return Ok(dir.to_path_buf());
    }
    // As git finds its repository: the nearest directory up from here
    // that holds a `hearth.toml` (from `memory/notes/`, the home).
    if let Some(home) = cwd
        .ancestors()
        .find(|dir| dir.join("hearth.toml").is_file())
    {
        return Ok(home.to_path_buf());
    }
    Err(HomeError::NotFound {
        cwd: cwd.to_path_buf(),
    })
}

fn absolute(path: &Path) -> Result<PathBuf, HomeError> {
    std::path::absolute(path).map_err(|source| HomeError::Io(IoError::at(path, source)))
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // fixtures, not state
mod tests {
    use super::*;

    #[test]
    fn the_home_is_found_from_any_directory_inside_it() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("hearth.toml"), "").unwrap();
        let deep = dir.path().join("memory/notes");
        std::fs::create_dir_all(&deep).unwrap();
        assert_eq!(resolve(None, None, &deep).unwrap(), dir.path());
        assert_eq!(resolve(None, None, dir.path()).unwrap(), dir.path());
        let outside = tempfile::tempdir().unwrap();
        assert!(resolve(None, None, outside.path()).is_err());
    }

    #[test]
    fn flag_wins_over_env_and_cwd() {
        let got = resolve(Some(Path::new("/a")), Some(Path::new("/b")), Path::new("/")).unwrap();
        assert_eq!(got, PathBuf::from("/a"));
        let got = resolve(None, Some(Path::new("/b")), Path::new("/")).unwrap();
        assert_eq!(got, PathBuf::from("/b"));
    }

    #[test]
    fn cwd_without_hearth_toml_is_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        let err = resolve(None, None, dir.path()).unwrap_err();
        assert!(matches!(err, HomeError::NotFound { .. }));
        assert!(err.hint().contains("--home"));
    }

    #[test]
    fn relative_paths_use_slashes() {
        let home = Home::at(Path::new("/h")).unwrap();
        assert_eq!(home.relative(Path::new("/h/memory/a.md")), "memory/a.md");
    }
}
