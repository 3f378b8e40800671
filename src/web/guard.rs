//! Who and what the page answers, decided as pure functions over a
//! request's headers: the `Host` it was sent to (DNS rebinding: a name the
//! attacker controls, pointed at this machine, is refused), where a form
//! came from (a POST from another origin is refused), the token a script
//! sends, and the headers every answer carries.

/// The names a request may be addressed to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Served {
    /// `host:port` pairs (or bare names, for a proxy's public name),
    /// lowercased.
    names: Vec<String>,
    /// Any port of a loopback name (a Unix socket reached through
    /// `ssh -L`, whose local port is the operator's choice).
    any_loopback_port: bool,
}

impl Served {
    /// What a TCP page on `port` answers to: its loopback names on that
    /// port, and `extra` (the public names a proxy forwards, `--host`).
    pub fn tcp(ip: std::net::IpAddr, port: u16, extra: &[String]) -> Served {
        let mut names = vec![format!("{ip}:{port}")];
        if let std::net::IpAddr::V6(v6) = ip {
            names.push(format!("[{v6}]:{port}"));
        }
        if ip.is_loopback() || ip.is_unspecified() {
            for name in ["localhost", "127.0.0.1", "[::1]"] {
                names.push(format!("{name}:{port}"));
            }
        }
        names.extend(extra.iter().map(|h| h.to_ascii_lowercase()));
        Served {
            names,
            any_loopback_port: false,
        }
    }

    /// What a page on a Unix socket answers to: a loopback name, any port
    /// (the socket is forwarded by `ssh -L` to a port of the operator's
    /// choosing), and `extra`.
    pub fn unix(extra: &[String]) -> Served {
        Served {
            names: extra.iter().map(|h| h.to_ascii_lowercase()).collect(),
            any_loopback_port: true,
        }
    }

    /// Whether a request with this `Host` header is one of ours.
    pub fn allows(&self, host: Option<&str>) -> bool {
        let Some(host) = host.map(str::to_ascii_lowercase) else {
            return false; // HTTP/1.1 requires one
        };
        if self.names.contains(&host) {
            return true;
        }
        let name = match host.rsplit_once(':') {
            Some((name, port)) if port.chars().all(|c| c.is_ascii_digit()) => name,
            _ => host.as_str(),
        };
        self.any_loopback_port && ["localhost", "127.0.0.1", "[::1]"].contains(&name)
    }
}

/// Whether a state-changing request came from the page itself: its
/// `Origin` names the host it was sent to; or, when the browser hides the
/// origin (`Origin: null`, which Chromium sends for a form under the
/// page's `Referrer-Policy: no-referrer`, or none at all), `Sec-Fetch-Site`
/// — a header no page can set — says same-origin. Neither: refused, since
/// a form on any page the operator opens can post here.
pub fn same_origin(origin: Option<&str>, fetch_site: Option<&str>, host: Option<&str>) -> bool {
    match (origin, host) {
        (None | Some("null"), _) => fetch_site == Some("same-origin"),
        (Some(origin), Some(host)) => {
            let origin = origin.to_ascii_lowercase();
            let authority = origin
                .strip_prefix("http://")
                .or_else(|| origin.strip_prefix("https://"));
            authority == Some(host.to_ascii_lowercase().as_str())
        }
        (Some(_), None) => false,
    }
}

/// `next` (where a login was asked from), when it is a path of this
/// page and nothing else: one `/` then a name — never `//host` or `/\host`,
/// which a browser reads as another site, never a scheme, a quote or a
/// space. What is not is dropped (the login then opens `/`), so a link
/// cannot send the operator elsewhere after they log in.
pub fn local_path(next: &str) -> Option<&str> {
    let mut chars = next.chars();
    let plain = |c: char| c.is_ascii_alphanumeric() || "/-._~%?=&+".contains(c);
    (next.len() <= 512
        && chars.next() == Some('/')
        && !matches!(chars.next(), Some('/' | '\\'))
        && next.chars().all(plain))
    .then_some(next)
}

/// The headers every answer carries: no script but the page's own file
/// (`/live.js`; none inline, no eval), no frame, no sniffing, no referrer.
pub const HEADERS: [(&str, &str); 5] = [
    (
        "content-security-policy",
        "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'self'; \
         img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    ),
    ("x-content-type-options", "nosniff"),
    ("referrer-policy", "no-referrer"),
    ("x-frame-options", "DENY"),
    ("cache-control", "no-store"),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_names_it_serves_pass_and_a_rebound_name_does_not() {
        let tcp = Served::tcp(
            "127.0.0.1".parse().unwrap(),
            8780,
            &["agent.example".into()],
        );
        assert!(tcp.allows(Some("127.0.0.1:8780")));
        assert!(tcp.allows(Some("LOCALHOST:8780")));
        assert!(tcp.allows(Some("agent.example")));
        assert!(!tcp.allows(Some("attacker.example:8780")), "DNS rebinding");
        assert!(!tcp.allows(Some("localhost:9999")));
        assert!(!tcp.allows(None));
        let unix = Served::unix(&[]);
        assert!(unix.allows(Some("localhost:4711")));
        assert!(unix.allows(Some("127.0.0.1")));
        assert!(!unix.allows(Some("attacker.example:4711")));
    }

    #[test]
    fn after_a_login_only_a_path_of_this_page_is_opened() {
        assert_eq!(local_path("/proposals/3"), Some("/proposals/3"));
        assert_eq!(
            local_path("/recall?q=heron+river"),
            Some("/recall?q=heron+river")
        );
        assert_eq!(local_path("/memory/a%20b.md"), Some("/memory/a%20b.md"));
        assert_eq!(local_path("//evil.example/"), None);
        assert_eq!(local_path("/\\evil.example/"), None);
        assert_eq!(local_path("https://evil.example/"), None);
        assert_eq!(local_path("/x\"><script>"), None);
        assert_eq!(local_path("/a b"), None);
        assert_eq!(local_path(""), None);
    }

    #[test]
    fn a_post_must_come_from_the_page_itself() {
        let host = Some("127.0.0.1:8780");
        assert!(same_origin(Some("http://127.0.0.1:8780"), None, host));
        assert!(!same_origin(Some("http://attacker.example"), None, host));
        assert!(!same_origin(Some("null"), None, host));
        assert!(
            !same_origin(Some("null"), Some("cross-site"), host),
            "a sandboxed frame"
        );
        assert!(
            same_origin(Some("null"), Some("same-origin"), host),
            "no-referrer's form"
        );
        assert!(same_origin(None, Some("same-origin"), host));
        assert!(!same_origin(None, Some("cross-site"), host));
        assert!(!same_origin(None, None, host), "no word is no proof");
    }
}
