//! Browser sessions: a login with the token gives a random session id in
//! a cookie (HttpOnly, SameSite=Strict, Max-Age; Secure and `__Host-`
//! behind an https proxy). Sessions live in this process only — never in
//! the home, never in a tick's environment — are capped, and expire: 12
//! hours after their last use, 24 hours after the login whatever the use.
//!
//! Guessing is not stopped by a lockout, which anyone who reaches the port
//! could trip to shut the operator out: the token is long enough that no
//! rate a network allows guesses it (`hearth web` refuses a shorter one),
//! and each wrong try is answered only after [`WRONG_WAIT`], while the
//! right token is never kept waiting.

use std::collections::HashMap;
use std::io::Read;
use std::time::{Duration, Instant};

/// The cookie's name over plain http (a Unix socket through `ssh -L`).
pub const COOKIE: &str = "hearth_session";

/// Its name behind https: a browser keeps a `__Host-` cookie only when it
/// is Secure, for the whole site and no other host, so a page on another
/// port of the same host cannot plant one to shadow it.
pub const HOST_COOKIE: &str = "__Host-hearth_session";

/// Sessions open at once; the oldest goes when a new one would pass it.
const MAX_SESSIONS: usize = 64;

/// A session unused this long is gone.
const IDLE: Duration = Duration::from_secs(12 * 3600);

/// A session this old is gone, however much it is used.
pub const LIFETIME: Duration = Duration::from_secs(24 * 3600);

/// How long a wrong token (a login or a bearer) waits for its answer.
pub const WRONG_WAIT: Duration = Duration::from_millis(500);

/// The shortest token a door accepts: 32 characters, 128 bits as hex
/// (`openssl rand -hex 32` makes 64).
pub const MIN_TOKEN_CHARS: usize = 32;

/// One open session.
#[derive(Debug, Clone, Copy)]
struct Open {
    opened: Instant,
    used: Instant,
}

impl Open {
    fn alive(&self, now: Instant) -> bool {
        now.duration_since(self.used) < IDLE && now.duration_since(self.opened) < LIFETIME
    }
}

/// The sessions open now.
#[derive(Debug, Default)]
pub struct Sessions {
    open: HashMap<String, Open>,
}

impl Sessions {
    /// A login with the token (the caller compared it): the new session's id.
    pub fn login(&mut self, now: Instant) -> String {
        self.open.retain(|_, open| open.alive(now));
        if self.open.len() >= MAX_SESSIONS {
            if let Some(oldest) = self
                .open
                .iter()
                .min_by_key(|(_, open)| open.used)
                .map(|(k, _)| k.clone())
            {
                self.open.remove(&oldest);
            }
        }
        let id = random_id();
        self.open.insert(
            id.clone(),
            Open {
                opened: now,
                used: now,
            },
        );
        id
    }

    /// Whether `id` is an open session (and it is used now).
    pub fn check(&mut self, id: &str, now: Instant) -> bool {
        match self.open.get_mut(id) {
            Some(open) if open.alive(now) => {
                open.used = now;
                true
            }
            Some(_) => {
                self.open.remove(id);
                false
            }
            None => false,
        }
    }

    /// Ends session `id`.
    pub fn logout(&mut self, id: &str) {
        self.open.remove(id);
    }
}

/// 32 random bytes from the kernel, as hex.
fn random_id() -> String {
    let mut bytes = [0u8; 32];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .expect("the kernel's random source is readable");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The name of the page's cookie (`secure`: served as https).
pub fn cookie_name(secure: bool) -> &'static str {
    if secure {
        HOST_COOKIE
    } else {
        COOKIE
    }
}

/// Every value of the cookie `name` in a `Cookie` header: a browser sends
/// each cookie of that name whose path fits, so one planted with a longer
/// path comes first and must not hide the operator's.
pub fn from_cookie<'a>(header: Option<&'a str>, name: &'a str) -> impl Iterator<Item = &'a str> {
    header
        .unwrap_or("")
        .split(';')
        .filter_map(|pair| pair.trim().split_once('='))
        .filter(move |(n, _)| *n == name)
        .map(|(_, value)| value)
}

/// The `Set-Cookie` value for session `id` (`secure`: served as https).
pub fn set_cookie(id: &str, secure: bool) -> String {
    let flags = if secure { "; Secure" } else { "" };
    format!(
        "{}={id}; Path=/; Max-Age={}; HttpOnly; SameSite=Strict{flags}",
        cookie_name(secure),
        LIFETIME.as_secs()
    )
}

/// The `Set-Cookie` value that removes the cookie from the browser.
pub fn clear_cookie(secure: bool) -> String {
    let flags = if secure { "; Secure" } else { "" };
    format!(
        "{}=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict{flags}",
        cookie_name(secure)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_ends_when_idle_and_at_its_lifetime_however_used() {
        let mut sessions = Sessions::default();
        let now = Instant::now();
        let id = sessions.login(now);
        assert_eq!(id.len(), 64);
        assert!(sessions.check(&id, now));
        assert!(!sessions.check("guess", now));
        // Used every 11 hours: alive until 24 hours after the login.
        let hours = |h: u64| now + Duration::from_secs(h * 3600);
        assert!(sessions.check(&id, hours(11)));
        assert!(sessions.check(&id, hours(22)));
        assert!(!sessions.check(&id, hours(24)), "the absolute lifetime");
        let idle = sessions.login(now);
        assert!(!sessions.check(&idle, hours(13)), "12 hours unused");
        let out = sessions.login(now);
        sessions.logout(&out);
        assert!(!sessions.check(&out, now));
    }

    #[test]
    fn every_cookie_of_the_name_is_read_so_a_planted_one_hides_nothing() {
        let header = format!("a=1; {COOKIE}=junk; b=2; {COOKIE}=abc");
        let all: Vec<&str> = from_cookie(Some(&header), COOKIE).collect();
        assert_eq!(all, ["junk", "abc"]);
        assert_eq!(from_cookie(Some("a=1"), COOKIE).count(), 0);
        assert_eq!(from_cookie(None, COOKIE).count(), 0);
        let set = set_cookie("abc", true);
        assert!(set.starts_with("__Host-hearth_session=abc"), "{set}");
        for flag in [
            "HttpOnly",
            "SameSite=Strict",
            "Secure",
            "Path=/",
            "Max-Age=86400",
        ] {
            assert!(set.contains(flag), "{set}");
        }
        let plain = set_cookie("abc", false);
        assert!(plain.starts_with("hearth_session=abc") && !plain.contains("Secure"));
        assert!(clear_cookie(false).contains("Max-Age=0"));
    }
}
