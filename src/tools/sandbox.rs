//! Where the agent's tools may reach. Every path a model gives is resolved
//! here and nowhere else, so the rules hold by construction: relative to the
//! home, no `..`, no absolute paths, nothing in `.git/`, `.hearth/` or
//! `hearth.toml`, no symlink that leads out of the home or into a protected
//! place, and only the areas the tool is allowed (`memory/` for writes).
//! Writes are refused two more kinds of name: git's own files (`.gitignore`,
//! `.gitattributes`, …), which could hide later files from history, and
//! what the operator owns inside `memory/` (`memory/prompt.md`).

use std::path::{Component, Path, PathBuf};

use crate::home::layout::rel;
use crate::home::{Home, PROTECTED};

/// A top-level directory a tool may be allowed to reach.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Area {
    /// `memory/`.
    Memory,
    /// `state/`.
    State,
    /// `outbox/`.
    Outbox,
    /// `collaborations/`: read only (hearth and the operator write it).
    Collaborations,
}

impl Area {
    fn dir(self) -> &'static str {
        match self {
            Area::Memory => rel::MEMORY,
            Area::State => rel::STATE,
            Area::Outbox => rel::OUTBOX,
            Area::Collaborations => rel::COLLABORATIONS,
        }
    }
}

/// Files inside `memory/` that the agent may read but never write.
pub const OPERATOR_OWNED: &[&str] = &[rel::PROMPT];

/// Why a path was refused (shown to the model as the tool's error).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("path {shown} refused: {reason}")]
pub struct Refusal {
    /// The path as the model gave it.
    pub shown: String,
    /// Why it was refused.
    pub reason: Why,
}

/// The rule a path broke.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Why {
    /// Nothing was given.
    #[error("the path is empty")]
    Empty,
    /// A newline, an escape…
    #[error("the path holds control characters")]
    ControlCharacters,
    /// `..` anywhere.
    #[error("`..` is not allowed in paths")]
    ParentDir,
    /// `/etc/passwd`.
    #[error("absolute paths are not allowed; give a path inside the home, like memory/notes.md")]
    Absolute,
    /// The home itself could not be resolved on disk.
    #[error("the home cannot be resolved: {0}")]
    HomeUnresolved(String),
    /// A symlink along the path that points nowhere.
    #[error("it goes through a symlink that points nowhere")]
    DanglingSymlink,
    /// A symlink along the path that leads out of the home.
    #[error("it goes through a symlink that leads out of the home")]
    SymlinkOut,
    /// A symlink along the path that leads somewhere this rule refuses.
    #[error("it goes through a symlink, and there {0}")]
    ThroughSymlink(Box<Why>),
    /// `.` or nothing after resolving.
    #[error("the path names the home itself")]
    HomeItself,
    /// `.git/`, `.hearth/`, `hearth.toml`, `tools/`.
    #[error("{0} belongs to hearth and the operator")]
    Protected(String),
    /// A `.git` directory below the top.
    #[error(".git directories are off limits")]
    GitDir,
    /// `.gitignore`, `.gitattributes`… (writes only).
    #[error("{0} is a git control file (it could hide files from history); only the operator writes those")]
    GitControlFile(String),
    /// `memory/prompt.md` (writes only).
    #[error("{0} is the operator's: you may read it, not write it")]
    OperatorOwned(String),
    /// Outside the tool's areas.
    #[error("this tool may only reach {}", .0.join(", "))]
    OutsideAreas(Vec<String>),
}

