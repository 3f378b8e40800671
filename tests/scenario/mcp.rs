//! The MCP server's tools, called without a transport on a real home.

use serde_json::json;

use hearth::clock::Clock;
use hearth::home::Home;
use hearth::mcp::Doors;

fn doors(allow_say: bool, allow_ask: bool) -> (tempfile::TempDir, Doors) {
    let dir = tempfile::tempdir().unwrap();
    let now = chrono::DateTime::from_timestamp(1_790_000_000, 0).unwrap();
    hearth::home::init(dir.path(), now).unwrap();
    std::fs::write(
        dir.path().join("memory/notes.md"),
        "# Lighthouse\n\nThe keeper of the Skerry light is Ingrid Vale.\n",
    )
    .unwrap();
    let home = Home::open(dir.path()).unwrap();
    let doors = Doors {
        home,
        allow_say,
        allow_ask,
        client_is_operator: false,
        api_key: None,
        environment: Default::default(),
        clock: Clock::Pinned(now),
    };
    (dir, doors)
}

#[test]
fn read_only_by_default_and_the_doors_open_only_when_asked() {
    let (_dir, closed) = doors(false, false);
    let names: Vec<_> = closed.tools().iter().map(|t| t.name).collect();
    assert_eq!(names, ["recall", "read", "status"]);
    assert!(closed.tools().iter().all(|t| t.read_only));
    let refused = closed.call("say", &json!({"text": "hi"})).unwrap_err();
    assert!(refused.text().contains("--allow-say"), "{refused:?}");
    assert!(!closed
        .home
        .root()
        .join("inbox")
        .read_dir()
        .unwrap()
        .any(|e| e.unwrap().path().extension().is_some_and(|x| x == "md")));

    let (_dir, open) = doors(true, true);
    let names: Vec<_> = open.tools().iter().map(|t| t.name).collect();
    assert_eq!(names, ["recall", "read", "status", "say", "ask"]);
}

#[test]
fn every_schema_is_an_object_schema_that_names_its_required_fields() {
    let (_dir, open) = doors(true, true);
    for tool in open.tools() {
        assert_eq!(tool.schema["type"], "object", "{}", tool.name);
        for required in tool.schema["required"].as_array().into_iter().flatten() {
            let field = required.as_str().unwrap();
            assert!(
                tool.schema["properties"].get(field).is_some(),
                "{}: {field}",
                tool.name
            );
        }
        assert!(tool.description.len() > 80, "{} says too little", tool.name);
    }
}

#[test]
fn recall_cites_the_block_and_who_wrote_it() {
    let (_dir, doors) = doors(false, false);
    let reply = doors
        .call(
            "recall",
            &json!({"query": "who keeps the Skerry light?", "k": 3}),
        )
        .unwrap();
    assert!(reply.text.contains("memory/notes.md:"), "{}", reply.text);
    assert!(reply.text.contains("Ingrid Vale"), "{}", reply.text);
    let results = &reply.structured.unwrap()["results"];
    assert_eq!(results[0]["path"], "memory/notes.md");
    assert!(!results[0]["by"].as_str().unwrap().is_empty());
}

#[test]
fn bad_arguments_and_forbidden_paths_are_refusals_with_a_hint() {
    let (_dir, doors) = doors(false, false);
    let bad = doors.call("recall", &json!({"q": "x"})).unwrap_err();
    assert!(bad.message.contains("invalid arguments"), "{bad:?}");
    assert!(bad.hint.is_some());
    let empty = doors.call("recall", &json!({"query": "  "})).unwrap_err();
    assert!(empty.message.contains("empty"), "{empty:?}");
    for path in [
        "hearth.toml",
        ".git/config",
        "../../etc/passwd",
        "tools/x.toml",
    ] {
        let refused = doors.call("read", &json!({"path": path})).unwrap_err();
        assert!(refused.hint.is_some(), "{path}: {refused:?}");
    }
    let unknown = doors.call("write", &json!({})).unwrap_err();
    assert!(
        unknown.text().contains("recall, read, status"),
        "{unknown:?}"
    );
}

#[test]
fn read_pages_a_memory_file_as_the_agents_read_does() {
    let (_dir, doors) = doors(false, false);
    let reply = doors
        .call("read", &json!({"path": "memory/notes.md"}))
        .unwrap();
    assert!(reply.text.contains("Ingrid Vale"), "{}", reply.text);
    let listing = doors.call("read", &json!({"path": "memory"})).unwrap();
    assert!(listing.text.contains("notes.md"), "{}", listing.text);
}

#[test]
fn say_is_the_operators_commit_of_the_clients_words_and_ask_without_a_key_says_which_variable() {
    let (_dir, doors) = doors(true, true);
    let reply = doors
        .call("say", &json!({"text": "Please water the plants."}))
        .unwrap();
    let rel = reply.structured.as_ref().unwrap()["message"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(rel.starts_with("inbox/"), "{rel}");
    let repo = git2::Repository::open(doors.home.root()).unwrap();
    let head = repo.head().unwrap().peel_to_commit().unwrap();
    assert_eq!(head.summary(), Some(format!("say: {rel}").as_str()));
    // The client's words are outside by default (a coding agent relays
    // pages it read): the message names it as its sender.
    let said = std::fs::read_to_string(doors.home.path(&rel)).unwrap();
    let sender = hearth::provenance::inbox_sender(&said).unwrap_or_default();
    assert!(sender.contains("an MCP client"), "{said}");
    let vouched = hearth::provenance::vouch::Vouched::default();
    assert!(hearth::provenance::origins::of_file(&doors.home, &rel, None, &vouched).is_some());
    // Started with --client-is-operator, they are the operator's.
    let mine = Doors {
        client_is_operator: true,
        ..doors.clone()
    };
    let reply = mine
        .call("say", &json!({"text": "Water the ferns too."}))
        .unwrap();
    let rel = reply.structured.as_ref().unwrap()["message"]
        .as_str()
        .unwrap();
    let said = std::fs::read_to_string(doors.home.path(rel)).unwrap();
    assert_eq!(hearth::provenance::inbox_sender(&said), None, "{said}");

    // The default model is the offline one, which needs no key: point the
    // home at a provider that does.
    std::fs::write(
        doors.home.config_path(),
        "[model]\nprovider = \"anthropic\"\nmodel = \"claude-opus-5\"\n",
    )
    .unwrap();
    let refused = doors
        .call("ask", &json!({"question": "how are you?"}))
        .unwrap_err();
    assert!(refused.message.contains("ANTHROPIC_API_KEY"), "{refused:?}");
}
