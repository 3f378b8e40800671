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

/// The home `name` of `dir`, when it is a directory of `dir` itself: a
/// symbolic link there (to a home elsewhere, another account's) is not
/// served.
fn home_in(dir: &std::path::Path, name: &str) -> Option<Home> {
    let path = dir.join(name);
    let real_dir = std::fs::symlink_metadata(&path).ok()?.file_type().is_dir();
    (plain_name(name) && real_dir)
        .then(|| Home::open(&path).ok())
        .flatten()
}

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
                match home_in(dir, name) {
                    Some(home) => Addressed::Home {
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
                        home_in(dir, &name).map(|home| (name, home))
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

    #[test]
    fn a_link_to_a_home_elsewhere_is_not_served() {
        let now = chrono::DateTime::from_timestamp(1_790_000_000, 0).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        crate::home::init(&dir.path().join("mine"), now).unwrap();
        crate::home::init(elsewhere.path(), now).unwrap();
        std::os::unix::fs::symlink(elsewhere.path(), dir.path().join("theirs")).unwrap();
        let homes = Homes::Many(dir.path().to_path_buf());
        assert!(matches!(homes.resolve("/h/mine/"), Addressed::Home { .. }));
        assert!(matches!(homes.resolve("/h/theirs/"), Addressed::Missing));
        let names: Vec<String> = homes.list().into_iter().map(|(n, _)| n).collect();
        assert_eq!(names, ["mine"]);
    }
}