/// Resolves `raw` (as the model wrote it) to a path inside `home`, within
/// one of `allowed`.
pub fn resolve(home: &Home, raw: &str, allowed: &[Area]) -> Result<PathBuf, Refusal> {
    let refuse = |reason: Why| Refusal {
        shown: shown(raw),
        reason,
    };
    if raw.trim().is_empty() {
        return Err(refuse(Why::Empty));
    }
    if raw.chars().any(char::is_control) {
        return Err(refuse(Why::ControlCharacters));
    }
    let path = Path::new(raw);
    let mut parts = Vec::new();
    for component in path.components() {
        match component {
            Component::Normal(part) => parts.push(part.to_string_lossy().into_owned()),
            Component::CurDir => {}
            Component::ParentDir => return Err(refuse(Why::ParentDir)),
            Component::RootDir | Component::Prefix(_) => return Err(refuse(Why::Absolute)),
        }
    }
    check_parts(&parts, allowed).map_err(refuse)?;

    // Follow what exists of the path on disk: a symlink anywhere along it
    // must land inside the home, in an allowed area, and not dangle (a
    // write through a dangling link would create its target wherever it
    // points).
    let root = home
        .root()
        .canonicalize()
        .map_err(|e| refuse(Why::HomeUnresolved(e.to_string())))?;
    // The path returned is where the bytes live: through a symlink, its
    // target (a write through `memory/self -> core` is a write to a core
    // memory, judged and committed as one).
    let mut current = root.clone();
    let mut rest = parts.iter();
    for part in rest.by_ref() {
        current.push(part);
        match std::fs::symlink_metadata(&current) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let real = current
                    .canonicalize()
                    .map_err(|_| refuse(Why::DanglingSymlink))?;
                let inside = real
                    .strip_prefix(&root)
                    .map_err(|_| refuse(Why::SymlinkOut))?;
                let real_parts: Vec<String> = inside
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect();
                check_parts(&real_parts, allowed)
                    .map_err(|r| refuse(Why::ThroughSymlink(Box::new(r))))?;
                current = root.join(real_parts.join("/"));
            }
            Ok(_) => {}
            Err(_) => break,
        }
    }
    for part in rest {
        current.push(part);
    }
    let inside = current
        .strip_prefix(&root)
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_else(|_| parts.join("/"));
    Ok(home.root().join(inside))
}

fn check_parts(parts: &[String], allowed: &[Area]) -> Result<(), Why> {
    let Some(first) = parts.first() else {
        return Err(Why::HomeItself);
    };
    if PROTECTED.contains(&first.as_str()) {
        return Err(Why::Protected(first.clone()));
    }
    if parts.iter().any(|p| p == ".git") {
        return Err(Why::GitDir);
    }
    let writing = !allowed.iter().any(|a| *a != Area::Memory);
    if writing {
        if let Some(git_file) = parts.iter().find(|p| p.starts_with(".git")) {
            return Err(Why::GitControlFile(git_file.clone()));
        }
        let joined = parts.join("/");
        if OPERATOR_OWNED.contains(&joined.as_str()) {
            return Err(Why::OperatorOwned(joined));
        }
    }
    if !allowed.iter().any(|a| a.dir() == first) {
        let names = allowed.iter().map(|a| format!("{}/", a.dir())).collect();
        return Err(Why::OutsideAreas(names));
    }
    Ok(())
}

