//! Two hosts that reach each other only over ssh: a real `sshd` on
//! 127.0.0.1 (openssh-server; a host key and a client key the test makes,
//! the client's known_hosts written as `ssh-keyscan` would), each home in
//! a directory of its own standing for its host, each publishing by its
//! own `[git] push` to an `ssh://` URL, each naming its peer by one. They
//! found a collaboration, hand off both ways, and each side's `hearth
//! collab show` says what was delivered.

#![allow(clippy::disallowed_methods)] // fixtures, not state

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use super::*;
use crate::common::model_server::ModelServer;

/// An `sshd` on a free port of 127.0.0.1 that lets this user in with a key
/// made for the test, and the ssh client configuration that reaches it
/// (`Host hearth-test-server`), as a user's `~/.ssh/config` would.
struct SshServer {
    child: Child,
    client_config: PathBuf,
}

const HOST_ALIAS: &str = "hearth-test-server";

impl SshServer {
    fn start(dir: &Path) -> SshServer {
        let sshd = ["/usr/sbin/sshd", "/usr/local/sbin/sshd"]
            .into_iter()
            .map(PathBuf::from)
            .find(|p| p.is_file())
            .expect(
                "this test runs a real sshd: install openssh-server (`apt-get install \
                 openssh-server`; .ci/run does)",
            );
        for key in ["host_key", "client_key"] {
            let made = Command::new("ssh-keygen")
                .args(["-q", "-t", "ed25519", "-N", ""])
                .arg("-f")
                .arg(dir.join(key))
                .status()
                .expect("ssh-keygen (openssh-client) must be installed");
            assert!(made.success());
        }
        std::fs::copy(dir.join("client_key.pub"), dir.join("authorized_keys")).unwrap();
        let user = String::from_utf8(Command::new("id").arg("-un").output().unwrap().stdout)
            .unwrap()
            .trim()
            .to_string();
        if user == "root" {
            // sshd's privilege separation directory, missing in containers.
            std::fs::create_dir_all("/run/sshd").unwrap();
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let d = dir.display();
        // The session's PATH is this one, so `git-upload-pack` is found
        // wherever this machine's git lives.
        let path = std::env::var("PATH").unwrap_or_default();
        let server_config = dir.join("sshd_config");
        std::fs::write(
            &server_config,
            format!(
                "Port {port}\nListenAddress 127.0.0.1\nHostKey {d}/host_key\n\
                 AuthorizedKeysFile {d}/authorized_keys\nPasswordAuthentication no\n\
                 KbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\n\
                 PidFile {d}/sshd.pid\nSetEnv PATH={path}\n"
            ),
        )
        .unwrap();
        let log = std::fs::File::create(dir.join("sshd.log")).unwrap();
        let child = Command::new(&sshd)
            .args(["-D", "-e", "-f"])
            .arg(&server_config)
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap();
        let up = std::time::Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                up.elapsed() < Duration::from_secs(10),
                "sshd did not listen: {}",
                std::fs::read_to_string(dir.join("sshd.log")).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        // What `ssh-keyscan -p PORT 127.0.0.1 >> ~/.ssh/known_hosts` writes.
        let host_key = std::fs::read_to_string(dir.join("host_key.pub")).unwrap();
        let mut fields = host_key.split_whitespace();
        let (kind, key) = (fields.next().unwrap(), fields.next().unwrap());
        std::fs::write(
            dir.join("known_hosts"),
            format!("[127.0.0.1]:{port} {kind} {key}\n"),
        )
        .unwrap();
        let client_config = dir.join("ssh_config");
        std::fs::write(
            &client_config,
            format!(
                "Host {HOST_ALIAS}\n  HostName 127.0.0.1\n  Port {port}\n  User {user}\n  \
                 IdentityFile {d}/client_key\n  IdentitiesOnly yes\n  \
                 UserKnownHostsFile {d}/known_hosts\n  StrictHostKeyChecking yes\n  \
                 BatchMode yes\n"
            ),
        )
        .unwrap();
        SshServer {
            child,
            client_config,
        }
    }

    /// The `ssh://` URL of the repository at `path` on the server.
    fn url(&self, path: &Path) -> String {
        format!("ssh://{HOST_ALIAS}{}", path.display())
    }

    /// The environment hearth's git reaches the server with.
    fn ssh_command(&self) -> String {
        format!("ssh -F {}", self.client_config.display())
    }
}

impl Drop for SshServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `name`'s home on a host of its own, pushing to `NAME.git` on the ssh
/// server and reaching `peer` there, fetched every second.
fn on_a_host(root: &Path, name: &str, peer: &str, ssh: &SshServer, model: &str) -> TestHome {
    let server = root.join("server");
    let host = root.join(format!("host-{name}"));
    std::fs::create_dir_all(&host).unwrap();
    let init = Command::new("git")
        .args(["init", "-q", "--bare", "-b", "main"])
        .arg(server.join(format!("{name}.git")))
        .status()
        .unwrap();
    assert!(init.success());
    let peer_url = PathBuf::from(ssh.url(&server.join(format!("{peer}.git"))));
    let home = agent(&host, name, &[(peer, &peer_url)], &[], model);
    home.git(&[
        "remote",
        "add",
        "origin",
        &ssh.url(&server.join(format!("{name}.git"))),
    ]);
    let config = home
        .read("hearth.toml")
        .replace("[peers]\n", "[peers]\nfetch_every_s = 1\n");
    std::fs::write(
        home.file("hearth.toml"),
        format!("{config}\n[git]\npush = true\nremote = \"origin\"\n[tick]\ninterval_s = 3600\n"),
    )
    .unwrap();
    home.git(&["commit", "-qam", "push over ssh"]);
    home
}

fn supervise(home: &TestHome, ssh: &SshServer) -> Child {
    let mut cmd = home.keyed(&["run"], KEY);
    cmd.env("GIT_SSH_COMMAND", ssh.ssh_command());
    home.spawn_with(cmd)
}

fn round_delivered(home: &TestHome, round: usize) -> bool {
    let shown = json(home, &["collab", "show", "design-x", "--json"]);
    shown["rounds"][round]["delivered"] == true
}

#[test]
fn two_hosts_over_ssh_found_a_collaboration_hand_off_both_ways_and_each_sees_it_delivered() {
    let root = tempfile::tempdir().unwrap();
    let keys = root.path().join("ssh");
    std::fs::create_dir_all(&keys).unwrap();
    std::fs::create_dir_all(root.path().join("server")).unwrap();
    let ssh = SshServer::start(&keys);
    let alice_model = ModelServer::start(vec![founds_design_x()]);
    let bob_model = ModelServer::start(vec![model_calling_on(
        "Handoff from alice",
        "handoff",
        || {
            serde_json::json!({
                "to": "alice",
                "message": "Round two: one keeper is enough.",
                "collaboration": "Design X",
            })
        },
    )]);
    let alice = on_a_host(root.path(), "alice", "bob", &ssh, &alice_model.url);
    let bob = on_a_host(root.path(), "bob", "alice", &ssh, &bob_model.url);

    let bob_run = supervise(&bob, &ssh);
    alice.ok(&["say", "Start design x with bob."]);
    let alice_run = supervise(&alice, &ssh);

    // Round 1 goes to bob over ssh: alice's push, bob's fetch.
    bob.wait_for(Duration::from_secs(60), "bob to hand round 2 back", || {
        bob.list("outbox")
            .iter()
            .any(|n| n.ends_with("-handoff-design-x-2-to-alice.md"))
    });
    // Round 2 comes back the same way, and alice ticks on it.
    alice.wait_for(Duration::from_secs(60), "alice's tick on round 2", || {
        alice
            .ticks()
            .iter()
            .any(|t| t["inbox"].to_string().contains("handoff-bob-"))
    });
    // Each side reads the other's published record of what it took.
    alice.wait_for(Duration::from_secs(60), "round 1 delivered", || {
        round_delivered(&alice, 0)
    });
    bob.wait_for(Duration::from_secs(60), "round 2 delivered", || {
        round_delivered(&bob, 1)
    });
    for (home, run) in [(&alice, alice_run), (&bob, bob_run)] {
        assert!(
            crate::common::finish_after_term(run).success(),
            "{}",
            home.log()
        );
    }
    let shown = alice.ok(&["collab", "show", "design-x"]);
    assert!(shown.contains("delivered"), "{shown}");

    // Taken once each, however often fetched.
    for home in [&alice, &bob] {
        let lines = std::fs::read_to_string(home.file("state/handoffs.jsonl")).unwrap();
        assert_eq!(lines.lines().count(), 1, "{lines}");
        let status = home.ok(&["status"]);
        assert!(status.contains(": fetched "), "{status}");
        assert!(
            !status.contains("FAILING"),
            "neither fetch nor push: {status}"
        );
    }
    // Over ssh, with the key the client was given.
    let sshd_log = std::fs::read_to_string(keys.join("sshd.log")).unwrap();
    assert!(sshd_log.contains("Accepted publickey"), "{sshd_log}");
    // The pushes went over ssh: both branches are on the server.
    for name in ["alice", "bob"] {
        let head = Command::new("git")
            .arg("--git-dir")
            .arg(root.path().join("server").join(format!("{name}.git")))
            .args(["rev-parse", "--verify", "-q", "main"])
            .output()
            .unwrap();
        assert!(
            head.status.success(),
            "{name}'s push never reached the server"
        );
    }
}
