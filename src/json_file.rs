//! hearth's own JSON files (`state/healer.json`, `state/budget.json`, the
//! runtime files in `.hearth/`…), read and written one way.
//!
//! Every file carries its format version (`{"version": 1, …}`); a file
//! written before versions existed is read as version 1, and a file from a
//! newer hearth is refused rather than misread. Writes go through
//! [`crate::atomic`].
//!
//! The one failure policy: [`load`] never replaces a file it cannot read
//! with a default behind the caller's back. No file is `Ok(None)`; a file
//! that cannot be read, does not parse or has an unknown version is an
//! [`JsonFileError`] naming the file and the fix, and the caller says what
//! it does about it (the supervisor keeps the broken bytes, flares and
//! starts afresh; `hearth status` reports and shows what it can).
//! `state/messages.json` and the conversation archives keep their own
//! readers: a broken conversation is restored from git history, which
//! needs more than a file.

use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

use crate::atomic;
use crate::io_hint::IoError;

/// A JSON file of hearth's own.
pub trait JsonFile: Serialize + DeserializeOwned {
    /// The format version this hearth writes and reads.
    const VERSION: u32;
}

/// A file that could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum JsonFileError {
    /// The file is there but could not be read.
    #[error(transparent)]
    Io(#[from] IoError),
    /// The file does not parse as what it should hold.
    #[error("{} does not parse: {message}", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// serde's account, with line and column.
        message: String,
    },
    /// The file was written by a newer hearth.
    #[error("{} has format version {found}; this hearth reads up to version {expected}", path.display())]
    Version {
        /// The file.
        path: PathBuf,
        /// The version in the file.
        found: u64,
        /// The newest version this hearth knows.
        expected: u32,
    },
}

impl JsonFileError {
    /// The file the error is about.
    pub fn path(&self) -> &Path {
        match self {
            JsonFileError::Io(e) => e.path.as_deref().unwrap_or(Path::new("")),
            JsonFileError::Parse { path, .. } | JsonFileError::Version { path, .. } => path,
        }
    }

    /// What the operator can do about it.
    pub fn hint(&self) -> String {
        match self {
            JsonFileError::Io(e) => e.hint(),
            JsonFileError::Parse { path, .. } => format!(
                "fix the file by hand, or restore it from history: git -C <home> log -p -- {}",
                path.display()
            ),
            JsonFileError::Version { .. } => {
                "run the newer hearth that wrote it, or restore the file from history".into()
            }
        }
    }
}

/// Reads `path`: `Ok(None)` when there is no such file.
pub fn load<T: JsonFile>(path: &Path) -> Result<Option<T>, JsonFileError> {
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(JsonFileError::Io(
                IoError::at(path, source).framed("{} could not be read"),
            ))
        }
    };
    let parse = |e: serde_json::Error| JsonFileError::Parse {
        path: path.to_path_buf(),
        message: e.to_string(),
    };
    let mut value: Value = serde_json::from_slice(&bytes).map_err(parse)?;
    let found = match value.as_object_mut().and_then(|o| o.remove("version")) {
        None => 1,
        Some(v) => v.as_u64().ok_or_else(|| JsonFileError::Parse {
            path: path.to_path_buf(),
            message: format!("\"version\" is {v}, not a number"),
        })?,
    };
    if found > u64::from(T::VERSION) {
        return Err(JsonFileError::Version {
            path: path.to_path_buf(),
            found,
            expected: T::VERSION,
        });
    }
    serde_json::from_value(value).map(Some).map_err(parse)
}

/// Writes `value` to `path` atomically, with its format version first.
pub fn save<T: JsonFile>(path: &Path, value: &T) -> Result<(), atomic::WriteError> {
    atomic::write(path, &serialise(value))
}

/// [`save`] without fsync, for runtime hints rewritten every tick that need
/// not survive a power loss (readers still never see half a file).
pub fn save_unsynced<T: JsonFile>(path: &Path, value: &T) -> Result<(), atomic::WriteError> {
    atomic::replace_unsynced(path, &serialise(value))
}

fn serialise<T: JsonFile>(value: &T) -> Vec<u8> {
    #[derive(Serialize)]
    struct OnDisk<'a, T> {
        version: u32,
        #[serde(flatten)]
        body: &'a T,
    }
    let mut json = serde_json::to_vec_pretty(&OnDisk {
        version: T::VERSION,
        body: value,
    })
    .expect("hearth's own files serialise");
    json.push(b'\n');
    json
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    use super::*;

    #[derive(Debug, Default, PartialEq, Serialize, Deserialize)]
    struct Marks {
        read: Vec<String>,
    }
    impl JsonFile for Marks {
        const VERSION: u32 = 2;
    }

    #[test]
    fn a_file_round_trips_with_its_version_and_old_files_read_as_version_1() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("marks.json");
        assert_eq!(load::<Marks>(&path).unwrap(), None);
        let marks = Marks {
            read: vec!["a".into()],
        };
        save(&path, &marks).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with("{\n  \"version\": 2,"), "{text}");
        assert_eq!(load::<Marks>(&path).unwrap(), Some(marks));
        atomic::write(&path, br#"{"read": ["b"]}"#).unwrap();
        assert_eq!(load::<Marks>(&path).unwrap().unwrap().read, vec!["b"]);
    }

    #[test]
    fn broken_and_newer_files_are_errors_that_name_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("marks.json");
        atomic::write(&path, b"{\"read\": [").unwrap();
        let e = load::<Marks>(&path).unwrap_err();
        assert!(matches!(e, JsonFileError::Parse { .. }));
        assert!(e.to_string().contains("marks.json does not parse"), "{e}");
        assert!(e.hint().contains("git -C <home> log -p"));
        atomic::write(&path, br#"{"version": 9, "read": []}"#).unwrap();
        let e = load::<Marks>(&path).unwrap_err();
        assert!(
            e.to_string()
                .contains("format version 9; this hearth reads up to version 2"),
            "{e}"
        );
    }
}
