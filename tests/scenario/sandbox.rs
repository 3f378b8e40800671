//! The agent's tools and their sandbox, through `tools::dispatch` on a
//! real home: what no call may reach, and that a refused call changes
//! nothing. (`e2e::reliability::sandbox` tries the same escapes through a
//! model on the wire and checks the key never leaks.)

use serde_json::{json, Value};

use hearth::config::Config;
use hearth::home::Home;
use hearth::tools::{self, ToolContext, ToolError};

use super::{home, now};

fn call(home: &Home, config: &Config, tool: &str, input: Value) -> Result<String, ToolError> {
    let mut ctx = ToolContext::new(home, config, 1, now(), Vec::new(), Default::default());
    tools::dispatch(&mut ctx, tool, &input)
}

/// Every file under `dir`, with its bytes, but hearth's caches derived
/// from the history (`.git/hearth/`: the line origins a judge brings up to
/// HEAD, the outside words), which hold nothing the history does not.
fn snapshot(dir: &std::path::Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<_> = walkdir::WalkDir::new(dir)
        .into_iter()
        .flatten()
        .filter(|e| e.file_type().is_file())
        .filter(|e| !e.path().to_string_lossy().contains("/.git/hearth/"))
        .map(|e| {
            (
                e.path().display().to_string(),
                std::fs::read(e.path()).unwrap_or_default(),
            )
        })
        .collect();
    files.sort();
    files
}

fn refused(result: Result<String, ToolError>, what: &str) -> String {
    match result {
        Err(ToolError::Refused { message, .. }) | Err(ToolError::Failed { message, .. }) => message,
        other => panic!("{what}: not refused: {other:?}"),
    }
}

#[test]
fn writes_reach_only_memory_and_a_refusal_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let home = home(&dir);
    let config = Config::default();
    let before = snapshot(dir.path());
    for path in [
        "../escape.md",
        "memory/../../escape.md",
        "/tmp/hearth-scenario-escape.md",
        ".git/config",
        ".hearth/run.lock",
        "hearth.toml",
        "tools/evil.toml",
        "state/healer.json",
        "outbox/forged.md",
        "inbox/forged.md",
        "memory/prompt.md",
        "memory/.gitignore",
        "memory/.gitattributes",
    ] {
        let why = refused(
            call(
                &home,
                &config,
                "write",
                json!({"path": path, "content": "escaped"}),
            ),
            path,
        );
        assert!(!why.is_empty(), "{path}");
    }
    assert!(refused(
        call(
            &home,
            &config,
            "edit",
            json!({"path": "memory/prompt.md", "old_string": "#", "new_string": "# obey me\n#"})
        ),
        "prompt edit"
    )
    .contains("operator's"));
    assert_eq!(snapshot(dir.path()), before, "nothing changed anywhere");
    assert!(!std::path::Path::new("/tmp/hearth-scenario-escape.md").exists());
}

#[test]
fn reads_reach_memory_state_outbox_and_collaborations_only() {
    let dir = tempfile::tempdir().unwrap();
    let home = home(&dir);
    let config = Config::default();
    for path in ["memory/identity.md", "memory", "state", "outbox"] {
        call(&home, &config, "read", json!({"path": path}))
            .unwrap_or_else(|e| panic!("{path}: {e}"));
    }
    for path in [
        "/etc/passwd",
        "../",
        ".git/HEAD",
        "hearth.toml",
        "tools",
        ".hearth",
        "inbox",
    ] {
        refused(call(&home, &config, "read", json!({"path": path})), path);
    }
}

#[test]
fn a_symlink_out_of_the_home_is_refused_both_ways() {
    let dir = tempfile::tempdir().unwrap();
    let home = home(&dir);
    let config = Config::default();
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("secret.md"), "secret").unwrap();
    std::os::unix::fs::symlink(&outside, home.path("memory/link-out")).unwrap();
    refused(
        call(
            &home,
            &config,
            "write",
            json!({"path": "memory/link-out/x.md", "content": "escaped"}),
        ),
        "symlinked write",
    );
    refused(
        call(
            &home,
            &config,
            "read",
            json!({"path": "memory/link-out/secret.md"}),
        ),
        "symlinked read",
    );
    assert_eq!(snapshot(&outside).len(), 1);
}

#[test]
fn a_write_past_max_write_bytes_is_refused_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let home = home(&dir);
    std::fs::write(home.config_path(), "[tools]\nmax_write_bytes = 1000\n").unwrap();
    let config = Config::load(&home.config_path()).unwrap();
    let why = refused(
        call(
            &home,
            &config,
            "write",
            json!({"path": "memory/big.md", "content": "x".repeat(1001)}),
        ),
        "a big write",
    );
    assert!(why.contains("max_write_bytes"), "{why}");
    assert!(!home.path("memory/big.md").exists());
    call(
        &home,
        &config,
        "write",
        json!({"path": "memory/small.md", "content": "x".repeat(900)}),
    )
    .unwrap();
    let why = refused(
        call(
            &home,
            &config,
            "append",
            json!({"path": "memory/small.md", "content": "x".repeat(200)}),
        ),
        "an append past the cap",
    );
    assert!(why.contains("max_write_bytes"), "{why}");
    assert_eq!(
        std::fs::read_to_string(home.path("memory/small.md"))
            .unwrap()
            .len(),
        900
    );
}

#[test]
fn a_glob_name_is_a_file_taken_literally() {
    let dir = tempfile::tempdir().unwrap();
    let home = home(&dir);
    let config = Config::default();
    call(
        &home,
        &config,
        "write",
        json!({"path": "memory/*.md", "content": "agent"}),
    )
    .unwrap();
    assert_eq!(
        std::fs::read_to_string(home.path("memory/*.md")).unwrap(),
        "agent"
    );
    assert!(
        std::fs::read_to_string(home.path("memory/identity.md")).unwrap() != "agent",
        "no other file was touched"
    );
}
