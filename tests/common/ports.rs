//! Ports on 127.0.0.1 for the real servers tests start (git daemon, sshd,
//! a web server): a free one, and waiting until one listens or is closed.

use std::time::{Duration, Instant};

/// A port nothing listens on now.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Waits up to 10 s until `port` accepts connections (`listening`) or
/// refuses them; on time-out fails naming `what` and what `why` says (a
/// server's log).
pub fn wait_until(port: u16, listening: bool, what: &str, why: impl Fn() -> String) {
    let began = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() != listening {
        assert!(
            began.elapsed() < Duration::from_secs(10),
            "{what} {} port {port}: {}",
            if listening {
                "did not listen on"
            } else {
                "still serves"
            },
            why()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}
