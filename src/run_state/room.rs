//! The room the home's disk has, as the supervisor and `hearth status`
//! both judge it.

use std::path::Path;

/// Bytes an unprivileged writer may still use on the filesystem holding
/// `path` (what `df` calls available). fs4 (already built for tantivy)
/// wraps statvfs safely.
pub fn free_bytes(path: &Path) -> std::io::Result<u64> {
    fs4::available_space(path)
}

/// Least room a tick is started with whatever `[tick] min_free_mb` says:
/// less, and its ledger line and commit would fail half-way.
pub const FLOOR: u64 = 1 << 20;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn free_bytes_reads_the_filesystem() {
        let dir = tempfile::tempdir().unwrap();
        assert!(free_bytes(dir.path()).unwrap() > 0);
        assert!(free_bytes(&dir.path().join("missing")).is_err());
    }
}
