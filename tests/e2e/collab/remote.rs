//! Peers on other hosts: each home in a directory of its own standing for
//! its host, its history published by its own `[git] push` to a bare
//! repository that a real `git daemon` serves on 127.0.0.1, and its peer
//! reached only through that `git://` URL. The receiver fetches the
//! sender's branch into a mirror of its own and takes the handoff from
//! the fetched, committed tree: once, however often it is fetched.

#![allow(clippy::disallowed_methods)] // fixtures, not state

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use super::*;
use crate::common::git_daemon::GitDaemon;
use crate::common::model_server::ModelServer;

/// `name`'s home on its own host, publishing to `server/NAME.git` by its
/// `[git] push`, with `peer` reached at `url`.
fn on_a_host(root: &Path, name: &str, peer: (&str, &str), server: &Path, model: &str) -> TestHome {
    let host = root.join(format!("host-{name}"));
    std::fs::create_dir_all(&host).unwrap();
    let bare = server.join(format!("{name}.git"));
    crate::common::git_daemon::init_bare(&bare);
    let home = agent(&host, name, &[(peer.0, &PathBuf::from(peer.1))], &[], model);
    home.git(&["remote", "add", "origin", &bare.display().to_string()]);
    std::fs::write(
        home.file("hearth.toml"),
        format!(
            "{}\n[git]\npush = true\nremote = \"origin\"\n",
            home.read("hearth.toml")
        ),
    )
    .unwrap();
    home.git(&["commit", "-qam", "push"]);
    home
}

fn handoff_lines(home: &TestHome) -> usize {
    std::fs::read_to_string(home.file("state/handoffs.jsonl"))
        .unwrap_or_default()
        .lines()
        .count()
}

#[test]
fn a_handoff_crosses_hosts_through_a_git_url_and_is_taken_once() {
    let root = tempfile::tempdir().unwrap();
    let server = root.path().join("server");
    std::fs::create_dir_all(&server).unwrap();
    let daemon = GitDaemon::start(&server);
    let alice_model = ModelServer::start(vec![founds_design_x()]);
    let bob_model = ModelServer::start(vec![model_calling_on(
        "Handoff from alice",
        "send",
        || serde_json::json!({"body": "Alice's draft came."}),
    )]);
    let alice = on_a_host(
        root.path(),
        "alice",
        ("bob", &daemon.url("bob")),
        &server,
        &alice_model.url,
    );
    let bob = on_a_host(
        root.path(),
        "bob",
        ("alice", &daemon.url("alice")),
        &server,
        &bob_model.url,
    );

    // Alice hands off; her supervisor pushes the commit as it stops.
    alice.ok(&["say", "Start design x with bob."]);
    tick(&alice);
    let pushed = Command::new("git")
        .args(["--git-dir", &server.join("alice.git").display().to_string()])
        .args(["ls-tree", "--name-only", "main", "outbox/"])
        .output()
        .unwrap();
    let pushed = String::from_utf8_lossy(&pushed.stdout).into_owned();
    assert!(pushed.contains("-handoff-design-x-1-to-bob.md"), "{pushed}");
    let delivered = |home: &TestHome| {
        json(home, &["collab", "show", "design-x", "--json"])["rounds"][0]["delivered"].clone()
    };
    assert_eq!(delivered(&alice), false, "sent, not taken yet");
    assert!(alice
        .ok(&["collab", "show", "design-x"])
        .contains("waiting"));

    // Bob knows alice only by her URL: his fetch brings the handoff, and
    // the fetch wakes him to take it.
    let supervisor = supervising(&bob);
    bob.wait_for(Duration::from_secs(30), "bob's tick on the handoff", || {
        bob.ticks()
            .iter()
            .any(|t| t["inbox"].to_string().contains("handoff-alice-"))
    });
    assert!(
        crate::common::finish_after_term(supervisor).success(),
        "{}",
        bob.log()
    );
    assert_eq!(handoff_lines(&bob), 1);
    assert!(bob.path.join(".hearth/peers/alice.git").is_dir());
    let metrics = bob.ok(&["metrics"]);
    assert!(
        metrics.contains("hearth_peer_fetch_failing{peer=\"alice\"} 0"),
        "{metrics}"
    );
    let status = bob.ok(&["status"]);
    assert!(
        status.contains(&format!("peer alice ({}): fetched", daemon.url("alice"))),
        "{status}"
    );
    let listed = bob.ok(&["collab", "list"]);
    assert!(
        listed.contains(&format!("peer alice ({}): fetched ", daemon.url("alice")))
            && listed.contains(" ago), at "),
        "{listed}"
    );
    let round = json(&bob, &["collab", "show", "design-x", "--json"])["rounds"][0].clone();
    assert!(round["sent_in"].is_string(), "the sender's commit: {round}");

    // Bob's record of the round went out with his push; alice's next
    // fetch brings it, and her side says delivered.
    tick(&alice);
    assert_eq!(delivered(&alice), true, "{}", alice.log());
    assert!(alice
        .ok(&["collab", "show", "design-x"])
        .contains("delivered"));

    // Fetched again at every start and every round: taken once.
    tick(&bob);
    tick(&bob);
    assert_eq!(handoff_lines(&bob), 1, "{}", bob.log());
    let inboxed = bob
        .ticks()
        .iter()
        .filter(|t| t["inbox"].to_string().contains("handoff-alice-"))
        .count();
    assert_eq!(inboxed, 1);

    // Alice's history is rewritten on the server (a force-push: one new
    // root commit with the same files): bob names it, takes nothing twice
    // and merges nothing of it.
    let bare = server.join("alice.git").display().to_string();
    let git_at = |args: &[&str]| {
        let out = Command::new("git")
            .args(["--git-dir", &bare])
            .args(args)
            .env("GIT_AUTHOR_NAME", "someone")
            .env("GIT_AUTHOR_EMAIL", "someone@example.org")
            .env("GIT_COMMITTER_NAME", "someone")
            .env("GIT_COMMITTER_EMAIL", "someone@example.org")
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    };
    let root_commit = git_at(&["commit-tree", "main^{tree}", "-m", "history, rewritten"]);
    git_at(&["update-ref", "refs/heads/main", &root_commit]);
    let bob_head_before = bob.git(&["rev-parse", "HEAD"]).stdout;
    tick(&bob);
    let status = bob.ok(&["status"]);
    assert!(status.contains("its history was rewritten"), "{status}");
    assert!(status.contains(&root_commit[..12]), "{status}");
    assert_eq!(handoff_lines(&bob), 1, "{}", bob.log());
    let in_bob = bob.git(&["cat-file", "-e", &format!("{root_commit}^{{commit}}")]);
    assert!(
        !in_bob.status.success(),
        "the peer's commit is in its mirror, not in bob's repository"
    );
    assert_ne!(
        bob.git(&["rev-parse", "HEAD"]).stdout,
        bob_head_before,
        "bob ticked"
    );
}

