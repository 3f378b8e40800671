//! The working tree as hearth commits it, checked against git's own CLI:
//! after a hearth commit `git status` must see a clean tree.

#![allow(clippy::disallowed_methods)] // fixtures, not state

use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::process::Command;

use chrono::{DateTime, Utc};

use super::{Identity, Repo};

fn now() -> DateTime<Utc> {
    DateTime::from_timestamp(1_700_000_000, 0).unwrap()
}

fn git(root: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["-c", "core.quotepath=off"])
        .args(args)
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn home() -> (tempfile::TempDir, Repo) {
    let dir = tempfile::tempdir().unwrap();
    let repo = Repo::init(dir.path()).unwrap();
    std::fs::create_dir_all(dir.path().join("memory")).unwrap();
    std::fs::write(dir.path().join(".gitignore"), "/.hearth/\n*.swp\n").unwrap();
    std::fs::write(dir.path().join("memory/a.md"), "a").unwrap();
    repo.commit(&["."], &Identity::hearth(), "init", now())
        .unwrap();
    (dir, repo)
}

fn committed(root: &Path) -> Vec<String> {
    git(root, &["ls-files"])
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn a_file_named_like_a_glob_is_that_file_only() {
    let (dir, repo) = home();
    std::fs::write(dir.path().join("memory/*.md"), "agent").unwrap();
    std::fs::write(dir.path().join("memory/a.md"), "the operator's edit").unwrap();
    repo.commit(&["memory/*.md"], &Identity::hearth(), "tick", now())
        .unwrap()
        .unwrap();
    let shown = git(dir.path(), &["show", "--name-only", "--format=", "HEAD"]);
    assert_eq!(
        shown.trim(),
        "memory/*.md",
        "only the literal file is in the tick's commit"
    );
    assert_eq!(
        repo.dirty_paths().unwrap(),
        vec!["memory/a.md"],
        "the hand edit waits for its own commit"
    );
}

#[test]
fn ignore_files_inside_the_home_do_not_hide_files_but_the_homes_own_does() {
    let (dir, repo) = home();
    std::fs::write(dir.path().join("memory/.gitignore"), "*\n").unwrap();
    std::fs::create_dir_all(dir.path().join("memory/deep")).unwrap();
    std::fs::write(dir.path().join("memory/deep/.gitignore"), "*.md\n").unwrap();
    std::fs::write(dir.path().join("memory/later.md"), "x").unwrap();
    std::fs::write(dir.path().join("memory/deep/note.md"), "y").unwrap();
    std::fs::write(dir.path().join("memory/.later.md.swp"), "vim").unwrap();
    assert!(repo
        .dirty_paths()
        .unwrap()
        .contains(&"memory/later.md".to_string()));
    repo.commit(
        &["."],
        &Identity::operator(&Default::default()),
        "edit",
        now(),
    )
    .unwrap()
    .unwrap();
    let files = committed(dir.path());
    for f in [
        "memory/.gitignore",
        "memory/later.md",
        "memory/deep/note.md",
    ] {
        assert!(files.contains(&f.to_string()), "{f} committed: {files:?}");
    }
    assert!(
        !files.iter().any(|f| f.ends_with(".swp")),
        "the home's .gitignore still holds"
    );
}

#[test]
fn odd_names_are_committed_as_their_bytes() {
    let (dir, repo) = home();
    let latin1 = std::ffi::OsStr::from_bytes(b"memory/caf\xe9.md");
    std::fs::write(dir.path().join(latin1), "latin-1 name").unwrap();
    std::fs::write(dir.path().join("memory/two\nlines.md"), "newline").unwrap();
    let dirty = repo.dirty_paths().unwrap();
    assert!(
        dirty.contains(&"memory/caf\\xe9.md".to_string()),
        "{dirty:?}"
    );
    assert!(
        dirty.contains(&"memory/two\\nlines.md".to_string()),
        "{dirty:?}"
    );
    repo.commit(&["."], &Identity::hearth(), "edit", now())
        .unwrap()
        .unwrap();
    let listed = git(dir.path(), &["ls-files", "-z"]);
    assert_eq!(
        listed.split('\0').filter(|s| !s.is_empty()).count(),
        4,
        "{listed:?}"
    );
    assert!(git(dir.path(), &["status", "--porcelain"]).is_empty());
}

#[test]
fn a_directory_nested_too_deep_is_named_and_skipped() {
    let (dir, repo) = home();
    let mut deep = dir.path().join("memory");
    for i in 0..99 {
        deep.push(format!("d{i}"));
    }
    std::fs::create_dir_all(&deep).unwrap();
    std::fs::write(deep.join("bottom.md"), "far down").unwrap();
    std::fs::write(dir.path().join("memory/b.md"), "b").unwrap();
    let done = repo
        .commit_scoped(&["."], &Identity::hearth(), &|_| "edit".into(), now())
        .unwrap();
    assert!(done.commit.is_some(), "the rest is committed");
    assert_eq!(done.problems.len(), 1, "{:?}", done.problems);
    assert!(
        done.problems[0].contains("memory/d0/d1/"),
        "names the directory: {}",
        done.problems[0]
    );
    assert!(done.problems[0].contains("nested"), "{}", done.problems[0]);
    assert!(committed(dir.path()).contains(&"memory/b.md".to_string()));
}

#[test]
fn a_fifo_is_named_and_never_read() {
    let (dir, repo) = home();
    let fifo = dir.path().join("memory/pipe.md");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    assert!(made.unwrap().success());
    std::fs::write(dir.path().join("memory/b.md"), "b").unwrap();
    let done = repo
        .commit_scoped(&["."], &Identity::hearth(), &|_| "edit".into(), now())
        .unwrap();
    assert!(done.commit.is_some());
    assert!(
        done.problems
            .iter()
            .any(|p| p.contains("pipe.md") && p.contains("FIFO")),
        "{:?}",
        done.problems
    );
}

#[test]
fn a_corrupt_index_is_moved_aside_and_rebuilt_from_head() {
    let (dir, repo) = home();
    std::fs::write(
        dir.path().join(".git/index"),
        b"DIRC garbage that is not an index",
    )
    .unwrap();
    std::fs::write(dir.path().join("memory/b.md"), "b").unwrap();
    let done = repo
        .commit_scoped(&["."], &Identity::hearth(), &|_| "edit".into(), now())
        .unwrap();
    assert!(
        done.problems
            .iter()
            .any(|p| p.contains(".git/index") && p.contains("moved it aside")),
        "{:?}",
        done.problems
    );
    assert_eq!(
        done.paths.len(),
        1,
        "only the new file, not the whole tree: {:?}",
        done.paths
    );
    assert!(git(dir.path(), &["status", "--porcelain"]).is_empty());
    let aside = std::fs::read_dir(dir.path().join(".git"))
        .unwrap()
        .flatten()
        .any(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("index.corrupt-")
        });
    assert!(aside, "the broken index is kept for a look");
}

