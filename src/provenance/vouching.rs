//! `hearth vouch`: the operator's act that clears outside lines. It
//! names places (`memory/notes/x.md:3-5`, or a whole file's outside
//! lines), adds their words to the book ([`super::vouch`]) and commits
//! the book as the operator's.

use chrono::{DateTime, Utc};

use super::vouch::{Vouched, VOUCHED};
use crate::home::Home;
use crate::json_file::JsonFileError;

/// Why lines could not be vouched for.
#[derive(Debug, thiserror::Error)]
pub enum VouchError {
    /// The place is not `PATH`, `PATH:N` or `PATH:N-M` of a file in the home.
    #[error("{place}: {why}")]
    Place {
        /// The place as given.
        place: String,
        /// What is wrong with it.
        why: String,
    },
    /// The book could not be read.
    #[error(transparent)]
    Book(#[from] JsonFileError),
    /// The book could not be written.
    #[error(transparent)]
    Write(#[from] crate::atomic::WriteError),
    /// The commit lock or the commit failed.
    #[error(transparent)]
    Lock(#[from] crate::home::lock::LockError),
    /// The commit failed.
    #[error(transparent)]
    Repo(#[from] crate::repo::RepoError),
}

impl VouchError {
    /// What to do about it.
    pub fn hint(&self) -> String {
        match self {
            VouchError::Place { .. } => "name a file in the home and, if you like, its lines: \
                 hearth vouch memory/notes/x.md:3-5 (`hearth audit` lists outside lines)"
                .into(),
            VouchError::Book(e) => e.hint(),
            VouchError::Write(e) => e.hint(),
            VouchError::Lock(e) => e.hint(),
            VouchError::Repo(e) => e.hint(),
        }
    }
}

/// A place the operator vouches for: a file, and optionally its lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    /// The file, relative to the home.
    pub path: String,
    /// 1-based, inclusive; `None`: every outside line of the file.
    pub lines: Option<(usize, usize)>,
}

/// Parses `memory/x.md`, `memory/x.md:3` or `memory/x.md:3-5`.
pub fn parse_place(raw: &str) -> Result<Place, VouchError> {
    let bad = |why: &str| VouchError::Place {
        place: raw.to_string(),
        why: why.to_string(),
    };
    let (path, lines) = match raw.rsplit_once(':') {
        Some((path, range)) if range.chars().all(|c| c.is_ascii_digit() || c == '-') => {
            let (a, b) = range.split_once('-').unwrap_or((range, range));
            let a: usize = a.parse().map_err(|_| bad("the line must be a number"))?;
            let b: usize = b
                .parse()
                .map_err(|_| bad("the last line must be a number"))?;
            if a == 0 || b < a {
                return Err(bad(
                    "lines count from 1, and the range must not run backwards",
                ));
            }
            (path, Some((a, b)))
        }
        _ => (raw, None),
    };
    let path = path.trim_start_matches("./").trim_end_matches('/');
    if path.is_empty() || path.starts_with('/') || path.split('/').any(|p| p == "..") {
        return Err(bad("the path must be inside the home, relative to it"));
    }
    Ok(Place {
        path: path.to_string(),
        lines,
    })
}

/// What `hearth vouch` did: each line vouched for, as `path:line  text`.
#[derive(Debug, Default)]
pub struct Vouching {
    /// The lines newly vouched for.
    pub vouched: Vec<String>,
    /// The commit that records it, when one was made.
    pub commit: Option<String>,
}

/// Vouches for the lines at `places` (a whole file: its outside lines)
/// and commits the book as `operator`'s.
pub fn vouch(
    home: &Home,
    operator: &crate::repo::Identity,
    places: &[Place],
    now: DateTime<Utc>,
) -> Result<Vouching, VouchError> {
    let _lock = crate::home::lock::CommitLock::acquire(home)?;
    let mut book = Vouched::load(home)?;
    let repo = crate::repo::Repo::open(home.root())?;
    let mut done = Vouching::default();
    for place in places {
        let text =
            std::fs::read_to_string(home.path(&place.path)).map_err(|e| VouchError::Place {
                place: place.path.clone(),
                why: format!("cannot be read as text: {e}"),
            })?;
        let chosen: Vec<usize> = match place.lines {
            Some((a, b)) => (a..=b.min(text.lines().count())).collect(),
            None => {
                let origins =
                    repo.line_origins_on_disk(&place.path)
                        .map_err(|e| VouchError::Place {
                            place: place.path.clone(),
                            why: format!(
                                "which lines came from outside cannot be told ({e}); name \
                                 the lines to vouch for (`{}:N-M`)",
                                place.path
                            ),
                        })?;
                super::origin::outside_lines(&place.path, &text, &origins, &Vouched::default())
                    .into_iter()
                    .map(|l| l.line)
                    .collect()
            }
        };
        for n in chosen {
            let line = text.lines().nth(n - 1).unwrap_or_default();
            if !line.chars().any(char::is_alphanumeric) {
                continue;
            }
            let at = format!("{}:{n}", place.path);
            if book.add(line, &at, now) {
                done.vouched.push(format!("{at}  {}", line.trim()));
            }
        }
    }
    if done.vouched.is_empty() {
        return Ok(done);
    }
    book.save(home)?;
    let mut message = format!(
        "vouch: {} line(s) the operator read\n\n",
        done.vouched.len()
    );
    for line in &done.vouched {
        message.push_str(&format!("- {}\n", super::origin::bounded(line)));
    }
    done.commit = repo.commit(&[VOUCHED], operator, &message, now)?;
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn places_are_a_file_and_its_lines() {
        assert_eq!(
            parse_place("memory/x.md:3-5").unwrap(),
            Place {
                path: "memory/x.md".into(),
                lines: Some((3, 5))
            }
        );
        assert_eq!(parse_place("memory/x.md:7").unwrap().lines, Some((7, 7)));
        assert_eq!(parse_place("./memory/x.md").unwrap().lines, None);
        for bad in [
            "memory/x.md:0",
            "memory/x.md:5-3",
            "/etc/passwd",
            "../x.md",
            "",
        ] {
            assert!(parse_place(bad).is_err(), "{bad}");
        }
    }
}
