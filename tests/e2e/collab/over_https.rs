//! A peer reached over https with a user name and password: git's own
//! `git http-backend` behind a real web server (lighttpd from apt, TLS
//! with a certificate the test makes, basic authentication). The sender
//! pushes there and the receiver fetches from there, each with
//! `HEARTH_GIT_USERNAME` / `HEARTH_GIT_PASSWORD` from its environment and
//! nothing in a file; a wrong password is named with the fix, and the
//! password is nowhere hearth writes.

#![allow(clippy::disallowed_methods)] // fixtures, not state

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use super::*;
use crate::common::model_server::ModelServer;

const USER: &str = "hearth-bot";
const PASSWORD: &str = "correct horse 7 battery";

/// lighttpd on a free port of 127.0.0.1 serving every repository under
/// `dir/server` at `https://127.0.0.1:PORT/git/NAME.git` to `USER`.
struct HttpsGit {
    child: Child,
    port: u16,
    dir: PathBuf,
}

impl HttpsGit {
    fn start(dir: &Path) -> HttpsGit {
        let lighttpd = Path::new("/usr/sbin/lighttpd");
        assert!(
            lighttpd.is_file(),
            "this test runs a real web server: install lighttpd and lighttpd-mod-openssl \
             (`apt-get install lighttpd lighttpd-mod-openssl`; .ci/run does)"
        );
        let d = dir.display();
        crate::common::tls::self_signed(dir, "127.0.0.1", "IP:127.0.0.1");
        let pem = ["cert.pem", "key.pem"]
            .map(|f| std::fs::read_to_string(dir.join(f)).unwrap())
            .concat();
        std::fs::write(dir.join("server.pem"), pem).unwrap();
        std::fs::write(dir.join("users"), format!("{USER}:{PASSWORD}\n")).unwrap();
        let exec_path = Command::new("git").arg("--exec-path").output().unwrap();
        let backend = format!(
            "{}/git-http-backend",
            String::from_utf8_lossy(&exec_path.stdout).trim()
        );
        let port = crate::common::ports::free_port();
        let path = std::env::var("PATH").unwrap_or_default();
        let config = dir.join("lighttpd.conf");
        std::fs::write(
            &config,
            format!(
                "server.modules = (\"mod_auth\", \"mod_authn_file\", \"mod_alias\", \
                 \"mod_setenv\", \"mod_cgi\", \"mod_openssl\")\n\
                 server.port = {port}\nserver.bind = \"127.0.0.1\"\n\
                 server.document-root = \"{d}\"\nserver.errorlog = \"{d}/error.log\"\n\
                 ssl.engine = \"enable\"\nssl.pemfile = \"{d}/server.pem\"\n\
                 alias.url = (\"/git/\" => \"{backend}/\")\n\
                 $HTTP[\"url\"] =~ \"^/git/\" {{\n  cgi.assign = (\"\" => \"\")\n  \
                 setenv.add-environment = (\"GIT_PROJECT_ROOT\" => \"{d}/server\", \
                 \"GIT_HTTP_EXPORT_ALL\" => \"\", \"PATH\" => \"{path}\")\n}}\n\
                 auth.backend = \"plain\"\nauth.backend.plain.userfile = \"{d}/users\"\n\
                 auth.require = (\"/git/\" => (\"method\" => \"basic\", \"realm\" => \"git\", \
                 \"require\" => \"valid-user\"))\n"
            ),
        )
        .unwrap();
        let child = Command::new(lighttpd)
            .args(["-D", "-f"])
            .arg(&config)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        crate::common::ports::wait_until(port, true, "lighttpd", || {
            std::fs::read_to_string(dir.join("error.log")).unwrap_or_default()
        });
        std::fs::create_dir_all(dir.join("server")).unwrap();
        HttpsGit {
            child,
            port,
            dir: dir.to_path_buf(),
        }
    }

    fn url(&self, name: &str) -> String {
        format!("https://127.0.0.1:{}/git/{name}.git", self.port)
    }

    /// A bare repository for `name` on the server.
    fn repository(&self, name: &str) {
        let init = Command::new("git")
            .args(["init", "-q", "--bare", "-b", "main"])
            .arg(self.dir.join("server").join(format!("{name}.git")))
            .status()
            .unwrap();
        assert!(init.success());
    }

