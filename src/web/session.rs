//! Browser sessions: a login with the token gives a random session id in
//! a cookie (HttpOnly, SameSite=Strict; Secure behind an https proxy).
//! Sessions live in this process only — never in the home, never in a
//! tick's environment — are capped, and expire. Failed logins and wrong
//! bearer tokens are rate-limited together, so the token cannot be
//! guessed at line speed by either door.

use std::collections::{HashMap, VecDeque};
use std::io::Read;
use std::time::{Duration, Instant};

/// The cookie's name.
pub const COOKIE: &str = "hearth_session";

/// Sessions open at once; the oldest goes when a new one would pass it.
const MAX_SESSIONS: usize = 64;

/// A session unused this long is gone.
const IDLE: Duration = Duration::from_secs(12 * 3600);

/// Failed logins allowed in [`FAILURE_WINDOW`]; past it, every login is
/// answered "try later" until the window moves on.
const MAX_FAILURES: usize = 10;
const FAILURE_WINDOW: Duration = Duration::from_secs(60);

/// The sessions and the recent failed logins.
#[derive(Debug, Default)]
pub struct Sessions {
    open: HashMap<String, Instant>,
    failures: VecDeque<Instant>,
}

/// What a login attempt comes to.
#[derive(Debug, PartialEq, Eq)]
pub enum Login {
    /// The token matched: the new session's id.
    Opened(String),
    /// It did not.
    Refused,
    /// Too many failures just now: not even looked at.
    TooMany,
}

impl Sessions {
    /// A login with `matched` (whether the token given was the token).
    pub fn login(&mut self, matched: bool, now: Instant) -> Login {
        if let Some(refused) = self.guess(matched, now) {
            return refused;
        }
        self.open.retain(|_, used| now.duration_since(*used) < IDLE);
        if self.open.len() >= MAX_SESSIONS {
            if let Some(oldest) = self
                .open
                .iter()
                .min_by_key(|(_, t)| **t)
                .map(|(k, _)| k.clone())
            {
                self.open.remove(&oldest);
            }
        }
        let id = random_id();
        self.open.insert(id.clone(), now);
        Login::Opened(id)
    }

    /// A script's `Authorization: Bearer` with `matched`: whether it is
    /// let in. A wrong bearer counts as a failed login, and past too many
    /// even the right one waits, so the header is no way round the limit.
    pub fn bearer(&mut self, matched: bool, now: Instant) -> bool {
        self.guess(matched, now).is_none()
    }

    /// The limit on guesses: `None` when a token `matched` and the window
    /// is not full; else why not (a wrong one is counted).
    fn guess(&mut self, matched: bool, now: Instant) -> Option<Login> {
        while self
            .failures
            .front()
            .is_some_and(|t| now.duration_since(*t) > FAILURE_WINDOW)
        {
            self.failures.pop_front();
        }
        if self.failures.len() >= MAX_FAILURES {
            return Some(Login::TooMany);
        }
        if !matched {
            self.failures.push_back(now);
            return Some(Login::Refused);
        }
        None
    }

    /// Whether `id` is an open session (and it is used now).
    pub fn check(&mut self, id: &str, now: Instant) -> bool {
        match self.open.get_mut(id) {
            Some(used) if now.duration_since(*used) < IDLE => {
                *used = now;
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

/// The session id a `Cookie` header carries, if any.
pub fn from_cookie(header: Option<&str>) -> Option<&str> {
    header?
        .split(';')
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == COOKIE)
        .map(|(_, value)| value)
}

/// The `Set-Cookie` value for session `id` (`secure`: served as https).
pub fn set_cookie(id: &str, secure: bool) -> String {
    let secure = if secure { "; Secure" } else { "" };
    format!("{COOKIE}={id}; Path=/; HttpOnly; SameSite=Strict{secure}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_right_token_opens_a_session_and_a_run_of_wrong_ones_is_stopped() {
        let mut sessions = Sessions::default();
        let now = Instant::now();
        let Login::Opened(id) = sessions.login(true, now) else {
            panic!("the token opens a session")
        };
        assert_eq!(id.len(), 64);
        assert!(sessions.check(&id, now));
        assert!(!sessions.check("guess", now));
        for _ in 0..MAX_FAILURES {
            assert_eq!(sessions.login(false, now), Login::Refused);
        }
        assert_eq!(
            sessions.login(true, now),
            Login::TooMany,
            "not even looked at"
        );
        let later = now + FAILURE_WINDOW + Duration::from_secs(1);
        assert!(matches!(sessions.login(true, later), Login::Opened(_)));
        sessions.logout(&id);
        assert!(!sessions.check(&id, later));
    }

    #[test]
    fn a_bearer_is_no_way_round_the_limit() {
        let mut sessions = Sessions::default();
        let now = Instant::now();
        assert!(sessions.bearer(true, now));
        for _ in 0..MAX_FAILURES {
            assert!(!sessions.bearer(false, now));
        }
        assert!(
            !sessions.bearer(true, now),
            "past the limit, not even the token"
        );
        assert_eq!(sessions.login(true, now), Login::TooMany);
        assert!(sessions.bearer(true, now + FAILURE_WINDOW + Duration::from_secs(1)));
    }

    #[test]
    fn the_cookie_is_read_by_name_and_set_strict() {
        let header = format!("a=1; {COOKIE}=abc; b=2");
        assert_eq!(from_cookie(Some(&header)), Some("abc"));
        assert_eq!(from_cookie(Some("a=1")), None);
        let set = set_cookie("abc", true);
        assert!(
            set.contains("HttpOnly") && set.contains("SameSite=Strict") && set.contains("Secure")
        );
    }
}