/// A path as it may be echoed back: no control characters, bounded length.
pub fn shown(raw: &str) -> String {
    let clean: String = raw
        .chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .take(120)
        .collect();
    if raw.chars().count() > 120 {
        format!("{clean:?}…")
    } else {
        format!("{clean:?}")
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // fixtures, not state
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    const WRITE: &[Area] = &[Area::Memory];
    const READ: &[Area] = &[
        Area::Memory,
        Area::State,
        Area::Outbox,
        Area::Collaborations,
    ];

    fn home() -> (tempfile::TempDir, Home) {
        let dir = tempfile::tempdir().unwrap();
        for d in [
            "memory/notes",
            "state",
            "outbox",
            "collaborations",
            ".git",
            ".hearth",
        ] {
            std::fs::create_dir_all(dir.path().join(d)).unwrap();
        }
        std::fs::write(dir.path().join("hearth.toml"), "").unwrap();
        let home = Home::open(dir.path()).unwrap();
        (dir, home)
    }

    fn refused(home: &Home, raw: &str, allowed: &[Area]) -> String {
        resolve(home, raw, allowed).unwrap_err().to_string()
    }

    #[test]
    fn collaboration_records_are_read_never_written() {
        let (_d, home) = home();
        let p = resolve(&home, "collaborations/design-x.md", READ).unwrap();
        assert_eq!(p, home.root().join("collaborations/design-x.md"));
        let why = refused(&home, "collaborations/design-x.md", WRITE);
        assert!(why.contains("collaborations"), "{why}");
    }

    #[test]
    fn memory_paths_resolve_inside_the_home() {
        let (_d, home) = home();
        let p = resolve(&home, "memory/notes/new.md", WRITE).unwrap();
        assert_eq!(p, home.root().join("memory/notes/new.md"));
        let p = resolve(&home, "./memory/x.md", WRITE).unwrap();
        assert_eq!(p, home.root().join("memory/x.md"));
    }

    #[test]
    fn dot_dot_is_refused_even_when_it_stays_inside() {
        let (_d, home) = home();
        assert!(refused(&home, "memory/../memory/x.md", WRITE).contains(".."));
        assert!(refused(&home, "../outside.md", WRITE).contains(".."));
    }

    #[test]
    fn absolute_paths_are_refused() {
        let (_d, home) = home();
        let inside = home.root().join("memory/x.md");
        assert!(refused(&home, inside.to_str().unwrap(), WRITE).contains("absolute"));
        assert!(refused(&home, "/etc/passwd", READ).contains("absolute"));
    }

    #[test]
    fn protected_places_are_refused() {
        let (_d, home) = home();
        assert!(refused(&home, ".git/config", READ).contains(".git"));
        assert!(refused(&home, ".hearth/run.lock", READ).contains(".hearth"));
        assert!(refused(&home, "hearth.toml", READ).contains("hearth.toml"));
        assert!(refused(&home, "memory/sub/.git/config", WRITE).contains(".git"));
    }

    #[test]
    fn write_tools_reach_memory_only() {
        let (_d, home) = home();
        assert!(refused(&home, "state/messages.json", WRITE).contains("memory/"));
        assert!(refused(&home, "tools/evil.toml", WRITE).contains("memory/"));
        // A job is the operator's: the agent cannot schedule itself.
        assert!(refused(&home, "jobs/evil.toml", WRITE).contains("memory/"));
        assert!(refused(&home, "memory/../jobs/evil.toml", WRITE).contains("memory/"));
        resolve(&home, "state/messages.json", READ).unwrap();
    }

    #[test]
    fn git_control_files_and_the_operators_prompt_are_not_writable() {
        let (d, home) = home();
        assert!(refused(&home, "memory/.gitignore", WRITE).contains("git control file"));
        assert!(refused(&home, "memory/notes/.gitattributes", WRITE).contains("git control file"));
        assert!(refused(&home, "memory/prompt.md", WRITE).contains("operator's"));
        assert!(refused(&home, "./memory//prompt.md", WRITE).contains("operator's"));
        resolve(&home, "memory/prompt.md", READ).unwrap();
        std::fs::write(d.path().join("memory/prompt.md"), "rules").unwrap();
        symlink(
            d.path().join("memory/prompt.md"),
            d.path().join("memory/alias.md"),
        )
        .unwrap();
        assert!(refused(&home, "memory/alias.md", WRITE).contains("operator's"));
    }

    #[test]
    fn symlinks_leaving_the_home_are_refused() {
        let (d, home) = home();
        let outside = tempfile::tempdir().unwrap();
        symlink(outside.path(), d.path().join("memory/escape")).unwrap();
        assert!(refused(&home, "memory/escape/x.md", WRITE).contains("out of the home"));
        symlink("/etc/passwd", d.path().join("memory/passwd.md")).unwrap();
        assert!(refused(&home, "memory/passwd.md", READ).contains("out of the home"));
    }

    #[test]
    fn symlinks_into_protected_places_are_refused() {
        let (d, home) = home();
        symlink(d.path().join(".git"), d.path().join("memory/g")).unwrap();
        assert!(refused(&home, "memory/g/config", WRITE).contains(".git"));
        symlink(
            d.path().join("hearth.toml"),
            d.path().join("memory/conf.md"),
        )
        .unwrap();
        assert!(refused(&home, "memory/conf.md", WRITE).contains("hearth.toml"));
    }

    #[test]
    fn dangling_symlinks_are_refused() {
        let (d, home) = home();
        symlink("/nonexistent/target", d.path().join("memory/dangle.md")).unwrap();
        assert!(refused(&home, "memory/dangle.md", WRITE).contains("points nowhere"));
    }

    #[test]
    fn refusals_show_sanitised_bounded_names() {
        let (_d, home) = home();
        let long = format!("/{}", "a".repeat(500));
        let err = resolve(&home, &long, WRITE).unwrap_err();
        assert!(err.shown.chars().count() < 130);
        assert!(shown("x\u{1b}[31my").contains("x?[31my"));
    }
}