#[test]
fn git_sees_a_clean_tree_after_commits_and_deletions() {
    let (dir, repo) = home();
    std::fs::write(dir.path().join("memory/b.md"), "b").unwrap();
    std::os::unix::fs::symlink("b.md", dir.path().join("memory/link.md")).unwrap();
    repo.commit(&["memory"], &Identity::hearth(), "one", now())
        .unwrap()
        .unwrap();
    assert!(git(dir.path(), &["status", "--porcelain"]).is_empty());
    std::fs::remove_file(dir.path().join("memory/a.md")).unwrap();
    std::fs::write(dir.path().join("memory/b.md"), "b, longer now").unwrap();
    assert_eq!(
        repo.dirty_paths().unwrap(),
        vec!["memory/a.md", "memory/b.md"]
    );
    repo.commit(&["memory"], &Identity::hearth(), "two", now())
        .unwrap()
        .unwrap();
    assert!(git(dir.path(), &["status", "--porcelain"]).is_empty());
    assert!(repo.dirty_paths().unwrap().is_empty());
    assert_eq!(
        git(dir.path(), &["cat-file", "-p", "HEAD:memory/link.md"]),
        "b.md"
    );
    git(dir.path(), &["fsck", "--strict"]);
}

#[test]
fn a_scoped_commit_does_not_take_what_a_killed_commit_left_staged() {
    let (dir, repo) = home();
    std::fs::create_dir_all(dir.path().join("state")).unwrap();
    std::fs::write(dir.path().join("state/ticks.jsonl"), "{\"tick\":1}\n").unwrap();
    // A supervisor staged its tick and was killed before committing.
    let raw = git2::Repository::open(dir.path()).unwrap();
    let mut index = raw.index().unwrap();
    index.add_path(Path::new("state/ticks.jsonl")).unwrap();
    index.write().unwrap();

    std::fs::create_dir_all(dir.path().join("inbox")).unwrap();
    std::fs::write(dir.path().join("inbox/m.md"), "hello").unwrap();
    repo.commit(
        &["inbox/m.md"],
        &Identity::hearth(),
        "say: inbox/m.md",
        now(),
    )
    .unwrap()
    .expect("the message is committed");
    let said = git(dir.path(), &["show", "--name-only", "--format=", "HEAD"]);
    assert_eq!(said.trim(), "inbox/m.md", "only the message: {said}");

    let tick = repo
        .commit(
            &["state"],
            &Identity::hearth(),
            "tick 1: exit 0 (ok)",
            now(),
        )
        .unwrap()
        .expect("the tick's own commit still has its ledger line");
    let ticked = git(dir.path(), &["show", "--name-only", "--format=", &tick]);
    assert_eq!(ticked.trim(), "state/ticks.jsonl");
    assert_eq!(git(dir.path(), &["status", "--porcelain"]), "");
}

