//! The check that keeps a merge stopped half way (conflict markers from a
//! sync by hand, a `git pull` gone wrong) out of every commit hearth makes:
//! the worktree scan refuses to stage a changed file that holds them.

/// Whether `bytes` hold a conflict git left: a `<<<<<<< ` line, then a
/// `=======` line, then a `>>>>>>> ` line (all three, in that order, so a
/// markdown heading underlined with `=======` is not one).
pub fn has_conflict_markers(bytes: &[u8]) -> bool {
    let mut stage = 0;
    for line in bytes.split(|b| *b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        stage = match stage {
            0 if line.starts_with(b"<<<<<<< ") || line == b"<<<<<<<" => 1,
            1 if line == b"=======" => 2,
            2 if line.starts_with(b">>>>>>> ") || line == b">>>>>>>" => return true,
            _ => stage,
        };
    }
    false
}
