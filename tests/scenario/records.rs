//! Records broken by hand, and names git finds awkward, through the
//! library: a broken collaboration record is named by file while the
//! others still list; a file name with a newline or invalid UTF-8 and a
//! corrupt `.git/index` never stop a commit.

use std::os::unix::ffi::OsStrExt;

use hearth::collab::operator;
use hearth::config::Config;
use hearth::repo::{Identity, Repo};

use super::{founding, home, now};

#[test]
fn a_record_broken_by_hand_is_named_and_the_others_still_list() {
    let dir = tempfile::tempdir().unwrap();
    let home = home(&dir);
    let config = Config::default();
    for name in ["Alpha", "Beta", "Gamma", "Delta"] {
        operator::found(&home, &config, founding(name), now()).unwrap();
    }
    std::fs::write(home.path("collaborations/beta.md"), "---\nslug: [\n---\n").unwrap();
    std::fs::write(
        home.path("collaborations/gamma.md"),
        b"---\nslug: \"gamma\xff\"\n---\n",
    )
    .unwrap();
    let delta = std::fs::read_to_string(home.path("collaborations/delta.md")).unwrap();
    std::fs::write(
        home.path("collaborations/delta.md"),
        delta.replace("slug: \"delta\"", "slug: \"alpha\""),
    )
    .unwrap();
    let (listed, broken) = hearth::collab::store::list(&home);
    let slugs: Vec<&str> = listed.iter().map(|c| c.slug.as_str()).collect();
    assert_eq!(slugs, ["alpha"]);
    let said: Vec<String> = broken.iter().map(ToString::to_string).collect();
    assert_eq!(said.len(), 3, "{said:?}");
    assert!(
        said[0].contains("collaborations/beta.md") && said[0].contains("not YAML"),
        "{said:?}"
    );
    assert!(
        said.iter()
            .any(|s| s.contains("gamma.md") && s.contains("not UTF-8")),
        "{said:?}"
    );
    assert!(
        said.iter()
            .any(|s| s.contains("delta.md") && s.contains("not the file's name")),
        "{said:?}"
    );
}

#[test]
fn names_with_a_newline_or_invalid_utf8_are_committed() {
    let dir = tempfile::tempdir().unwrap();
    let home = home(&dir);
    std::fs::write(home.path("memory/two\nlines.md"), "x").unwrap();
    let latin1 = home
        .root()
        .join(std::ffi::OsStr::from_bytes(b"memory/caf\xe9.md"));
    std::fs::write(latin1, "y").unwrap();
    let repo = Repo::open(home.root()).unwrap();
    let done = repo
        .commit_scoped(
            &["memory"],
            &Identity::hearth(),
            &|paths| format!("{} files", paths.len()),
            now(),
        )
        .unwrap();
    assert!(done.commit.is_some());
    assert_eq!(done.paths.len(), 2, "{:?}", done.problems);
    assert!(repo.dirty_paths().unwrap().is_empty(), "both committed");
}

#[test]
fn a_corrupt_git_index_is_moved_aside_named_and_rebuilt() {
    let dir = tempfile::tempdir().unwrap();
    let home = home(&dir);
    std::fs::write(home.root().join(".git/index"), "DIRC and then garbage").unwrap();
    std::fs::write(home.path("memory/note.md"), "after the crash\n").unwrap();
    let repo = Repo::open(home.root()).unwrap();
    let done = repo
        .commit_scoped(&["memory"], &Identity::hearth(), &|_| "note".into(), now())
        .unwrap();
    assert!(done.commit.is_some());
    assert!(
        done.problems
            .iter()
            .any(|p| p.contains(".git/index was corrupt")),
        "{:?}",
        done.problems
    );
    assert!(repo.dirty_paths().unwrap().is_empty());
    let aside = std::fs::read_dir(home.root().join(".git"))
        .unwrap()
        .flatten()
        .any(|e| e.file_name().to_string_lossy().starts_with("index.corrupt"));
    assert!(aside, "the broken index is kept beside it");
}

#[test]
fn a_tool_manifest_that_parses_but_cannot_be_used_is_named_at_its_key() {
    let dir = tempfile::tempdir().unwrap();
    let home = home(&dir);
    std::fs::create_dir_all(home.path("tools")).unwrap();
    std::fs::write(
        home.path("tools/slow.toml"),
        "name = \"slow\"\ndescription = \"Waits.\"\ncommand = [\"/bin/true\"]\n\n  timeout_s = 0\n",
    )
    .unwrap();
    std::fs::write(
        home.path("tools/odd.toml"),
        "name = \"odd\"\ndescription = \"Odd.\"\ncommand = [\"/bin/true\"]\n\n[parameters]\ntype = \"string\"\n",
    )
    .unwrap();
    std::fs::write(
        home.path("tools/read.toml"),
        "name = \"read\"\ndescription = \"Mine.\"\ncommand = [\"/bin/true\"]\n",
    )
    .unwrap();
    let (tools, problems) = hearth::tools::operator::load(&home, &["read", "write"]);
    assert!(tools.is_empty(), "{tools:?}");
    let said: Vec<String> = problems.iter().map(ToString::to_string).collect();
    assert_eq!(
        said,
        [
            "tools/odd.toml:5: [parameters] must be a JSON schema with type = \"object\"",
            "tools/read.toml:1: a tool named \"read\" exists already",
            "tools/slow.toml:5: timeout_s must be at least 1",
        ]
    );
}
