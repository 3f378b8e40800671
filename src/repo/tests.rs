//! Tests of `repo/mod.rs`.

#![allow(clippy::disallowed_methods)] // fixtures, not state

use super::*;

fn now() -> DateTime<Utc> {
    DateTime::from_timestamp(1_700_000_000, 0).unwrap()
}

#[test]
fn commit_only_the_given_paths_and_skip_empty_commits() {
    let dir = tempfile::tempdir().unwrap();
    let repo = Repo::init(dir.path()).unwrap();
    std::fs::create_dir_all(dir.path().join("state")).unwrap();
    std::fs::write(dir.path().join("state/a.json"), "{}").unwrap();
    std::fs::write(dir.path().join("notes.md"), "hand").unwrap();
    let id = repo
        .commit(&["state"], &Identity::hearth(), "tick 1", now())
        .unwrap();
    assert!(id.is_some());
    assert_eq!(repo.dirty_paths().unwrap(), vec!["notes.md".to_string()]);
    let again = repo
        .commit(&["state"], &Identity::hearth(), "tick 2", now())
        .unwrap();
    assert_eq!(again, None, "nothing changed under state/");
}

#[test]
fn a_long_lived_repo_sees_commits_made_by_another_process() {
    let dir = tempfile::tempdir().unwrap();
    let ours = Repo::init(dir.path()).unwrap();
    let file = |rel: &str, text: &str| std::fs::write(dir.path().join(rel), text).unwrap();
    file("a.md", "a1");
    file("b.md", "b1");
    ours.commit(&["."], &Identity::hearth(), "one", now())
        .unwrap()
        .unwrap();
    // Another process (`hearth say`, the operator's git) commits a.md.
    file("a.md", "a2");
    let theirs = Repo::open(dir.path()).unwrap();
    theirs
        .commit(&["a.md"], &Identity::hearth(), "theirs", now())
        .unwrap()
        .unwrap();
    let cli = std::process::Command::new("git")
        .args(["update-index", "--index-version", "2"])
        .current_dir(dir.path())
        .status();
    assert!(
        cli.is_ok_and(|s| s.success()),
        "git's CLI rewrites the index"
    );
    // A stale index in memory would still say a1: a.md would look edited.
    assert_eq!(ours.dirty_paths().unwrap(), Vec::<String>::new());
    // Ours commits b.md on an index it last wrote itself: a stale copy
    // in memory would put a1 back.
    file("b.md", "b2");
    ours.commit(&["b.md"], &Identity::hearth(), "ours", now())
        .unwrap()
        .unwrap();
    let head = ours.git.head().unwrap().peel_to_tree().unwrap();
    let blob = |rel: &str| {
        let id = head.get_path(Path::new(rel)).unwrap().id();
        String::from_utf8(ours.git.find_blob(id).unwrap().content().to_vec()).unwrap()
    };
    assert_eq!((blob("a.md"), blob("b.md")), ("a2".into(), "b2".into()));
    assert!(ours.dirty_paths().unwrap().is_empty());
}

#[test]
fn deletions_are_committed() {
    let dir = tempfile::tempdir().unwrap();
    let repo = Repo::init(dir.path()).unwrap();
    std::fs::create_dir_all(dir.path().join("inbox")).unwrap();
    std::fs::write(dir.path().join("inbox/m.md"), "hi").unwrap();
    repo.commit(&["."], &Identity::hearth(), "add", now())
        .unwrap();
    std::fs::remove_file(dir.path().join("inbox/m.md")).unwrap();
    assert_eq!(repo.dirty_paths().unwrap(), vec!["inbox/m.md".to_string()]);
    repo.commit(&["inbox"], &Identity::hearth(), "consume", now())
        .unwrap()
        .unwrap();
    assert!(repo.dirty_paths().unwrap().is_empty());
    let found = repo.last_good_version("inbox/m.md", 10, |_| true).unwrap();
    assert_eq!(found.unwrap().0, b"hi", "found in an older commit");
}

#[test]
fn good_ref_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    let repo = Repo::init(dir.path()).unwrap();
    std::fs::write(dir.path().join("a"), "a").unwrap();
    let id = repo
        .commit(&["."], &Identity::hearth(), "one", now())
        .unwrap()
        .unwrap();
    assert_eq!(repo.good(), None);
    repo.set_good(&id).unwrap();
    assert_eq!(repo.good(), Some(id));
}

#[test]
fn a_directory_without_git_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let err = Repo::open(dir.path()).err().unwrap();
    assert!(matches!(err, RepoError::NotARepo { .. }));
    assert!(err.hint().contains("hearth init"));
}

#[test]
fn a_garbled_head_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let repo = Repo::init(dir.path()).unwrap();
    std::fs::write(dir.path().join("a"), "a").unwrap();
    repo.commit(&["."], &Identity::hearth(), "one", now())
        .unwrap();
    std::fs::write(dir.path().join(".git/HEAD"), "garbage\n").unwrap();
    let err = Repo::open(dir.path()).err().unwrap();
    assert!(matches!(err, RepoError::BrokenHead { .. }), "{err}");
    assert!(err.hint().contains(".git/HEAD"));
}

