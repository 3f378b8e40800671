//! What to do about a failed read or write of a path, from what the system
//! said: every error hearth shows ends in a hint, and the ones that come
//! from the file system (a full disk, a file where a folder belongs, a
//! user without access) get theirs here, once.

use std::io::{self, ErrorKind};
use std::path::{Path, PathBuf};

/// A file operation that failed: what was being done, or the file it was
/// done to, in the words shown; the file, when one is to blame; and what
/// the system said. The one I/O error every module's error wraps (as its
/// `Io` case), so every one ends in the same hint.
#[derive(Debug, thiserror::Error)]
#[error("{what}: {source}")]
pub struct IoError {
    /// What was being done, or the file, as shown to the operator.
    pub what: String,
    /// The file to blame, if one is: its hint names it.
    pub path: Option<PathBuf>,
    /// What the system said.
    #[source]
    pub source: io::Error,
}

impl IoError {
    /// A failure on `path`, shown as the path.
    pub fn at(path: impl AsRef<Path>, source: io::Error) -> IoError {
        let path = path.as_ref().to_path_buf();
        IoError {
            what: path.display().to_string(),
            path: Some(path),
            source,
        }
    }

    /// A failure of `what` (a pipe, a signal handler, a child process)
    /// where no one file is to blame.
    pub fn doing(what: impl Into<String>, source: io::Error) -> IoError {
        IoError {
            what: what.into(),
            path: None,
            source,
        }
    }

    /// The same failure, shown in `template` with its `{}` replaced by
    /// what it showed so far (`"could not lock {}"`).
    pub fn framed(mut self, template: &str) -> IoError {
        self.what = template.replace("{}", &self.what);
        self
    }

    /// The operator's fix: by the file, when one is to blame.
    pub fn hint(&self) -> String {
        match &self.path {
            Some(path) => io_hint(&self.source, path),
            None => kind_hint(&self.source),
        }
    }

    /// Whether the system refused access.
    pub fn denied(&self) -> bool {
        self.source.kind() == ErrorKind::PermissionDenied
    }
}

/// The hint for `error` on `path`: the fix for the common causes, and
/// where to look for the rest. Nothing is lost when a write fails: hearth
/// writes to a temp file and renames, so the old file stands.
pub fn io_hint(error: &io::Error, path: &Path) -> String {
    let shown = path.display();
    let parent = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .display();
    // `git -C DIR log -- NAME` finds the home's repository from the file's
    // own folder, wherever the command is run from.
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    match error.kind() {
        ErrorKind::PermissionDenied => format!(
            "the user hearth runs as may not use {shown}: run hearth as the home's owner \
             (for systemd: User= in the unit), or give that user access (`ls -l {parent}`)"
        ),
        ErrorKind::NotFound => format!(
            "{shown} (or a folder above it) is gone: restore it from history \
             (`git -C {parent} log -- {name}`), or run `hearth init HOME` to recreate a \
             home's folders (it keeps every file)"
        ),
        ErrorKind::StorageFull | ErrorKind::QuotaExceeded => format!(
            "the disk holding {shown} is full: free space (`df -h {parent}`); the old file \
             stands, and hearth pauses ticks until there is room"
        ),
        ErrorKind::ReadOnlyFilesystem => format!(
            "the file system holding {shown} is mounted read-only: remount it read-write \
             (`findmnt -T {parent}` shows the mount)"
        ),
        ErrorKind::NotADirectory | ErrorKind::IsADirectory | ErrorKind::AlreadyExists => {
            format!(
                "a file stands where a folder belongs on the way to {shown}, or the reverse: \
                 move it aside (`mv X X.moved`) and run the command again"
            )
        }
        ErrorKind::InvalidData => format!(
            "{shown} is not what hearth expects (not UTF-8?): fix it by hand, or restore it \
             from history (`git -C {parent} log -p -- {name}`)"
        ),
        _ => format!(
            "check {shown} (`ls -l {parent}`) and the disk it is on (`df -h {parent}`); the \
             system said: {error}"
        ),
    }
}

/// The hint for `error` where no one path is to blame (a pipe, a signal
/// handler, a child process): the same causes, said without a file.
pub fn kind_hint(error: &io::Error) -> String {
    match error.kind() {
        ErrorKind::PermissionDenied => {
            "run hearth as the home's owner (for systemd: User= in the unit)".into()
        }
        ErrorKind::StorageFull | ErrorKind::QuotaExceeded => {
            "free space on the disk that holds the home (`df -h HOME`)".into()
        }
        ErrorKind::ReadOnlyFilesystem => "remount the home's file system read-write".into(),
        _ => format!(
            "the system said: {error}; `hearth status` and the supervisor's log \
             (`journalctl -u hearth`) say what it was doing"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_common_cause_gets_its_fix() {
        let path = Path::new("/h/inbox/x.md");
        let hint = |kind| io_hint(&io::Error::from(kind), path);
        assert!(hint(ErrorKind::PermissionDenied).contains("home's owner"));
        assert!(hint(ErrorKind::NotFound).contains("git -C /h/inbox log -- x.md"));
        assert!(hint(ErrorKind::StorageFull).contains("df -h /h/inbox"));
        assert!(hint(ErrorKind::ReadOnlyFilesystem).contains("read-write"));
        assert!(hint(ErrorKind::NotADirectory).contains("move it aside"));
        assert!(hint(ErrorKind::Interrupted).contains("ls -l /h/inbox"));
    }
}
