//! The sd_notify protocol as systemd speaks it: the test plays systemd,
//! binding the notify socket and reading the datagrams hearth sends.

#![allow(clippy::disallowed_methods)] // fixtures, not state

use std::os::unix::net::UnixDatagram;
use std::time::{Duration, Instant};

use crate::common::{finish, signal, TestHome};

/// Reads datagrams until `done` says stop or `timeout` passes.
fn collect(
    socket: &UnixDatagram,
    timeout: Duration,
    mut done: impl FnMut(&[String]) -> bool,
) -> Vec<String> {
    socket
        .set_read_timeout(Some(Duration::from_millis(50)))
        .unwrap();
    let start = Instant::now();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    while start.elapsed() < timeout && !done(&got) {
        if let Ok(n) = socket.recv(&mut buf) {
            got.push(String::from_utf8_lossy(&buf[..n]).into_owned());
        }
    }
    got
}

/// Plays systemd: binds the notify socket, then starts `hearth ARGS` with
/// `NOTIFY_SOCKET`, a 200 ms `WATCHDOG_USEC`, and `env`.
fn start_notified(
    home: &TestHome,
    args: &[&str],
    env: &[(&str, &str)],
) -> (UnixDatagram, std::process::Child) {
    let socket_path = home.path.with_file_name("notify.sock");
    let socket = UnixDatagram::bind(&socket_path).unwrap();
    let mut cmd = home.cmd(args);
    cmd.env("NOTIFY_SOCKET", &socket_path)
        .env("WATCHDOG_USEC", "200000");
    for (key, value) in env {
        cmd.env(key, value);
    }
    (socket, home.spawn_with(cmd))
}

#[test]
fn ready_status_and_watchdog_reach_the_notify_socket() {
    let home = TestHome::with_config("[tick]\ninterval_s = 3600\n");
    let (socket, child) = start_notified(&home, &["run"], &[]);

    let got = collect(&socket, Duration::from_secs(10), |got| {
        got.iter().filter(|m| m.as_str() == "WATCHDOG=1").count() >= 3
            && got.iter().any(|m| m.starts_with("STATUS=tick 1"))
    });
    signal(&child, libc::SIGTERM);
    let tail = collect(&socket, Duration::from_secs(5), |got| {
        got.iter().any(|m| m == "STOPPING=1")
    });
    let status = finish(child, Duration::from_secs(5));
    assert!(status.success(), "{}", home.log());

    assert!(
        got[0].starts_with("READY=1\nSTATUS=hearth supervising "),
        "READY=1 comes first: {got:?}"
    );
    assert!(
        got.contains(&"STATUS=tick 1: exit 0 (ok)".to_string()),
        "{got:?}"
    );
    let pings = got.iter().filter(|m| m.as_str() == "WATCHDOG=1").count();
    assert!(pings >= 3, "the watchdog is fed while waiting: {got:?}");
    assert!(tail.contains(&"STOPPING=1".to_string()), "{tail:?}");
}

#[test]
fn the_watchdog_is_fed_while_a_long_tick_runs() {
    let home = TestHome::with_config("");
    let (socket, child) = start_notified(
        &home,
        &["run", "--ticks", "1"],
        &[("HEARTH_TEST_TICK_DELAY", "1500")],
    );
    let got = collect(&socket, Duration::from_secs(10), |got| {
        got.iter().any(|m| m.starts_with("STATUS=tick 1"))
    });
    finish(child, Duration::from_secs(5));
    let during: Vec<&String> = got
        .iter()
        .skip_while(|m| !m.starts_with("READY=1"))
        .take_while(|m| !m.starts_with("STATUS=tick 1"))
        .filter(|m| m.as_str() == "WATCHDOG=1")
        .collect();
    assert!(during.len() >= 5, "pings during the 1.5 s tick: {got:?}");
}

#[test]
fn a_watchdog_meant_for_another_pid_is_ignored() {
    let home = TestHome::with_config("");
    let (socket, child) = start_notified(&home, &["run", "--ticks", "1"], &[("WATCHDOG_PID", "1")]);
    let got = collect(&socket, Duration::from_secs(10), |got| {
        got.iter().any(|m| m == "STOPPING=1")
    });
    finish(child, Duration::from_secs(5));
    assert!(got[0].starts_with("READY=1"), "{got:?}");
    assert!(!got.iter().any(|m| m == "WATCHDOG=1"), "{got:?}");
}
