//! The dead-man ping (healthchecks.io's protocol; Uptime Kuma's push URL
//! works the same way): `GET {ping}/start` when a tick starts, `{ping}`
//! when it exits 0, `{ping}/fail` otherwise. Each ping runs on a thread of
//! its own with a bounded time, so no tick ever waits for it; a host that
//! dies is noticed by the service that stops hearing from it.

use std::time::Duration;

/// How long one ping may take.
pub const PING_TIMEOUT: Duration = Duration::from_secs(10);

/// What the ping says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ping {
    /// A tick started.
    Start,
    /// It exited 0.
    Success,
    /// It did not.
    Fail,
}

impl Ping {
    /// What a tick that ended with `exit` says.
    pub fn after(exit: i32) -> Ping {
        if exit == 0 {
            Ping::Success
        } else {
            Ping::Fail
        }
    }
}

/// The URL for `what`.
pub fn url(base: &str, what: Ping) -> String {
    let base = base.trim_end_matches('/');
    match what {
        Ping::Start => format!("{base}/start"),
        Ping::Success => base.to_string(),
        Ping::Fail => format!("{base}/fail"),
    }
}

/// Sends the ping in the background (nothing, with no URL). A failure is
/// logged at debug level: the monitoring service notices silence itself.
pub fn send(base: &str, what: Ping) -> Option<std::thread::JoinHandle<()>> {
    if base.is_empty() {
        return None;
    }
    let target = url(base, what);
    std::thread::Builder::new()
        .name("hearth-ping".into())
        .spawn(move || {
            let client = reqwest::blocking::Client::builder()
                .timeout(PING_TIMEOUT)
                .build();
            let result = client.and_then(|c| c.get(&target).send());
            if let Err(e) = result {
                tracing::debug!("the dead-man ping ({what:?}) failed: {}", e.without_url());
            }
        })
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_urls_are_healthchecks_own() {
        let base = "https://hc-ping.com/1234/";
        assert_eq!(url(base, Ping::Start), "https://hc-ping.com/1234/start");
        assert_eq!(url(base, Ping::Success), "https://hc-ping.com/1234");
        assert_eq!(url(base, Ping::Fail), "https://hc-ping.com/1234/fail");
    }
}
