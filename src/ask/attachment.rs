//! Piped input that goes with a question: read no further than the limit,
//! so `yes | hearth ask` neither reads for ever nor holds 100 MB in memory
//! to send 32 KiB of it.

/// How much piped input goes with a question.
pub const ATTACHMENT_BYTES: usize = 32 * 1024;

/// Piped input, read no further than the limit (`yes | hearth ask` must
/// not read for ever, nor 100 MB into memory to send 32 KiB of it).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Attachment {
    /// What was read, decoded (invalid UTF-8 replaced).
    pub text: String,
    /// How many bytes were read, before decoding.
    pub bytes: usize,
    /// Whether more followed that was not read.
    pub more: bool,
}

impl Attachment {
    /// Reads at most [`ATTACHMENT_BYTES`] from `input`, and one byte more
    /// to know whether anything was left.
    pub fn read(input: impl std::io::Read) -> std::io::Result<Attachment> {
        use std::io::Read as _;
        let mut raw = Vec::new();
        input
            .take(ATTACHMENT_BYTES as u64 + 1)
            .read_to_end(&mut raw)?;
        let more = raw.len() > ATTACHMENT_BYTES;
        raw.truncate(ATTACHMENT_BYTES);
        // A character cut at the limit is dropped, not replaced.
        let text = match std::str::from_utf8(&raw) {
            Ok(t) => t.to_string(),
            Err(e) if more && e.error_len().is_none() => {
                String::from_utf8_lossy(&raw[..e.valid_up_to()]).into_owned()
            }
            Err(_) => String::from_utf8_lossy(&raw).into_owned(),
        };
        Ok(Attachment {
            text,
            bytes: raw.len(),
            more,
        })
    }
}
