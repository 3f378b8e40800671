//! Which home a request is about: the one home `hearth web` serves, or —
//! with `--homes DIR` (hosts of `hearth@NAME`) — an index of every home
//! under DIR at `/` and each home's pages under `/h/NAME/`. A name is a
//! plain directory name that holds a `hearth.toml`; anything else is no
//! home, so a request cannot reach outside DIR.

use std::path::PathBuf;

use crate::home::Home;

/// The homes a page serves.
#[derive(Debug, Clone)]
pub enum Homes {
    /// One home, its pages at `/`.
    One(Home),
    /// Every home under a directory, each under `/h/NAME/`.
    Many(PathBuf),
}

/// What a request's path names.
#[derive(Debug)]
pub enum Addressed {
    /// The index of homes (`/` with `--homes`).
    Index,
    /// No home of that name.
    Missing,
    /// A page of `home`: `rest` (`/jobs`) under `base` (`/h/NAME`).
    Home {
        /// The home.
        home: Home,
        /// Where its pages are (empty for the one home).
        base: String,
        /// The page within it.
        rest: String,
    },
}

/// The most homes the index lists.
pub const LISTED: usize = 500;

/// Whether `name` could be a home's directory name in a path: letters,
/// digits, `-`, `_`, `.` (not first).
fn plain_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

impl Homes {
    /// What `path` names.
    pub fn resolve(&self, path: &str) -> Addressed {
        match self {
            Homes::One(home) => Addressed::Home {
                home: home.clone(),
                base: String::new(),
                rest: path.to_string(),
            },
            Homes::Many(_) if path == "/" => Addressed::Index,
            Homes::Many(dir) => {
                let Some(after) = path.strip_prefix("/h/") else {
                    return Addressed::Missing;
                };
                let (name, rest) = after.split_once('/').unwrap_or((after, ""));
                match plain_name(name).then(|| Home::open(&dir.join(name))) {
                    Some(Ok(home)) => Addressed::Home {
                        home,
                        base: format!("/h/{name}"),
                        rest: format!("/{rest}"),
                    },
                    _ => Addressed::Missing,
                }
            }
        }
    }

    /// Every home served, by name (sorted; at most [`LISTED`]).
    pub fn list(&self) -> Vec<(String, Home)> {
        match self {
            Homes::One(home) => {
                let name = home
                    .root()
                    .file_name()
                    .map_or_else(|| "home".to_string(), |n| n.to_string_lossy().into_owned());
                vec![(name, home.clone())]
            }
            Homes::Many(dir) => {
                let mut homes: Vec<(String, Home)> = std::fs::read_dir(dir)
                    .into_iter()
                    .flatten()
                    .filter_map(Result::ok)
                    .filter_map(|entry| {
                        let name = entry.file_name().to_str()?.to_string();
                        let home = Home::open(&entry.path()).ok()?;
                        plain_name(&name).then_some((name, home))
                    })
                    .collect();
                homes.sort_by(|a, b| a.0.cmp(&b.0));
                homes.truncate(LISTED);
                homes
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_plain_name_can_be_a_home() {
        assert!(plain_name("alice"));
        assert!(plain_name("bob-2.test"));
        assert!(!plain_name(".."));
        assert!(!plain_name(".hidden"));
        assert!(!plain_name("a/b"));
        assert!(!plain_name(""));
        assert!(!plain_name("a%2Fb"));
    }

    #[test]
    fn a_path_outside_h_names_no_home_of_many() {
        let homes = Homes::Many(PathBuf::from("/nonexistent-dir-for-test"));
        assert!(matches!(homes.resolve("/"), Addressed::Index));
        assert!(matches!(homes.resolve("/jobs"), Addressed::Missing));
        assert!(matches!(homes.resolve("/h/../etc/"), Addressed::Missing));
        assert!(matches!(homes.resolve("/h/nobody/"), Addressed::Missing));
    }
}
