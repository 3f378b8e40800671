//! `hearth collab`: collaborations as records the operator can list,
//! inspect and move through their lifecycle, each change a commit.

use crate::common::TestHome;

mod founding;
mod handoffs;
mod hostile;
mod operator;
mod over_https;
mod over_ssh;
mod peers;
mod remote;
mod rounds;
mod secrets;

pub(super) fn home_with_peers(workdir: &std::path::Path) -> TestHome {
    TestHome::with_config(&format!(
        "[peers]\nbob = \"/var/lib/hearth/bob\"\n\
         [collaborations]\nworkdirs = [\"{}\"]\nmax_rounds = 12\n",
        workdir.display()
    ))
}

pub(super) fn json(home: &TestHome, args: &[&str]) -> serde_json::Value {
    serde_json::from_str(&home.ok(args)).unwrap()
}

/// The citations `hearth recall --no-rerank` gives for `query`.
pub(super) fn cited(home: &TestHome, query: &str) -> Vec<String> {
    let out: serde_json::Value =
        serde_json::from_str(&home.ok(&["recall", "--no-rerank", "--json", "-k", "5", query]))
            .unwrap();
    out["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["citation"].as_str().unwrap().to_string())
        .collect()
}

pub(super) const KEY: &str = "sk-ant-collab-DO-NOT-LEAK";

/// A home named `name` (its directory's name is the agent's name among
/// peers) with `[peers]` and `[collaborations]`, talking to `server`.
pub(super) fn agent(
    root: &std::path::Path,
    name: &str,
    peers: &[(&str, &std::path::Path)],
    workdirs: &[&std::path::Path],
    server: &str,
) -> TestHome {
    let home = TestHome::at(&root.join(name));
    home.ok(&["init"]);
    let mut config = format!(
        "[model]\nprovider = \"anthropic\"\nmodel = \"claude-sonnet-4-5-20250929\"\n\
         base_url = \"{server}\"\nmax_retries = 0\n[peers]\n"
    );
    for (peer, path) in peers {
        config.push_str(&format!("{peer} = \"{}\"\n", path.display()));
    }
    let dirs: Vec<String> = workdirs
        .iter()
        .map(|w| format!("\"{}\"", w.display()))
        .collect();
    config.push_str(&format!(
        // Founding by a peer is open here: these tests are about what a
        // collaboration does; `founding.rs` is about who says it may start.
        "[collaborations]\nworkdirs = [{}]\nmax_rounds = 3\nfounding = \"open\"\n",
        dirs.join(", ")
    ));
    std::fs::write(home.file("hearth.toml"), config).unwrap();
    home.git(&["commit", "-qam", "peers"]);
    home
}

/// alice and bob under `root`, each the other's only peer, with no
/// workdirs, talking to the model servers at these URLs.
pub(super) fn pair(
    root: &std::path::Path,
    alice_model: &str,
    bob_model: &str,
) -> (TestHome, TestHome) {
    let (alice, bob) = (root.join("alice"), root.join("bob"));
    (
        agent(root, "alice", &[("bob", &bob)], &[], alice_model),
        agent(root, "bob", &[("alice", &alice)], &[], bob_model),
    )
}

/// One model turn calling `handoff` with `input`, then a plain answer.
pub(super) fn hands_off(input: serde_json::Value) -> Vec<crate::common::model_server::Answer> {
    use crate::common::model_server::{anthropic, Answer};
    let args = input.to_string();
    vec![
        Answer::Stream {
            events: anthropic::message("", &[("t1", "handoff", &[args.as_str()])], 10, 1),
            hang: None,
        },
        Answer::Stream {
            events: anthropic::message("Handed off.", &[], 10, 1),
            hang: None,
        },
    ]
}

pub(super) fn tick(home: &TestHome) {
    home.run_here(1, Some(KEY));
}

/// Alice's model, founding "Design X" by handing it to bob.
pub(super) fn founds_design_x() -> crate::common::model_server::Answer {
    model_calling_on(
        "Start design x",
        "handoff",
        || serde_json::json!({"to": "bob", "message": "Draft one.", "name": "Design X"}),
    )
}

/// `home`'s supervisor, ticking hourly, once it has made its first tick:
/// what it does sooner than an hour later, something woke it for.
pub(super) fn supervising(home: &TestHome) -> std::process::Child {
    hourly(home);
    let cmd = home.keyed(&["run"], KEY);
    let supervisor = home.spawn_with(cmd);
    home.wait_for(
        std::time::Duration::from_secs(20),
        "the supervisor's first tick",
        || !home.ticks().is_empty(),
    );
    supervisor
}

/// Ticks an hour apart: what happens sooner was woken by something.
pub(super) fn hourly(home: &TestHome) {
    std::fs::write(
        home.file("hearth.toml"),
        format!("{}\n[tick]\ninterval_s = 3600\n", home.read("hearth.toml")),
    )
    .unwrap();
}

/// The user turns (as text) of every request `server` received.
pub(super) fn asked(server: &crate::common::model_server::ModelServer) -> Vec<String> {
    server
        .received()
        .iter()
        .filter_map(|r| {
            r.body["messages"]
                .as_array()
                .and_then(|m| m.last())
                .map(|m| m.to_string())
        })
        .collect()
}

/// A model that, on a tick whose last user turn says `trigger`, calls
/// `tool` with `input` (once), and otherwise just answers.
pub(super) fn model_calling_on(
    trigger: &'static str,
    tool: &'static str,
    input: impl Fn() -> serde_json::Value + Send + Sync + 'static,
) -> crate::common::model_server::Answer {
    use crate::common::model_server::{anthropic, Answer};
    Answer::Computed(std::sync::Arc::new(move |body: &serde_json::Value| {
        let last = body["messages"]
            .as_array()
            .and_then(|m| m.last())
            .map(|m| m.to_string())
            .unwrap_or_default();
        let events = if last.contains(trigger) && !last.contains("tool_result") {
            let args = input().to_string();
            anthropic::message("", &[("t1", tool, &[args.as_str()])], 10, 1)
        } else {
            anthropic::message("Noted.", &[], 10, 1)
        };
        Answer::Stream { events, hang: None }
    }))
}
