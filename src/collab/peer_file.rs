//! A peer's file names are data, never paths (DESIGN 14). A git tree
//! carries entry names as they were written — with `/` inside them,
//! literally `..`, a newline, bytes that are not UTF-8 — so a name read
//! from a peer's `outbox/` is checked here before anything of this home is
//! built from it: one plain path component of bounded length, or it is
//! refused and named (quoted, so it can forge no line of the log).

/// The longest name of a peer's handoff file taken (bytes): the longest a
/// home writes is about 178 (its time, `handoff-`, a 64-byte slug, the
/// round, `-to-`, a 64-byte name, `.md`). The inbox message's name adds
/// `handoff-PEER-` (at most 73 bytes) and stays within the 255 bytes a
/// file name can have.
pub const MAX_NAME_BYTES: usize = 180;

/// The longest name a file can have here.
pub const MAX_FILE_NAME_BYTES: usize = 255;

/// Why a name in a peer's `outbox/` is not taken.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{} {why}", quoted(.name))]
pub struct BadName {
    /// The name as the peer's tree or directory holds it.
    pub name: String,
    /// What is wrong with it.
    pub why: &'static str,
}

/// `name` if it can stand as one file in `inbox/`: not empty, not `.` or
/// `..`, no `/` or `\`, no NUL or other control character, UTF-8 (a name
/// read lossily holds U+FFFD), at most [`MAX_NAME_BYTES`].
pub fn check(name: &str) -> Result<&str, BadName> {
    check_within(name, MAX_NAME_BYTES)
}

/// [`check`] with another bound on the length: what this home makes of a
/// peer's name (its inbox message's) may be as long as a file name can be.
pub fn check_within(name: &str, max: usize) -> Result<&str, BadName> {
    let why = if name.is_empty() {
        Some("is empty")
    } else if name == "." || name == ".." {
        Some("names a directory, not a file")
    } else if name.contains(['/', '\\']) {
        Some("holds a path separator")
    } else if name.chars().any(char::is_control) {
        Some("holds a control character (a newline, a tab, NUL…)")
    } else if name.contains('\u{FFFD}') {
        Some("is not UTF-8")
    } else if name.starts_with('.') {
        Some("is hidden (starts with a dot)")
    } else if name.len() > max {
        Some("is too long for a file name here")
    } else {
        None
    };
    match why {
        None => Ok(name),
        Some(why) => Err(BadName {
            name: name.to_string(),
            why,
        }),
    }
}

/// A name as the log and status show it: in quotes, with every control
/// character escaped and at most 200 characters.
pub fn quoted(name: &str) -> String {
    let cut: String = name.chars().take(200).collect();
    let more = if cut.len() < name.len() { "…" } else { "" };
    format!("{:?}{more}", cut)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_is_one_plain_component_or_it_is_refused_and_quoted() {
        assert!(check("20260101T000000.000Z-handoff-x-1-to-bob.md").is_ok());
        for bad in [
            "",
            ".",
            "..",
            "../../x-handoff-x-1-to-bob.md",
            "a/b-handoff-x-1-to-bob.md",
            "a\\b",
            "x\n2026 INFO took handoff-x-1-to-bob.md",
            "x\0y",
            "x\u{FFFD}y",
            ".hidden-handoff-x-1-to-bob.md",
        ] {
            let refused = check(bad).expect_err(bad);
            let said = refused.to_string();
            assert!(!said.contains('\n'), "{said}");
        }
        let long = "a".repeat(MAX_NAME_BYTES + 1);
        assert!(check(&long).is_err());
        assert!(check(&long[1..]).is_ok());
        // The longest a home writes: 64-byte slug and peer, a large round.
        let (slug, peer) = ("s".repeat(64), "p".repeat(64));
        let longest = format!("20261124T090000.000Z-handoff-{slug}-4294967295-to-{peer}.md");
        assert!(check(&longest).is_ok(), "{} bytes", longest.len());
        let inbox = format!("handoff-{peer}-{longest}");
        assert!(
            check_within(&inbox, MAX_FILE_NAME_BYTES).is_ok(),
            "{}",
            inbox.len()
        );
        assert_eq!(quoted("a\nb"), "\"a\\nb\"");
    }
}