    /// hearth's environment on a host that trusts this server's
    /// certificate and has `password` for it.
    fn environment(&self, password: &str) -> [(&'static str, String); 3] {
        [
            (
                "GIT_SSL_CAINFO",
                self.dir.join("cert.pem").display().to_string(),
            ),
            ("HEARTH_GIT_USERNAME", USER.to_string()),
            ("HEARTH_GIT_PASSWORD", password.to_string()),
        ]
    }
}

impl Drop for HttpsGit {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Every file under `dir` that holds `needle` (bytes), git's objects
/// included.
fn files_holding(dir: &Path, needle: &str) -> Vec<String> {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .filter(|e| {
            std::fs::read(e.path())
                .map(|b| b.windows(needle.len()).any(|w| w == needle.as_bytes()))
                .unwrap_or(false)
        })
        .map(|e| e.path().display().to_string())
        .collect()
}

#[test]
fn a_peer_over_https_with_a_password_from_the_environment_hands_off_and_a_wrong_one_is_named() {
    let root = tempfile::tempdir().unwrap();
    let web = root.path().join("web");
    std::fs::create_dir_all(&web).unwrap();
    let https = HttpsGit::start(&web);
    https.repository("alice");
    let alice_model = ModelServer::start(vec![founds_design_x()]);
    let bob_model = ModelServer::start(vec![]);
    let (alice_host, bob_host) = (root.path().join("host-alice"), root.path().join("host-bob"));
    for host in [&alice_host, &bob_host] {
        std::fs::create_dir_all(host).unwrap();
    }
    let bob_url = PathBuf::from(https.url("bob"));
    let alice = agent(
        &alice_host,
        "alice",
        &[("bob", &bob_url)],
        &[],
        &alice_model.url,
    );
    alice.git(&["remote", "add", "origin", &https.url("alice")]);
    std::fs::write(
        alice.file("hearth.toml"),
        format!(
            "{}\n[git]\npush = true\nremote = \"origin\"\n",
            alice.read("hearth.toml")
        ),
    )
    .unwrap();
    alice.git(&["commit", "-qam", "push over https"]);
    let alice_url = PathBuf::from(https.url("alice"));
    let bob = agent(
        &bob_host,
        "bob",
        &[("alice", &alice_url)],
        &[],
        &bob_model.url,
    );
    hourly(&bob);
    std::fs::write(
        bob.file("hearth.toml"),
        bob.read("hearth.toml").replace(
            "[peers]\n",
            "[peers]\nfetch_every_s = 1\nfetch_flare_min = 0\n",
        ),
    )
    .unwrap();
    bob.git(&["commit", "-qam", "fetch each second"]);

    // Alice hands off; her push goes over https with the password from
    // her environment.
    alice.ok(&["say", "Start design x with bob."]);
    let mut tick = alice.keyed(&["run", "--ticks", "1"], KEY);
    tick.envs(https.environment(PASSWORD));
    let ticked = tick.output().unwrap();
    let alice_said = String::from_utf8_lossy(&ticked.stderr).into_owned();
    assert!(ticked.status.success(), "{alice_said}");
    let pushed = Command::new("git")
        .arg("--git-dir")
        .arg(web.join("server/alice.git"))
        .args(["ls-tree", "--name-only", "main", "outbox/"])
        .output()
        .unwrap();
    let pushed = String::from_utf8_lossy(&pushed.stdout).into_owned();
    assert!(pushed.contains("-handoff-design-x-1-to-bob.md"), "{pushed}");

    // Bob with a wrong password: named, with the fix; nothing taken.
    let mut run = bob.keyed(&["run"], KEY);
    run.envs(https.environment("wrong-horse-battery"));
    let wrong = bob.spawn_with(run);
    bob.wait_for(
        Duration::from_secs(30),
        "the failing fetch in status",
        || bob.ok(&["status"]).contains("FETCH FAILING"),
    );
    assert!(crate::common::finish_after_term(wrong).success());
    let status = bob.ok(&["status"]);
    assert!(status.contains("HEARTH_GIT_USERNAME"), "{status}");
    let taken = std::fs::read_to_string(bob.file("state/handoffs.jsonl")).unwrap_or_default();
    assert!(!taken.contains("design-x"), "{taken}");

    // With the right one, the handoff comes.
    let mut run = bob.keyed(&["run"], KEY);
    run.envs(https.environment(PASSWORD));
    let right = bob.spawn_with(run);
    bob.wait_for(Duration::from_secs(30), "bob to take the handoff", || {
        std::fs::read_to_string(bob.file("state/handoffs.jsonl"))
            .unwrap_or_default()
            .contains("design-x")
    });
    assert!(crate::common::finish_after_term(right).success());
    assert!(!bob.ok(&["status"]).contains("FAILING"));

    // Neither password is anywhere either home holds, nor in a log.
    for secret in [PASSWORD, "wrong-horse-battery"] {
        for home in [&alice, &bob] {
            let found = files_holding(&home.path, secret);
            assert!(found.is_empty(), "{secret:?} written to {found:?}");
            assert!(!home.log().contains(secret), "{secret:?} in the log");
        }
        assert!(!alice_said.contains(secret), "{secret:?} in alice's output");
    }
}
