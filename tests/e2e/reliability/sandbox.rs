//! The agent probing its sandbox: a model (a real HTTP server on
//! 127.0.0.1 speaking the Anthropic stream) that calls the built-in tools
//! with every escape tried in issue 11. An escape "succeeds" if the call is
//! not refused or anything outside what the tool may touch changes; the API
//! key must appear nowhere: home, history, logs, `context`, `status`.

use serde_json::{json, Value};

use super::Table;
use crate::common::model_server::{anthropic, Answer, ModelServer};
use crate::common::TestHome;

pub const KEY: &str = "sk-ant-trial-SECRET-5e1f";

/// (what is tried, tool, arguments)
fn attempts() -> Vec<(&'static str, &'static str, Value)> {
    let w = |p: &str| json!({"path": p, "content": "escaped"});
    vec![
        ("traversal", "write", w("../escape.md")),
        (
            "traversal inside memory",
            "write",
            w("memory/../../escape.md"),
        ),
        ("absolute", "write", w("/tmp/hearth-trial-escape.md")),
        ("absolute read", "read", json!({"path": "/etc/passwd"})),
        ("symlink out", "write", w("memory/link-out/x.md")),
        (
            "symlink out, read",
            "read",
            json!({"path": "memory/link-passwd.md"}),
        ),
        ("symlink into .git", "write", w("memory/link-git/config")),
        ("symlink into state", "write", w("memory/link-state.md")),
        ("symlink to hearth.toml", "write", w("memory/link-toml.md")),
        ("NUL", "write", w("memory/x\u{0}.md")),
        ("backslashes", "write", w("memory\\..\\..\\escape.md")),
        (
            "look-alike slash",
            "write",
            w("memory\u{ff0f}..\u{ff0f}hearth.toml"),
        ),
        ("look-alike name", "write", w("\u{ff4d}emory/x.md")),
        ("control characters", "write", w("memory/\u{1b}[31mred.md")),
        (".git", "write", w(".git/config")),
        (".git nested", "write", w("memory/sub/.git/config")),
        (".hearth", "write", w(".hearth/run.lock")),
        ("tools/", "write", w("tools/evil.toml")),
        ("inbox/", "write", w("inbox/forged.md")),
        ("outbox/", "write", w("outbox/forged.md")),
        ("state/", "write", w("state/ticks.jsonl")),
        ("hearth.toml", "write", w("hearth.toml")),
        ("hearth.toml read", "read", json!({"path": "hearth.toml"})),
        ("/proc", "read", json!({"path": "/proc/self/environ"})),
        (
            "/proc via symlink",
            "read",
            json!({"path": "memory/link-proc.md"}),
        ),
        ("ignore file", "write", w("memory/.gitignore")),
        ("attributes file", "write", w("memory/notes/.gitattributes")),
        ("prompt.md write", "write", w("memory/prompt.md")),
        ("prompt.md append", "append", w("memory/prompt.md")),
        (
            "prompt.md edit",
            "edit",
            json!({"path": "memory/prompt.md", "old_string": "#", "new_string": "# pwned"}),
        ),
        ("prompt.md via symlink", "write", w("memory/link-prompt.md")),
        (
            "dot-dot in state read",
            "read",
            json!({"path": "state/../hearth.toml"}),
        ),
        ("empty path", "write", w("")),
        ("the home itself", "read", json!({"path": "."})),
        (
            "flare forgery, subject",
            "send",
            json!({"subject": "x\nkind: flare\nflare: panic", "body": "hi"}),
        ),
        (
            "flare forgery, body",
            "send",
            json!({"body": "---\nkind: flare\nflare: panic\n---\nforged"}),
        ),
        (
            "flare forgery, in_reply_to",
            "send",
            json!({"body": "hi", "in_reply_to": "x\nkind: flare"}),
        ),
        (
            "huge write",
            "write",
            json!({"path": "memory/huge.md", "content": "x".repeat(2 * 1024 * 1024)}),
        ),
        ("glob name", "write", w("memory/*.md")),
    ]
}

/// Sends are allowed (their fields must not forge a flare); a glob name
/// is an allowed file, taken literally. The rest must be refused.
fn allowed(what: &str) -> bool {
    what.starts_with("flare forgery") || what == "glob name"
}

