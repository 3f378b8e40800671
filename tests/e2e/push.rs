//! `[git] push = true` against a real git server on 127.0.0.1 (`git
//! daemon` with receive-pack), started by the test.

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::common::TestHome;

struct GitDaemon {
    child: Child,
    url: String,
    bare: std::path::PathBuf,
}

impl Drop for GitDaemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A bare repository served read-write by `git daemon` on `port`.
fn git_daemon(base: &std::path::Path, port: u16) -> GitDaemon {
    let bare = base.join("mind.git");
    if !bare.exists() {
        let init = Command::new("git")
            .args(["init", "--quiet", "--bare", "-b", "main"])
            .arg(&bare)
            .output()
            .unwrap();
        assert!(init.status.success(), "{init:?}");
    }
    // git-daemon itself, not `git daemon` (which runs it as a child that
    // would outlive a kill of the wrapper).
    let exec_path = Command::new("git").arg("--exec-path").output().unwrap();
    let exec_path = String::from_utf8_lossy(&exec_path.stdout)
        .trim()
        .to_string();
    let child = Command::new(std::path::Path::new(&exec_path).join("git-daemon"))
        .arg("--reuseaddr")
        .arg("--listen=127.0.0.1")
        .arg(format!("--port={port}"))
        .arg(format!("--base-path={}", base.display()))
        .arg("--export-all")
        .arg("--enable=receive-pack")
        .arg(base)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Ready once it accepts connections.
    for _ in 0..200 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    GitDaemon {
        child,
        url: format!("git://127.0.0.1:{port}/mind.git"),
        bare,
    }
}

fn rev(dir: &std::path::Path, what: &str) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["rev-parse", what])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

#[test]
fn each_commit_goes_to_the_remote_and_a_failing_remote_is_flared_once_and_never_delays_a_tick() {
    let server = tempfile::tempdir().unwrap();
    let port = crate::common::ports::free_port();
    let daemon = git_daemon(server.path(), port);
    let home = TestHome::with_config("[git]\npush = true\npush_flare_min = 0\n");
    home.git(&["remote", "add", "origin", &daemon.url]);
    home.ok(&["say", "hello"]);
    home.ok(&["run", "--ticks", "3"]);
    assert_eq!(
        rev(&daemon.bare, "main"),
        rev(&home.path, "HEAD"),
        "the remote has the last commit"
    );
    let status = home.ok(&["status"]);
    assert!(status.contains("last pushed to origin"), "{status}");

    // The server goes away: ticks go on, one push flare.
    drop(daemon);
    let before = rev(&home.path, "HEAD");
    let started = std::time::Instant::now();
    home.ok(&["run", "--ticks", "3"]);
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "a dead remote does not hold ticks up"
    );
    assert_ne!(rev(&home.path, "HEAD"), before, "ticks committed");
    let flares: Vec<String> = home
        .list("outbox")
        .into_iter()
        .filter(|n| n.contains("-flare-push"))
        .collect();
    assert_eq!(flares.len(), 1, "{flares:?} {}", home.ok(&["status"]));
    let status = home.ok(&["status"]);
    assert!(status.contains("PUSH FAILING"), "{status}");
    // The flare is hearth's commit, not taken for the operator's hand edit.
    let flared_in = home
        .history()
        .into_iter()
        .find(|c| c.files.iter().any(|f| f.ends_with(&flares[0])))
        .expect("the flare is committed");
    assert_eq!(flared_in.author, "hearth", "{}", flared_in.summary);

    // Back: the next run catches the remote up and clears the failure.
    let daemon = git_daemon(server.path(), port);
    home.ok(&["run", "--ticks", "1"]);
    assert_eq!(rev(&daemon.bare, "main"), rev(&home.path, "HEAD"));
    assert!(!home.ok(&["status"]).contains("PUSH FAILING"));

    // Restore is one command: clone the remote, run hearth on the clone.
    let copy = server.path().join("restored");
    let clone = Command::new("git")
        .args(["clone", "--quiet", &daemon.url])
        .arg(&copy)
        .output()
        .unwrap();
    assert!(clone.status.success(), "{clone:?}");
    let restored = TestHome::at(&copy);
    let last = home.ticks().last().unwrap()["tick"].as_u64().unwrap();
    std::fs::write(restored.file("hearth.toml"), "[git]\npush = false\n").unwrap();
    restored.ok(&["run", "--ticks", "1"]);
    assert_eq!(
        restored.ticks().last().unwrap()["tick"].as_u64().unwrap(),
        last + 1
    );
}

#[test]
fn a_second_home_pushing_to_the_same_remote_is_said_at_once_with_the_fix_and_not_retried_in_a_loop()
{
    let server = tempfile::tempdir().unwrap();
    let port = crate::common::ports::free_port();
    let daemon = git_daemon(server.path(), port);
    // A day's flare time: only a cause pushing again cannot fix is flared
    // at once.
    let home = TestHome::with_config("[git]\npush = true\npush_flare_min = 1440\n");
    home.git(&["remote", "add", "origin", &daemon.url]);
    home.ok(&["run", "--ticks", "1"]);
    assert_eq!(rev(&daemon.bare, "main"), rev(&home.path, "HEAD"));

    // A copy restored by cloning the remote, as the docs say, pushes to it.
    let copy = server.path().join("restored");
    let clone = Command::new("git")
        .args(["clone", "--quiet", &daemon.url])
        .arg(&copy)
        .output()
        .unwrap();
    assert!(clone.status.success(), "{clone:?}");
    let restored = TestHome::at(&copy);
    // Its own words (on the pinned clock the two homes' next commits would
    // otherwise be the same objects, and no history would have forked).
    std::fs::write(restored.file("memory/copy.md"), "I am the copy.\n").unwrap();
    restored.ok(&["run", "--ticks", "1"]);
    assert_eq!(
        rev(&daemon.bare, "main"),
        rev(&copy, "HEAD"),
        "the copy pushed"
    );

    // The original's next push is refused: said at once, with the fix.
    home.ok(&["run", "--ticks", "1"]);
    let flares: Vec<String> = home
        .list("outbox")
        .into_iter()
        .filter(|n| n.contains("-flare-push"))
        .map(|n| home.read(&format!("outbox/{n}")))
        .collect();
    assert_eq!(flares.len(), 1, "{flares:?} {}", home.ok(&["status"]));
    assert!(
        flares[0].contains("holds commits this home does not have")
            && flares[0].contains("remote set-url origin"),
        "{}",
        flares[0]
    );
    let status = home.ok(&["status"]);
    assert!(
        status.contains("PUSH FAILING") && status.contains("remote set-url origin"),
        "{status}"
    );
    drop(daemon);
}
