//! Reading a file that may be saved while it is read: the bytes are kept
//! only when the file's stat held still across the read (else read again, a
//! few times, and the last read is committed and looked at again later), and
//! a FIFO or symlink swapped in since the stat never hangs the reader.

use std::fs::Metadata;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::Path;
use std::time::Duration;

/// Reads of a file that keeps changing before it is staged as read.
const READ_ATTEMPTS: usize = 3;

/// The file's bytes (a symlink's target), its stat, and whether the stat
/// held still across the read. `None` when it vanished.
pub(super) fn read_stable(
    path: &Path,
    mut before: Metadata,
) -> std::io::Result<Option<(Vec<u8>, Metadata, bool)>> {
    for _ in 0..READ_ATTEMPTS {
        let bytes = match read_once(path, &before) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        let after = match std::fs::symlink_metadata(path) {
            Ok(after) => after,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        if same_stat(&before, &after) && (after.is_symlink() || bytes.len() as u64 == after.size())
        {
            return Ok(Some((bytes, after, true)));
        }
        before = after;
        std::thread::sleep(Duration::from_millis(5));
    }
    let bytes = read_once(path, &before)?;
    Ok(Some((bytes, before, false)))
}

fn read_once(path: &Path, meta: &Metadata) -> std::io::Result<Vec<u8>> {
    if meta.is_symlink() {
        return Ok(std::fs::read_link(path)?.as_os_str().as_bytes().to_vec());
    }
    // O_NONBLOCK: a file swapped for a FIFO since the stat must not hang
    // the supervisor; O_NOFOLLOW: nor may one swapped for a symlink.
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW)
        .open(path)?;
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::other("it is no longer a regular file"));
    }
    let mut bytes = Vec::with_capacity(meta.size() as usize);
    file.read_to_end(&mut bytes)?;
    Ok(bytes)
}

fn same_stat(a: &Metadata, b: &Metadata) -> bool {
    a.size() == b.size()
        && a.mtime() == b.mtime()
        && a.mtime_nsec() == b.mtime_nsec()
        && a.ino() == b.ino()
        && a.mode() == b.mode()
}
