//! Boot, end to end on the binary: what `hearth context` shows the model,
//! what `hearth audit` says about it, and what a tick records. What the
//! boot loads and the audit finds is pinned in `scenario::boot`.

#![allow(clippy::disallowed_methods)] // fixtures, not state

use crate::common::TestHome;
use serde_json::Value;

fn memory(home: &TestHome, rel: &str, front: &str, body: &str) {
    let path = home.file(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, format!("---\n{front}\n---\n{body}")).unwrap();
}

fn json(home: &TestHome, args: &[&str]) -> Value {
    serde_json::from_str(&home.ok(args)).unwrap()
}

fn identity_block(context: &Value) -> String {
    let system = context["system"].as_array().unwrap();
    assert_eq!(system.len(), 2);
    assert_eq!(system[0]["source"], "memory/prompt.md");
    assert_eq!(system[1]["source"], "memory/identity.md");
    system[1]["text"].as_str().unwrap().to_string()
}

/// The library's side (what loads, what is drift) is `scenario::boot`;
/// here, what the binary says about it.
#[test]
fn audit_strict_names_a_near_miss_and_exits_1_until_it_is_fixed() {
    let home = TestHome::new();
    home.ok(&["init"]);
    memory(
        &home,
        "memory/core/kit.md",
        "title: Kit rules\ntags: [kit-identity]",
        "KIT-BODY: never skip the kit.\n",
    );
    let identity = identity_block(&json(&home, &["context", "--json"]));
    assert!(
        identity.contains("- Kit rules — memory/core/kit.md"),
        "{identity}"
    );
    let audit = json(&home, &["audit", "--json"]);
    assert_eq!(audit["drift"][0]["kind"], "near-miss");
    let strict = home.output(&["audit", "--strict"]);
    assert_eq!(strict.status.code(), Some(1));
    let text = String::from_utf8_lossy(&strict.stdout);
    assert!(text.contains("memory/core/kit.md [near-miss]"), "{text}");
    memory(
        &home,
        "memory/core/kit.md",
        "title: Kit rules\ntags: [facet:identity]",
        "KIT-BODY: never skip the kit.\n",
    );
    home.ok(&["audit", "--strict"]);
    assert!(identity_block(&json(&home, &["context", "--json"])).contains("KIT-BODY"));
}

#[test]
fn over_budget_memories_are_required_reads_in_context_audit_and_the_ledger() {
    let home = TestHome::with_config("[boot]\nidentity_budget_chars = 1500\n");
    std::fs::remove_file(home.file("memory/core/values.md")).unwrap();
    for name in ["a", "b", "c"] {
        memory(
            &home,
            &format!("memory/core/{name}.md"),
            "tags: [identity]",
            &format!("{}\n", name.repeat(450)),
        );
    }
    let context = json(&home, &["context", "--json"]);
    assert_eq!(
        context["required_reads"],
        serde_json::json!(["memory/core/c.md"])
    );
    let audit = json(&home, &["audit", "--json"]);
    assert_eq!(
        audit["required_reads"],
        serde_json::json!(["memory/core/c.md"])
    );
    assert_eq!(audit["drift"][0]["kind"], "over-budget");
    home.ok(&["run", "--ticks", "1"]);
    assert_eq!(
        home.ticks()[0]["required_reads"],
        serde_json::json!(["memory/core/c.md"])
    );
}

#[test]
fn a_malformed_memory_is_named_with_its_line_in_the_audit_and_the_ticks_log() {
    let home = TestHome::new();
    home.ok(&["init"]);
    memory(
        &home,
        "memory/core/m042.md",
        "title: Broken\ntags: [identity\ncore: true",
        "BODY-042\n",
    );
    let audit = json(&home, &["audit", "--json"]);
    assert_eq!(audit["problems"][0]["path"], "memory/core/m042.md");
    assert_eq!(audit["drift"][0]["kind"], "malformed");
    let out = home.output(&["run", "--ticks", "1"]);
    assert!(out.status.success());
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(
        log.contains("memory/core/m042.md:"),
        "the tick's log names the file and line: {log}"
    );
    assert_eq!(
        home.ticks()[0]["class"],
        "ok",
        "the tick is not failed for it"
    );
}

#[test]
fn system_blocks_are_byte_stable_while_files_do_not_change() {
    let home = TestHome::new();
    home.ok(&["run", "--ticks", "1"]);
    let first = json(&home, &["context", "--json"]);
    std::thread::sleep(std::time::Duration::from_millis(1100));
    home.ok(&["run", "--ticks", "1"]);
    let second = json(&home, &["context", "--json"]);
    assert_eq!(first["system"], second["system"]);
    assert_ne!(
        first["user_turn"], second["user_turn"],
        "the user turn carries the time and tick"
    );
}