#[test]
fn the_commit_that_introduced_a_file_is_found_past_commits_that_leave_its_directory_alone() {
    let dir = tempfile::tempdir().unwrap();
    let repo = Repo::init(dir.path()).unwrap();
    std::fs::create_dir_all(dir.path().join("outbox")).unwrap();
    std::fs::create_dir_all(dir.path().join("memory")).unwrap();
    let file = |rel: &str, text: &str| std::fs::write(dir.path().join(rel), text).unwrap();
    let commit = |msg: &str| {
        repo.commit(&["."], &Identity::hearth(), msg, now())
            .unwrap()
            .unwrap()
    };
    file("memory/x.md", "x1");
    commit("before");
    file("outbox/a.md", "a");
    let brought = commit("brings a");
    file("memory/x.md", "x2");
    commit("memory only: outbox/ unchanged");
    file("outbox/b.md", "b");
    commit("outbox/ changed, a.md not");
    file("memory/x.md", "x3");
    commit("memory again");
    assert_eq!(repo.introduced("outbox/a.md", now()), Some(brought));
    // Rewritten since: the commit that wrote what HEAD holds.
    file("outbox/a.md", "a, again");
    let rewrote = commit("rewrites a");
    file("memory/x.md", "x4");
    commit("memory");
    assert_eq!(repo.introduced("outbox/a.md", now()), Some(rewrote.clone()));
    assert_eq!(repo.introduced("outbox/none.md", now()), None);
    // All at once, one walk: the same answers, and none for a file HEAD
    // does not hold.
    let files: Vec<(String, DateTime<Utc>)> = ["a.md", "b.md", "none.md"]
        .iter()
        .map(|n| (n.to_string(), now()))
        .collect();
    let all = repo.introduced_all("outbox", &files);
    assert_eq!(all.get("a.md"), Some(&rewrote));
    assert_eq!(
        all.get("b.md").cloned(),
        repo.introduced("outbox/b.md", now())
    );
    assert!(!all.contains_key("none.md"));
}

#[test]
fn no_commit_carries_a_password_in_hearth_toml_and_the_file_stays() {
    let dir = tempfile::tempdir().unwrap();
    let repo = Repo::init(dir.path()).unwrap();
    let clean = "[git]\npush = true\n";
    std::fs::write(dir.path().join("hearth.toml"), clean).unwrap();
    std::fs::write(dir.path().join("a.md"), "one").unwrap();
    repo.commit(&["."], &Identity::hearth(), "one", now())
        .unwrap()
        .unwrap();
    let secret = format!("{clean}[peers]\nalice = \"https://me:pw@h/r.git\"\n");
    std::fs::write(dir.path().join("hearth.toml"), &secret).unwrap();
    std::fs::write(dir.path().join("a.md"), "two").unwrap();
    let done = repo
        .commit_scoped(&["."], &Identity::hearth(), &|_| "two".into(), now())
        .unwrap();
    assert!(done.commit.is_some(), "the rest is committed");
    assert!(
        done.problems
            .iter()
            .any(|p| p.contains("hearth.toml: holds a password")),
        "{:?}",
        done.problems
    );
    assert!(done.paths.iter().all(|p| p.to_string() != "hearth.toml"));
    let (committed, _) = repo.committed_file("hearth.toml").unwrap();
    assert_eq!(
        String::from_utf8_lossy(&committed),
        clean,
        "as the parent had it"
    );
    assert_eq!(repo.committed_file("a.md").unwrap().0, b"two");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("hearth.toml")).unwrap(),
        secret,
        "the file stays"
    );
    assert_eq!(repo.dirty_paths().unwrap(), vec!["hearth.toml".to_string()]);
    // A new home's first hearth.toml with a password is left out whole.
    let fresh = tempfile::tempdir().unwrap();
    let repo = Repo::init(fresh.path()).unwrap();
    std::fs::write(fresh.path().join("hearth.toml"), &secret).unwrap();
    std::fs::write(fresh.path().join("a.md"), "one").unwrap();
    repo.commit(&["."], &Identity::hearth(), "one", now())
        .unwrap()
        .unwrap();
    assert!(repo.committed_file("hearth.toml").is_none());
    // Fixed, it is committed as any edit.
    std::fs::write(fresh.path().join("hearth.toml"), clean).unwrap();
    repo.commit(&["."], &Identity::hearth(), "fixed", now())
        .unwrap()
        .unwrap();
    assert_eq!(
        repo.committed_file("hearth.toml").unwrap().0,
        clean.as_bytes()
    );
}