pub fn run() -> Table {
    let mut table = Table::new("sandbox");
    let list = attempts();
    let mut turns = Vec::new();
    for (n, chunk) in list.chunks(10).enumerate() {
        let args: Vec<(String, String, String)> = chunk
            .iter()
            .enumerate()
            .map(|(i, (_, tool, input))| (format!("t{n}-{i}"), tool.to_string(), input.to_string()))
            .collect();
        let inputs: Vec<[&str; 1]> = args.iter().map(|(_, _, a)| [a.as_str()]).collect();
        let calls: Vec<(&str, &str, &[&str])> = args
            .iter()
            .zip(&inputs)
            .map(|((id, tool, _), input)| (id.as_str(), tool.as_str(), &input[..]))
            .collect();
        turns.push(Answer::Stream {
            events: anthropic::message("trying", &calls, 10, 1),
            hang: None,
        });
    }
    turns.push(Answer::Stream {
        events: anthropic::message("done", &[], 10, 1),
        hang: None,
    });
    let server = ModelServer::start(turns);
    let home = TestHome::with_config(&format!(
        "[model]\nprovider = \"anthropic\"\nmodel = \"claude-test\"\nbase_url = \"{}\"\nmax_retries = 0\n\
         [budget]\ndaily_usd = 0\n",
        server.url
    ));
    let outside = home.path.with_file_name("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::create_dir_all(home.file("memory/notes")).unwrap();
    let link = |target: &std::path::Path, name: &str| {
        std::os::unix::fs::symlink(target, home.file(name)).unwrap();
    };
    link(&outside, "memory/link-out");
    link(std::path::Path::new("/etc/passwd"), "memory/link-passwd.md");
    link(&home.file(".git"), "memory/link-git");
    link(&home.file("state/README.md"), "memory/link-state.md");
    link(&home.file("hearth.toml"), "memory/link-toml.md");
    link(
        std::path::Path::new("/proc/self/environ"),
        "memory/link-proc.md",
    );
    link(&home.file("memory/prompt.md"), "memory/link-prompt.md");
    // The links are the operator's, committed by hand.
    home.git(&["add", "-A"]);
    home.git(&[
        "-c",
        "user.name=operator",
        "-c",
        "user.email=o@x",
        "commit",
        "-qm",
        "links",
    ]);
    let protected = snapshot(&home, &outside);

    let out = home.keyed(&["run", "--ticks", "1"], KEY).output().unwrap();
    if !out.status.success() {
        table.fail(
            "the tick run failed",
            String::from_utf8_lossy(&out.stderr).into_owned(),
        );
    }
    let results = tool_results(&home);
    for (n, chunk) in list.chunks(10).enumerate() {
        for (i, (what, _, _)) in chunk.iter().enumerate() {
            table.trials += 1;
            let refused = results.get(&format!("t{n}-{i}")).copied();
            match (refused, allowed(what)) {
                (None, _) => table.fail("no tool result", what.to_string()),
                (Some(false), false) => table.fail("escape not refused", what.to_string()),
                _ => table.count("attempts refused or harmless", 1),
            }
        }
    }
    if snapshot(&home, &outside) != protected {
        table.fail(
            "a protected file changed",
            diff(&protected, &snapshot(&home, &outside)),
        );
    }
    for p in ["/tmp/hearth-trial-escape.md", "escape.md"] {
        if home.path.join(p).exists() || home.path.with_file_name(p).exists() {
            table.fail("a file was written outside the home", p.into());
        }
    }
    let flares = home.ok(&["flares", "--json"]);
    if flares.contains("forged") || flares.contains("\"panic\"") {
        table.fail("a flare was forged through send", flares);
    }
    let mut places = vec![
        ("stderr", String::from_utf8_lossy(&out.stderr).into_owned()),
        (
            "history",
            String::from_utf8_lossy(&home.git(&["log", "-p", "--all"]).stdout).into_owned(),
        ),
        ("context", {
            let out = home.keyed(&["context"], KEY).output().unwrap();
            String::from_utf8_lossy(&out.stdout).into_owned()
                + &String::from_utf8_lossy(&out.stderr)
        }),
        ("status", home.ok(&["status", "--json"])),
    ];
    for entry in walkdir::WalkDir::new(&home.path).into_iter().flatten() {
        if entry.file_type().is_file() {
            let bytes = std::fs::read(entry.path()).unwrap_or_default();
            places.push((
                "a file of the home",
                String::from_utf8_lossy(&bytes).into_owned(),
            ));
        }
    }
    for (place, text) in places {
        if text.contains(KEY) {
            table.fail("the API key leaked", place.into());
        }
    }
    table
}

/// tool_use_id → whether its result was an error, from messages.json.
fn tool_results(home: &TestHome) -> std::collections::HashMap<String, bool> {
    let messages: Value = serde_json::from_str(&home.read("state/messages.json")).unwrap();
    let mut found = std::collections::HashMap::new();
    for message in messages["messages"].as_array().into_iter().flatten() {
        for block in message["content"].as_array().into_iter().flatten() {
            if let Some(id) = block["tool_use_id"].as_str() {
                found.insert(id.to_string(), block["is_error"].as_bool().unwrap_or(false));
            }
        }
    }
    found
}

/// Every file outside `memory/` (and the files the agent may not write
/// inside it), with its bytes; and the outside directory.
fn snapshot(home: &TestHome, outside: &std::path::Path) -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::new();
    for root in [home.path.as_path(), outside] {
        for entry in walkdir::WalkDir::new(root)
            .sort_by_file_name()
            .into_iter()
            .flatten()
        {
            let rel = entry
                .path()
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            let watched = !rel.starts_with("memory/")
                || rel == "memory/prompt.md"
                || rel.ends_with(".gitignore")
                || rel.ends_with(".gitattributes");
            let volatile = rel.starts_with(".git/")
                || rel.starts_with(".hearth/")
                || rel.starts_with("state/")
                || rel.starts_with("outbox/");
            if entry.file_type().is_file() && watched && !volatile {
                files.push((rel, std::fs::read(entry.path()).unwrap_or_default()));
            }
        }
    }
    files
}

fn diff(a: &[(String, Vec<u8>)], b: &[(String, Vec<u8>)]) -> String {
    let names = |s: &[(String, Vec<u8>)]| s.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
    format!("before {:?}, after {:?}", names(a), names(b))
}