#[test]
fn context_changes_nothing() {
    let home = TestHome::new();
    home.ok(&["init"]);
    home.ok(&["say", "what did you say last time?"]);
    let before = home.git(&["status", "--porcelain"]);
    let context = json(&home, &["context", "--json"]);
    assert_eq!(context["tier"], "continuation");
    assert!(context["user_turn"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .contains("what did you say last time?"));
    assert_eq!(context["tools"].as_array().unwrap().len(), 8);
    assert_eq!(home.git(&["status", "--porcelain"]).stdout, before.stdout);
    assert_eq!(home.list("inbox").len(), 1, "the message is still waiting");
    assert!(!home.file("state/messages.json").exists());
}

#[test]
fn a_long_running_agent_archives_old_turns_and_keeps_messages_json_small() {
    let home = TestHome::with_config("[context]\nhistory_tokens = 1000\n");
    for i in 0..12 {
        home.ok(&[
            "say",
            &format!("message {i}: {}", "padding words ".repeat(20)),
        ]);
        home.ok(&["run", "--ticks", "1"]);
    }
    let archives = home.list("state/archive");
    assert!(!archives.is_empty());
    for name in &archives {
        let archive: Value =
            serde_json::from_str(&home.read(&format!("state/archive/{name}"))).unwrap();
        assert_eq!(archive["version"], 1);
        assert!(!archive["messages"].as_array().unwrap().is_empty());
    }
    let messages = home.read("state/messages.json");
    assert!(
        messages.contains("[hearth: earlier conversation"),
        "a pointer stays"
    );
    let live: Value = serde_json::from_str(&messages).unwrap();
    let first = live["messages"][0]["content"].to_string();
    assert!(
        !first.contains("message 0:") && first.contains("[hearth: earlier conversation"),
        "the oldest turn moved out: {first}"
    );
    let all: String = archives
        .iter()
        .map(|n| home.read(&format!("state/archive/{n}")))
        .collect();
    assert!(all.contains("message 0:"), "and is in an archive");
    let tracked = home.git(&["ls-files", "state/archive"]);
    assert!(!tracked.stdout.is_empty(), "archives are committed");
}

#[test]
fn audit_works_on_a_home_whose_state_and_config_are_broken() {
    let home = TestHome::new();
    home.ok(&["run", "--ticks", "1"]);
    std::fs::write(home.file("state/messages.json"), "{\"version\": 1, \"mess").unwrap();
    std::fs::write(home.file("state/ticks.jsonl"), "not json\n").unwrap();
    std::fs::write(home.file("hearth.toml"), "[boot\n").unwrap();
    let out = home.output(&["audit", "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let audit: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(audit["rendered_full"], 1, "the template's values.md");
    assert!(String::from_utf8_lossy(&out.stderr).contains("hearth.toml:1:"));
}

/// While a supervisor runs, boot reads only the memories its watcher knows
/// to be core, never walking the rest: every kind of edit a user makes —
/// a directory of pinned notes moved in, a claim dropped by hand, a
/// must-read added, a directory moved out — shows in the next boot (here
/// `hearth audit`, the same boot a tick and an ask assemble).
#[test]
fn a_supervised_boot_follows_every_edit_without_walking_the_memory() {
    let home = TestHome::with_config("[tick]\ninterval_s = 3600\n");
    let supervisor = home.spawn(&["run"]);
    home.wait_for(
        std::time::Duration::from_secs(10),
        "the supervisor's view of memory/",
        || home.file(".hearth/memory-seq").exists(),
    );
    let audit_until = |what: &str, ok: &dyn Fn(&Value) -> bool| {
        let mut last = Value::Null;
        home.wait_for(std::time::Duration::from_secs(10), what, || {
            last = json(&home, &["audit", "--json"]);
            ok(&last)
        });
        last
    };
    let titles = |a: &Value| -> Vec<String> {
        a["layer"]["titles"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_str().unwrap().to_string())
            .collect()
    };

    // A directory written elsewhere in memory/ and moved into place.
    memory(
        &home,
        "memory/incoming/deep/pin.md",
        "core: true",
        "# Pin\n",
    );
    memory(&home, "memory/incoming/plain.md", "tags: [x]", "# Plain\n");
    std::fs::rename(home.file("memory/incoming"), home.file("memory/pinned")).unwrap();
    let a = audit_until("the moved-in core memory", &|a| {
        titles(a).contains(&"memory/pinned/deep/pin.md".to_string())
    });
    assert!(!titles(&a).iter().any(|t| t.contains("plain")), "{a}");

    // The claim dropped in place, a must-read added.
    memory(&home, "memory/pinned/deep/pin.md", "tags: [y]", "# Pin\n");
    memory(
        &home,
        "memory/pinned/read-me.md",
        "must_read: true",
        "# Read me\n",
    );
    audit_until("the dropped claim and the new must-read", &|a| {
        !titles(a).contains(&"memory/pinned/deep/pin.md".to_string())
            && a["required_reads"]
                .as_array()
                .unwrap()
                .contains(&Value::from("memory/pinned/read-me.md"))
    });

    // The whole directory moved out of memory/.
    memory(&home, "memory/pinned/deep/pin.md", "core: true", "# Pin\n");
    audit_until("the claim back", &|a| {
        titles(a).contains(&"memory/pinned/deep/pin.md".to_string())
    });
    let away = home
        .file("hearth.toml")
        .parent()
        .unwrap()
        .with_file_name("pinned-away");
    std::fs::rename(home.file("memory/pinned"), &away).unwrap();
    let a = audit_until("the moved-out directory gone", &|a| {
        titles(a).is_empty() && a["required_reads"].as_array().unwrap().is_empty()
    });
    assert_eq!(a["problems"], serde_json::json!([]), "{a}");
    crate::common::finish_after_term(supervisor);
}