/// A diff's paths come from libgit2, byte for byte, whatever git's text
/// would quote: scripts, quotes, spaces, a backslash, a newline, a tab, a
/// leading dash, and a name that is not UTF-8 (read lossily, so it names
/// no file and a judge finds it unreadable). Removed lines are kept per
/// old path, a deleted file's whole text among them.
#[test]
fn a_diff_names_every_changed_path_as_libgit2_reads_it() {
    use std::os::unix::ffi::OsStrExt as _;
    let dir = tempfile::tempdir().unwrap();
    let repo = Repo::init(dir.path()).unwrap();
    let notes = dir.path().join("memory/notes");
    std::fs::create_dir_all(&notes).unwrap();
    std::fs::write(notes.join("gone.md"), "a line that goes\n").unwrap();
    std::fs::write(notes.join("kept.md"), "old words\nstay\n").unwrap();
    let base = repo
        .commit(&["."], &Identity::hearth(), "base", now())
        .unwrap()
        .unwrap();
    let names = [
        "règles.md",
        "the \"orders\".md",
        "日本語 メモ.md",
        "back\\slash.md",
        "new\nline.md",
        "tab\there.md",
        "-dash.md",
    ];
    for name in names {
        std::fs::write(notes.join(name), "planted\n").unwrap();
    }
    let raw = std::ffi::OsStr::from_bytes(b"latin1-\xe9.md");
    std::fs::write(notes.join(raw), "planted\n").unwrap();
    std::fs::remove_file(notes.join("gone.md")).unwrap();
    std::fs::write(notes.join("kept.md"), "new words\nstay\n").unwrap();
    repo.commit(&["."], &Identity::hearth(), "changes", now())
        .unwrap()
        .unwrap();
    let since = repo.diff_since(&base, "memory", 100_000).unwrap();
    for name in names {
        let path = format!("memory/notes/{name}");
        assert!(since.changed.contains(&path), "{path:?}: {since:?}");
        assert!(dir.path().join(&path).is_file());
    }
    let lossy = "memory/notes/latin1-\u{fffd}.md".to_string();
    assert!(since.changed.contains(&lossy), "{since:?}");
    assert!(
        !dir.path().join(&lossy).exists(),
        "a lossy name names nothing"
    );
    assert!(!since.changed.contains(&"memory/notes/gone.md".to_string()));
    assert_eq!(since.removed["memory/notes/gone.md"], "a line that goes\n");
    assert_eq!(since.removed["memory/notes/kept.md"], "old words\n");
    assert!(since.text.contains("planted"));
}

/// The operator commits with git in a loop while hearth commits: no commit
/// of hearth's fails with "current tip is not the first parent" (one of a
/// few hundred did, and the supervisor exited), each lands on whatever tip
/// the operator left, and every change of hearth's is its own commit —
/// hearth holds git's index lock from staging to moving HEAD, so the
/// operator's `git commit` can no longer take hearth's staged paths as its
/// own (it took 6 ticks of 42 in a trial). No commit of either is lost.
#[test]
fn another_committer_moving_the_branch_is_built_on_never_fatal() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_path_buf();
    let repo = Repo::init(&root).unwrap();
    std::fs::create_dir_all(root.join("state")).unwrap();
    std::fs::write(root.join("state/n.json"), "0").unwrap();
    repo.commit(&["."], &Identity::hearth(), "init", now())
        .unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let operator = {
        let (root, stop) = (root.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut made = 0usize;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let ok = std::process::Command::new("git")
                    .args(["-c", "user.name=ada", "-c", "user.email=ada@example.org"])
                    .args(["commit", "-q", "--allow-empty", "-m", "operator"])
                    .current_dir(&root)
                    .stderr(std::process::Stdio::null())
                    .status()
                    .is_ok_and(|s| s.success());
                made += usize::from(ok);
            }
            made
        })
    };
    let mut ours = 0;
    for n in 1..=150 {
        std::fs::write(root.join("state/n.json"), n.to_string()).unwrap();
        let made = repo
            .commit(&["state"], &Identity::hearth(), &format!("tick {n}"), now())
            .unwrap_or_else(|e| panic!("commit {n} failed beside the operator's git: {e}"));
        ours += usize::from(made.is_some());
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let theirs = operator.join().unwrap();
    assert!(theirs > 0, "the operator's git committed meanwhile");
    let git_log = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .args(["log", "--format=%s"])
            .args(args)
            .current_dir(&root)
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap()
    };
    let all = git_log(&[]);
    let ticks = all.lines().filter(|l| l.starts_with("tick ")).count();
    assert_eq!(
        ours, 150,
        "every change of hearth's made a commit of its own"
    );
    assert_eq!(ticks, 150, "no commit of hearth's was lost from the branch");
    let by_operator = all.lines().filter(|l| *l == "operator").count();
    assert_eq!(by_operator, theirs, "no commit of the operator's was lost");
    let head = std::process::Command::new("git")
        .args(["show", "HEAD:state/n.json"])
        .current_dir(&root)
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&head.stdout),
        "150",
        "HEAD holds the last"
    );
}
