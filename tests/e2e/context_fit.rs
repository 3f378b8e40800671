//! A request that does not fit the model's context window is found before
//! the model is called: the history gives way first (archived, a recovery
//! on the ledger); a part too large on its own is a context-insufficiency
//! (exit 11) that names it, flares once, consumes nothing, and `hearth
//! audit` says so.

use crate::common::TestHome;

#[test]
fn a_prompt_too_large_for_the_window_is_class_11_named_flared_once_and_audited() {
    let home = TestHome::with_config("");
    let huge = "All work and no play makes the agent a dull agent. ".repeat(25_000);
    std::fs::write(home.file("memory/prompt.md"), &huge).unwrap();
    home.ok(&["say", "are you there?"]);

    let out = home.output(&["tick"]);
    assert_eq!(
        out.status.code(),
        Some(11),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    home.output(&["tick"]);
    let tick = &home.ticks()[0];
    assert_eq!(tick["class"], "context-insufficiency", "{tick}");
    let note = tick["note"].as_str().unwrap();
    assert!(note.contains("prompt alone"), "{note}");
    assert!(note.contains("memory/prompt.md"), "the fix: {note}");
    assert_eq!(
        tick["tokens"]["in"], 0,
        "no model call was paid for: {tick}"
    );
    assert_eq!(home.list("inbox").len(), 1, "nothing consumed");
    let flares: Vec<String> = home
        .list("outbox")
        .into_iter()
        .filter(|n| n.contains("-flare-context"))
        .collect();
    assert_eq!(flares.len(), 1, "once until read: {flares:?}");

    let audit = home.output(&["audit"]);
    assert_eq!(audit.status.code(), Some(1));
    let text = String::from_utf8_lossy(&audit.stdout);
    assert!(text.contains("DOES NOT FIT"), "{text}");

    std::fs::write(home.file("memory/prompt.md"), "# Prompt\n\nBe brief.\n").unwrap();
    assert_eq!(home.output(&["tick"]).status.code(), Some(0));
    assert!(home.list("inbox").is_empty(), "answered once it fits");
    assert!(
        String::from_utf8_lossy(&home.output(&["audit"]).stdout).contains("context:        fits")
    );
}
