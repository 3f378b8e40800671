//! Cheap change detection for hearth's caches of file contents (the recall
//! index manifest, the core-memory scan): a file's size and modification
//! time, trusted only once the mtime is old enough that a same-size rewrite
//! within the same clock tick is impossible (git's "racy" case), and a
//! content hash that is stable across builds (std's hasher is not).

use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

/// How old an mtime must be before a stamp is trusted.
const RACY_NS: i128 = 2_000_000_000;

/// What a file looked like when it was last read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stamp {
    /// Its length in bytes.
    pub size: u64,
    /// Its modification time, in nanoseconds since the epoch.
    pub mtime_ns: i128,
}

impl Stamp {
    /// The stamp of a file from its metadata.
    pub fn of(meta: &std::fs::Metadata) -> Stamp {
        Stamp {
            size: meta.len(),
            mtime_ns: meta.modified().map(ns_since_epoch).unwrap_or(0),
        }
    }

    /// Whether the file may still change without its stamp changing.
    pub fn is_racy(&self) -> bool {
        ns_since_epoch(crate::clock::file_time_now()) - self.mtime_ns < RACY_NS
    }
}

fn ns_since_epoch(t: SystemTime) -> i128 {
    t.duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as i128)
        .unwrap_or(0)
}

/// The digest a line of text is known by where a stranger could profit
/// from a collision (the operator's vouched words, the words outside
/// exchanges added): SHA-256 of its trimmed text, in hex. FNV-1a is for
/// caches and fingerprints, where a collision costs a rebuild, not trust.
pub fn line_key(line: &str) -> String {
    sha256_hex(line.trim().as_bytes())
}

/// SHA-256 of `bytes`, in hex: what trust and the line keys compare.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(bytes);
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// FNV-1a over `bytes`.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf29ce484222325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x100000001b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_key_is_sha256_of_the_trimmed_words() {
        // FIPS 180-2's test vector for "abc".
        let abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
        assert_eq!(sha256_hex(b"abc"), abc);
        assert_eq!(line_key("  abc\t"), abc);
        assert_ne!(line_key("abd"), abc);
    }
}