#[test]
fn a_peer_url_hearth_cannot_fetch_is_refused_with_the_fix_and_a_hung_one_is_named() {
    let home = TestHome::with_config("[peers]\nalice = \"http://host/srv/git/alice.git\"\n");
    let out = home.output(&["status"]);
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        said.contains("ssh://, https://, git:// or file://"),
        "{said}"
    );

    // A git:// peer whose host accepts the connection and never answers:
    // each fetch is stopped after [peers] fetch_timeout_s, the supervisor
    // goes on ticking, and status says since when the fetch fails and why.
    let hung = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = hung.local_addr().unwrap().port();
    let root = tempfile::tempdir().unwrap();
    let model = ModelServer::start(vec![]);
    let bob = agent(
        root.path(),
        "bob",
        &[(
            "alice",
            &PathBuf::from(format!("git://127.0.0.1:{port}/alice.git")),
        )],
        &[],
        &model.url,
    );
    // One flare as soon as it fails ([peers] fetch_flare_min = 0), once.
    let config = bob.read("hearth.toml").replace(
        "[peers]\n",
        "[peers]\nfetch_flare_min = 0\nfetch_timeout_s = 1\n",
    );
    std::fs::write(bob.file("hearth.toml"), config).unwrap();
    bob.git(&["commit", "-qam", "flare at once"]);
    tick(&bob);
    tick(&bob);
    let flares: Vec<String> = bob
        .list("outbox")
        .into_iter()
        .filter(|n| n.contains("flare-peer"))
        .collect();
    assert_eq!(flares.len(), 1, "{flares:?}");
    let status = bob.ok(&["status"]);
    assert!(status.contains("peer alice (git://127.0.0.1:"), "{status}");
    assert!(status.contains("FETCH FAILING since"), "{status}");
    assert!(status.contains("no answer within 1 s"), "{status}");
    let metrics = bob.ok(&["metrics"]);
    assert!(
        metrics.contains("hearth_peer_fetch_failing{peer=\"alice\"} 1"),
        "{metrics}"
    );
    drop(hung);
}

