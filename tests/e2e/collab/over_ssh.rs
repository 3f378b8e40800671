//! Two hosts that reach each other only over ssh: a real `sshd` on
//! 127.0.0.1 (openssh-server; a host key and client keys the test makes,
//! the client's known_hosts written as `ssh-keyscan` would; one host's
//! key in a file its ssh config names, the other's only in a running
//! `ssh-agent`, as a user's would be), each home in
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
    agent: Child,
    /// The agent's socket (`SSH_AUTH_SOCK`).
    agent_socket: PathBuf,
    dir: PathBuf,
}

/// How a host's ssh finds its key.
#[derive(Clone, Copy)]
enum KeyIn {
    /// A file its ssh config names.
    File,
    /// Only the ssh agent (the file is gone).
    Agent,
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
        for key in ["host_key", "key_file", "key_agent"] {
            let made = Command::new("ssh-keygen")
                .args(["-q", "-t", "ed25519", "-N", ""])
                .arg("-f")
                .arg(dir.join(key))
                .status()
                .expect("ssh-keygen (openssh-client) must be installed");
            assert!(made.success());
        }
        let authorized = ["key_file.pub", "key_agent.pub"]
            .map(|k| std::fs::read_to_string(dir.join(k)).unwrap())
            .concat();
        std::fs::write(dir.join("authorized_keys"), authorized).unwrap();
        let user = String::from_utf8(Command::new("id").arg("-un").output().unwrap().stdout)
            .unwrap()
            .trim()
            .to_string();
        if user == "root" {
            // sshd's privilege separation directory, missing in containers.
            std::fs::create_dir_all("/run/sshd").unwrap();
        }
        let port = crate::common::ports::free_port();
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
        crate::common::ports::wait_until(port, true, "sshd", || {
            std::fs::read_to_string(dir.join("sshd.log")).unwrap_or_default()
        });
        // What `ssh-keyscan -p PORT 127.0.0.1 >> ~/.ssh/known_hosts` writes.
        let host_key = std::fs::read_to_string(dir.join("host_key.pub")).unwrap();
        let mut fields = host_key.split_whitespace();
        let (kind, key) = (fields.next().unwrap(), fields.next().unwrap());
        std::fs::write(
            dir.join("known_hosts"),
            format!("[127.0.0.1]:{port} {kind} {key}\n"),
        )
        .unwrap();
        for (config, key) in [("ssh_config_file", true), ("ssh_config_agent", false)] {
            let identity = if key {
                format!("  IdentityFile {d}/key_file\n  IdentitiesOnly yes\n")
            } else {
                String::new()
            };
            std::fs::write(
                dir.join(config),
                format!(
                    "Host {HOST_ALIAS}\n  HostName 127.0.0.1\n  Port {port}\n  User {user}\n\
                     {identity}  UserKnownHostsFile {d}/known_hosts\n  \
                     StrictHostKeyChecking yes\n  BatchMode yes\n"
                ),
            )
            .unwrap();
        }
        // The other key lives only in an agent.
        let agent_socket = dir.join("agent.sock");
        let agent = Command::new("ssh-agent")
            .args(["-D", "-a"])
            .arg(&agent_socket)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("ssh-agent (openssh-client) must be installed");
        let up = std::time::Instant::now();
        while !agent_socket.exists() {
            assert!(
                up.elapsed() < Duration::from_secs(10),
                "ssh-agent did not start"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        let added = Command::new("ssh-add")
            .arg(dir.join("key_agent"))
            .env("SSH_AUTH_SOCK", &agent_socket)
            .output()
            .unwrap();
        assert!(added.status.success(), "{added:?}");
        std::fs::remove_file(dir.join("key_agent")).unwrap();
        SshServer {
            child,
            agent,
            agent_socket,
            dir: dir.to_path_buf(),
        }
    }

    /// The `ssh://` URL of the repository at `path` on the server.
    fn url(&self, path: &Path) -> String {
        format!("ssh://{HOST_ALIAS}{}", path.display())
    }

    /// The environment hearth runs in on a host whose key is `key`, as
    /// its unit would give it: an ssh command naming the host's ssh config
    /// (`GIT_SSH_COMMAND`), and for the agent, its socket.
    fn environment(&self, key: KeyIn) -> Vec<(&'static str, String)> {
        let config = match key {
            KeyIn::File => "ssh_config_file",
            KeyIn::Agent => "ssh_config_agent",
        };
        let mut vars = vec![(
            "GIT_SSH_COMMAND",
            format!("ssh -F {}", self.dir.join(config).display()),
        )];
        if let KeyIn::Agent = key {
            vars.push(("SSH_AUTH_SOCK", self.agent_socket.display().to_string()));
        }
        vars
    }
}

impl Drop for SshServer {
    fn drop(&mut self) {
        for child in [&mut self.child, &mut self.agent] {
            let _ = child.kill();
            let _ = child.wait();
        }
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

fn supervise(home: &TestHome, ssh: &SshServer, key: KeyIn) -> Child {
    let mut cmd = home.keyed(&["run"], KEY);
    cmd.envs(ssh.environment(key));
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

    let bob_run = supervise(&bob, &ssh, KeyIn::Agent);
    alice.ok(&["say", "Start design x with bob."]);
    let alice_run = supervise(&alice, &ssh, KeyIn::File);

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
    // Over ssh, each host with its own key: one from a file, one from
    // the agent alone.
    let sshd_log = std::fs::read_to_string(keys.join("sshd.log")).unwrap();
    for key in ["key_file.pub", "key_agent.pub"] {
        let print = Command::new("ssh-keygen")
            .arg("-lf")
            .arg(keys.join(key))
            .output()
            .unwrap();
        let print = String::from_utf8_lossy(&print.stdout);
        let sha = print.split_whitespace().nth(1).unwrap();
        assert!(
            sshd_log
                .lines()
                .any(|l| l.contains("Accepted publickey") && l.contains(sha)),
            "{key} ({sha}) never logged in: {sshd_log}"
        );
    }
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
