//! Reading a file hearth does not write itself (a peer's handoff, an
//! operator's tool manifest): one rule for all of them — it is a regular
//! file of bounded size, or it is named and skipped. A FIFO would block
//! the reader for ever (`open` waits for a writer), a device such as
//! `/dev/zero` behind a symlink reads without end, and a huge file would
//! be read whole before any size check.

use crate::io_hint::IoError;
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

/// The 1-based line that byte `offset` of `bytes` is on: where an error
/// in a file is (the first byte that is not UTF-8, say), for a message
/// that names the file and line.
pub fn line_at(bytes: &[u8], offset: usize) -> usize {
    bytes[..offset.min(bytes.len())]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        + 1
}

/// Why a file was not read.
#[derive(Debug, thiserror::Error)]
pub enum BoundedError {
    /// It is not a regular file.
    #[error(
        "{path} is {kind}, not a regular file; it is skipped (remove it or replace it with a file)"
    )]
    NotAFile {
        /// The file.
        path: String,
        /// What it is instead ("a FIFO", "a device", "a directory" …).
        kind: &'static str,
    },
    /// It holds more than the limit.
    #[error("{path} holds more than {max} bytes, more than hearth reads of it; it is skipped")]
    TooLarge {
        /// The file.
        path: String,
        /// The limit.
        max: u64,
    },
    /// It could not be opened or read.
    #[error(transparent)]
    Io(#[from] IoError),
}

/// The bytes of `path` (symlinks followed), if it is a regular file of at
/// most `max` bytes. Opened without blocking, so a FIFO is refused at once
/// instead of waiting for a writer; the size is checked on what is read,
/// not on what the file claims.
pub fn read(path: &Path, max: u64) -> Result<Vec<u8>, BoundedError> {
    let shown = || path.display().to_string();
    let io = |source| BoundedError::Io(IoError::at(shown(), source).framed("cannot read {}"));
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(io)?;
    let kind = file.metadata().map_err(io)?.file_type();
    if !kind.is_file() {
        let kind = if kind.is_fifo() {
            "a FIFO"
        } else if kind.is_char_device() || kind.is_block_device() {
            "a device"
        } else if kind.is_dir() {
            "a directory"
        } else if kind.is_socket() {
            "a socket"
        } else {
            "not a file"
        };
        return Err(BoundedError::NotAFile {
            path: shown(),
            kind,
        });
    }
    let mut bytes = Vec::new();
    file.take(max.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > max {
        return Err(BoundedError::TooLarge { path: shown(), max });
    }
    Ok(bytes)
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // fixtures, not state
mod tests {
    use super::*;

    #[test]
    fn a_fifo_a_device_and_an_oversized_file_are_named_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("h.md");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let err = read(&fifo, 100).unwrap_err();
        assert!(err.to_string().contains("a FIFO"), "{err}");
        let zero = dir.path().join("z.md");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        assert!(read(&zero, 100)
            .unwrap_err()
            .to_string()
            .contains("a device"));
        let big = dir.path().join("big.md");
        std::fs::write(&big, vec![b'x'; 101]).unwrap();
        assert!(matches!(
            read(&big, 100),
            Err(BoundedError::TooLarge { .. })
        ));
        std::fs::write(&big, b"fine").unwrap();
        assert_eq!(read(&big, 100).unwrap(), b"fine");
    }
}