#[test]
fn one_hung_peer_never_delays_another_peers_fetch() {
    // Aaron's host accepts and never answers (its fetch is stopped only
    // after a minute); aaron sorts before alice, so a round that fetched
    // the peers one after another would keep alice waiting that minute.
    let hung = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = hung.local_addr().unwrap().port();
    let root = tempfile::tempdir().unwrap();
    let server = root.path().join("server");
    std::fs::create_dir_all(&server).unwrap();
    let daemon = GitDaemon::start(&server);
    let alice_model = ModelServer::start(vec![founds_design_x()]);
    let bob_model = ModelServer::start(vec![crate::common::model_server::Answer::Stream {
        events: crate::common::model_server::anthropic::message("Noted.", &[], 10, 1),
        hang: None,
    }]);
    let alice = on_a_host(
        root.path(),
        "alice",
        ("bob", &daemon.url("bob")),
        &server,
        &alice_model.url,
    );
    let bob = on_a_host(
        root.path(),
        "bob",
        ("alice", &daemon.url("alice")),
        &server,
        &bob_model.url,
    );
    let config = bob.read("hearth.toml").replace(
        "[peers]\n",
        &format!("[peers]\naaron = \"git://127.0.0.1:{port}/aaron.git\"\nfetch_timeout_s = 60\n"),
    );
    std::fs::write(bob.file("hearth.toml"), config).unwrap();
    bob.git(&["commit", "-qam", "a hung peer"]);
    alice.ok(&["say", "Start design x with bob."]);
    tick(&alice);
    let supervisor = supervising(&bob);
    bob.wait_for(
        Duration::from_secs(20),
        "alice's handoff, while aaron's fetch hangs",
        || handoff_lines(&bob) == 1,
    );
    assert!(
        crate::common::finish_after_term(supervisor).success(),
        "{}",
        bob.log()
    );
    drop(hung);
}

/// A peer reached by a `file://` URL whose repository is hostile: its
/// config names an fsmonitor, an alternates command, an upload-pack hook,
/// an ssh command and a filter, and its hooks are planted. hearth fetches
/// it into its mirror, and not one of those programs runs.
#[test]
fn a_hostile_peers_repository_runs_none_of_its_programs_in_hearths_git() {
    let root = tempfile::tempdir().unwrap();
    let marks = tempfile::tempdir().unwrap();
    let model = ModelServer::start(vec![]);
    let alice = agent(root.path(), "alice", &[], &[], &model.url);
    let ran = |what: &str| format!("touch {}/{what}", marks.path().display());
    for (key, value) in [
        ("core.fsmonitor", ran("fsmonitor")),
        ("core.alternateRefsCommand", ran("alternate-refs")),
        (
            "uploadpack.packObjectsHook",
            format!("{}; exec", ran("pack-objects-hook")),
        ),
        ("core.sshCommand", ran("ssh")),
        ("filter.evil.smudge", ran("smudge")),
        ("filter.evil.clean", ran("clean")),
        ("diff.evil.textconv", ran("textconv")),
    ] {
        alice.git(&["config", key, &value]);
    }
    for hook in [
        "pre-upload-pack",
        "post-update",
        "reference-transaction",
        "post-checkout",
    ] {
        let path = alice.file(&format!(".git/hooks/{hook}"));
        std::fs::write(&path, format!("#!/bin/sh\n{}\n", ran(hook))).unwrap();
        std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
    }
    std::fs::write(alice.file(".gitattributes"), "* filter=evil diff=evil\n").unwrap();
    let alice_url = PathBuf::from(format!("file://{}", alice.path.display()));
    let bob = agent(
        root.path(),
        "bob",
        &[("alice", &alice_url)],
        &[],
        &model.url,
    );
    let planted: Vec<String> = std::fs::read_dir(marks.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    // Setting it up with git's own CLI in alice's home ran her programs:
    // what counts is what ran after.
    for mark in &planted {
        std::fs::remove_file(marks.path().join(mark)).unwrap();
    }
    tick(&bob);
    tick(&bob);
    assert!(
        bob.path.join(".hearth/peers/alice.git").is_dir(),
        "alice was fetched into bob's mirror"
    );
    let ran_after: Vec<String> = std::fs::read_dir(marks.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        ran_after.is_empty(),
        "the peer's programs ran: {ran_after:?}"
    );
}
