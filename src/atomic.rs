//! The one way hearth writes a file that matters.
//!
//! A tick can be killed at any instruction (time limit, `kill -9`, power
//! loss), and the operator may be reading the same files in an editor. So a
//! state file is never written in place: the bytes go to a temp file in the
//! same directory, are fsynced, renamed over the target, and the directory is
//! fsynced so the rename itself survives a crash. Readers see the old file or
//! the new one, never half of either.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// A write that failed, with the file it was for.
#[derive(Debug, thiserror::Error)]
#[error("could not write {}: {source}", path.display())]
pub struct WriteError {
    /// The file that was to be written (not the temp file).
    pub path: PathBuf,
    /// What the system said.
    #[source]
    pub source: io::Error,
}

impl WriteError {
    /// What to do about it: the old file stands, so only the cause needs
    /// fixing.
    pub fn hint(&self) -> String {
        crate::io_hint::io_hint(&self.source, &self.path)
    }
}

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// Replaces `path` with `bytes` atomically, creating parent directories.
pub fn write(path: &Path, bytes: &[u8]) -> Result<(), WriteError> {
    write_inner(path, bytes).map_err(|source| WriteError {
        path: path.to_path_buf(),
        source,
    })
}

/// Replaces `path` with `bytes` by rename, without fsync: for runtime hints
/// written often that need not survive a crash (readers still never see
/// half a file). Never for state.
pub fn replace_unsynced(path: &Path, bytes: &[u8]) -> Result<(), WriteError> {
    let temp = temp_path_for(path);
    #[allow(clippy::disallowed_methods)] // the temp file, renamed whole
    let written = fs::write(&temp, bytes).and_then(|()| fs::rename(&temp, path));
    written.map_err(|source| {
        let _ = fs::remove_file(&temp);
        WriteError {
            path: path.to_path_buf(),
            source,
        }
    })
}

/// Appends one line to an append-only ledger (`ticks.jsonl`, …) with a single
/// `write` and an fsync. A crash can at worst leave a torn last line; it is
/// terminated here before the next line goes on, and readers skip lines that
/// do not parse, so one torn line never hides the lines after it.
pub fn append_line(path: &Path, line: &str) -> Result<(), WriteError> {
    append_inner(path, line).map_err(|source| WriteError {
        path: path.to_path_buf(),
        source,
    })
}

/// The temp-file name used for `path`: hidden and without the target's
/// extension, so an inbox or memory watcher never mistakes it for a message
/// or a memory.
pub fn temp_path_for(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    path.with_file_name(format!(".{name}.{}-{n}.tmp", std::process::id()))
}

/// Whether `name` is one of [`temp_path_for`]'s (`.NAME.PID-N.tmp`): a
/// write in progress, or one a kill cut short — never a file to commit.
pub fn is_temp_name(name: &str) -> bool {
    let Some(inner) = name.strip_prefix('.').and_then(|n| n.strip_suffix(".tmp")) else {
        return false;
    };
    let Some((_, tail)) = inner.rsplit_once('.') else {
        return false;
    };
    let Some((pid, n)) = tail.split_once('-') else {
        return false;
    };
    !pid.is_empty()
        && !n.is_empty()
        && pid.bytes().all(|b| b.is_ascii_digit())
        && n.bytes().all(|b| b.is_ascii_digit())
}

/// The process id in a temp file's name, when it is one of ours.
fn temp_pid(name: &str) -> Option<u32> {
    if !is_temp_name(name) {
        return None;
    }
    let inner = name.strip_suffix(".tmp")?;
    inner.rsplit_once('.')?.1.split_once('-')?.0.parse().ok()
}

/// Removes `path` when it is a temp file whose writer is gone (killed
/// between its write and its rename): what it holds was never written.
/// True when it was removed.
pub fn remove_if_stale_temp(path: &Path) -> bool {
    let Some(pid) = path
        .file_name()
        .and_then(|n| temp_pid(&n.to_string_lossy()))
    else {
        return false;
    };
    !crate::process::alive(pid) && fs::remove_file(path).is_ok()
}