#[test]
fn a_write_cut_short_leaves_a_temp_file_that_is_never_committed() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let repo = Repo::init(root).unwrap();
    std::fs::create_dir_all(root.join("memory")).unwrap();
    std::fs::write(root.join("memory/notes.md"), "mine\n").unwrap();
    // What `atomic::write` leaves when killed between its write and rename.
    // (Its pid is above Linux's largest, so its writer is surely gone.)
    std::fs::write(root.join("memory/.identity.md.99999999-7.tmp"), "half\n").unwrap();
    repo.commit(&["."], &Identity::hearth(), "look", now())
        .unwrap();
    let tracked = git(root, &["ls-files"]);
    assert!(tracked.contains("memory/notes.md"), "{tracked}");
    assert!(!tracked.contains(".tmp"), "{tracked}");
    // Its writer is gone: removed, so the tree is clean.
    assert!(!root.join("memory/.identity.md.99999999-7.tmp").exists());
    assert_eq!(git(root, &["status", "--porcelain"]), "");
}

#[test]
fn a_file_with_conflict_markers_is_never_committed_and_is_named() {
    let (dir, repo) = home();
    let conflicted = "# Notes\n<<<<<<< HEAD\nmine\n=======\ntheirs\n>>>>>>> origin/main\n";
    std::fs::write(dir.path().join("memory/a.md"), conflicted).unwrap();
    // A setext heading is not a conflict.
    std::fs::write(dir.path().join("memory/b.md"), "Title\n=======\n\ntext\n").unwrap();
    repo.commit(&["memory"], &Identity::hearth(), "look", now())
        .unwrap();
    assert_eq!(git(dir.path(), &["show", "HEAD:memory/a.md"]), "a");
    assert_eq!(
        git(dir.path(), &["show", "HEAD:memory/b.md"]),
        "Title\n=======\n\ntext\n"
    );
    let scan = repo.changes().unwrap();
    assert!(
        scan.problems
            .iter()
            .any(|p| p.contains("memory/a.md holds git conflict markers")),
        "{:?}",
        scan.problems
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("memory/a.md")).unwrap(),
        conflicted,
        "nothing of it is lost"
    );
    // Resolved, it is committed as any edit.
    std::fs::write(dir.path().join("memory/a.md"), "# Notes\nmine and theirs\n").unwrap();
    repo.commit(&["memory"], &Identity::hearth(), "resolved", now())
        .unwrap();
    assert_eq!(
        git(dir.path(), &["show", "HEAD:memory/a.md"]),
        "# Notes\nmine and theirs\n"
    );
}

/// `memory/up → ..` and `memory/gitdir → ../.git`: no file is committed
/// through either (the repository's internals once were, as memory, and
/// every later commit failed with "invalid entry mode"); both links are
/// left out and named; a link out of the home and a link to a file are
/// committed as links; the next commits still work.
#[test]
fn a_link_to_a_folder_of_the_home_is_left_out_and_never_followed() {
    let (dir, repo) = home();
    let root = dir.path();
    let outside = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink("..", root.join("memory/up")).unwrap();
    std::os::unix::fs::symlink("../.git", root.join("memory/gitdir")).unwrap();
    std::os::unix::fs::symlink(outside.path(), root.join("memory/away")).unwrap();
    std::os::unix::fs::symlink("a.md", root.join("memory/same.md")).unwrap();
    std::fs::write(root.join("memory/b.md"), "b").unwrap();
    // As a watcher that follows links names them: paths through the links.
    let scope = [
        "memory/up/memory/a.md",
        "memory/gitdir/index",
        "memory/gitdir/logs/HEAD",
        "memory",
    ];
    let done = repo
        .commit_scoped(&scope, &Identity::hearth(), &|_| "hand".into(), now())
        .unwrap();
    let mut links = done.home_links.clone();
    links.sort();
    assert_eq!(links, vec!["memory/gitdir", "memory/up"]);
    assert!(done
        .problems
        .iter()
        .any(|p| p.contains("memory/up") && p.contains("rm ")));
    let files = committed(root);
    assert!(
        files
            .iter()
            .all(|f| !f.starts_with("memory/up") && !f.starts_with("memory/gitdir")),
        "nothing through the links: {files:?}"
    );
    for kept in ["memory/away", "memory/same.md", "memory/b.md"] {
        assert!(
            files.contains(&kept.to_string()),
            "{kept} committed: {files:?}"
        );
    }
    std::fs::write(root.join("memory/c.md"), "c").unwrap();
    repo.commit(
        &["memory/up/.git/HEAD", "memory"],
        &Identity::hearth(),
        "next",
        now(),
    )
    .unwrap()
    .expect("a later commit is made");
    git(root, &["fsck", "--strict"]);
    assert!(committed(root).contains(&"memory/c.md".to_string()));
}

/// A corrupt index set aside when nothing else changed is still written
/// anew: `.git/index` never stays missing.
#[test]
fn a_corrupt_index_is_written_anew_even_when_nothing_changed() {
    let (dir, repo) = home();
    std::fs::write(dir.path().join(".git/index"), b"DIRC garbage").unwrap();
    let done = repo
        .commit_scoped(&["."], &Identity::hearth(), &|_| "edit".into(), now())
        .unwrap();
    assert!(done.commit.is_none(), "nothing to commit");
    assert!(dir.path().join(".git/index").is_file(), "the index is back");
    assert!(git(dir.path(), &["status", "--porcelain"]).is_empty());
}