/// Removes the temp files a writer of `path` left when it was killed
/// mid-write (`.NAME.PID-N.tmp`, its process gone): otherwise the next
/// look would commit them as the operator's files. Returns how many.
pub fn remove_stale_temps(path: &Path) -> usize {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return 0;
    };
    let prefix = format!(".{}.", name.to_string_lossy());
    let Ok(entries) = fs::read_dir(dir) else {
        return 0;
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        let file = entry.file_name().to_string_lossy().into_owned();
        let Some(pid) = file
            .strip_prefix(&prefix)
            .and_then(|rest| rest.strip_suffix(".tmp"))
            .and_then(|rest| rest.split_once('-'))
            .and_then(|(pid, _)| pid.parse::<u32>().ok())
        else {
            continue;
        };
        let gone = !crate::process::alive(pid);
        if gone && fs::remove_file(entry.path()).is_ok() {
            removed += 1;
        }
    }
    removed
}

fn write_inner(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = parent_dir(path);
    fs::create_dir_all(dir)?;
    let tmp = temp_path_for(path);
    let result = (|| {
        let mut file = OpenOptions::new().write(true).create_new(true).open(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        drop(file);
        fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result?;
    sync_dir(dir)
}

fn append_inner(path: &Path, line: &str) -> io::Result<()> {
    let dir = parent_dir(path);
    fs::create_dir_all(dir)?;
    let existed = path.exists();
    let mut file = OpenOptions::new()
        .read(true)
        .append(true)
        .create(true)
        .open(path)?;
    let mut buf = String::with_capacity(line.len() + 2);
    if ends_without_newline(&mut file)? {
        buf.push('\n');
    }
    buf.push_str(line.trim_end_matches('\n'));
    buf.push('\n');
    file.write_all(buf.as_bytes())?;
    file.sync_all()?;
    if !existed {
        sync_dir(dir)?;
    }
    Ok(())
}

fn ends_without_newline(file: &mut File) -> io::Result<bool> {
    let len = file.metadata()?.len();
    if len == 0 {
        return Ok(false);
    }
    file.seek(SeekFrom::Start(len - 1))?;
    let mut last = [0u8; 1];
    file.read_exact(&mut last)?;
    Ok(last[0] != b'\n')
}

/// Moves `from` to `to` (same filesystem) and makes both directory entries
/// durable. Used to archive inbox messages: the file is in one place or the
/// other, never lost in between.
pub fn rename(from: &Path, to: &Path) -> Result<(), WriteError> {
    (|| {
        fs::create_dir_all(parent_dir(to))?;
        fs::rename(from, to)?;
        sync_dir(parent_dir(to))?;
        sync_dir(parent_dir(from))
    })()
    .map_err(|source| WriteError {
        path: to.to_path_buf(),
        source,
    })
}

pub(crate) fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

pub(crate) fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // fixtures, not state
mod tests {
    use super::*;

    #[test]
    fn write_replaces_content_and_leaves_no_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/state.json");
        write(&path, b"one").unwrap();
        write(&path, b"two").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"two");
        let names: Vec<_> = fs::read_dir(dir.path().join("sub"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("state.json")]);
    }

    #[test]
    fn append_terminates_a_torn_last_line_before_adding() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ticks.jsonl");
        fs::write(&path, "{\"tick\":1}\n{\"ti").unwrap();
        append_line(&path, "{\"tick\":2}").unwrap();
        let text = fs::read_to_string(&path).unwrap();
        assert_eq!(text, "{\"tick\":1}\n{\"ti\n{\"tick\":2}\n");
    }

    #[test]
    fn temp_names_are_hidden_and_not_markdown() {
        let tmp = temp_path_for(Path::new("inbox/hello.md"));
        let name = tmp.file_name().unwrap().to_string_lossy().into_owned();
        assert!(is_temp_name(&name), "{name}");
        for not_one in [
            ".hello.md",
            "hello.md.123-4.tmp",
            ".notes.tmp",
            ".x.md.abc-1.tmp",
        ] {
            assert!(!is_temp_name(not_one), "{not_one}");
        }
        assert!(name.starts_with('.'));
        assert!(!name.ends_with(".md"));
    }
}
