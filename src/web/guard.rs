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
///
/// The origin's scheme is the page's own (`https` behind a TLS proxy,
/// `--behind-https`; `http` otherwise): another scheme is another origin.
pub fn same_origin(
    origin: Option<&str>,
    fetch_site: Option<&str>,
    host: Option<&str>,
    https: bool,
) -> bool {
    match (origin, host) {
        (None | Some("null"), _) => fetch_site == Some("same-origin"),
        (Some(origin), Some(host)) => {
            let origin = origin.to_ascii_lowercase();
            let scheme = if https { "https://" } else { "http://" };
            origin.strip_prefix(scheme) == Some(host.to_ascii_lowercase().as_str())
        }
        (Some(_), None) => false,
    }
}

/// Whether a request's headers name where it goes once and only once:
/// one `Host` (RFC 9112, 3.2: two are a 400), and a request target in
/// absolute form (`GET http://name/ HTTP/1.1`) naming the same authority
/// (which replaces `Host` there, so it is judged as `Host` is). The
/// `Host` to judge, or `None`: refuse with 400.
pub fn one_host<'a>(hosts: &[&'a str], target_authority: Option<&str>) -> Option<Option<&'a str>> {
    match (hosts, target_authority) {
        ([_, _, ..], _) => None,
        ([host], Some(authority)) if !host.eq_ignore_ascii_case(authority) => None,
        ([], Some(_)) => None,
        (hosts, _) => Some(hosts.first().copied()),
    }
}

/// Whether a form's body is a form: `application/x-www-form-urlencoded`,
/// as a browser's form sends it (a JSON or multipart body is refused,
/// never read as a form).
pub fn is_form(content_type: Option<&str>) -> bool {
    content_type
        .and_then(|t| t.split(';').next())
        .is_some_and(|t| {
            t.trim()
                .eq_ignore_ascii_case("application/x-www-form-urlencoded")
        })
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
        let same = |origin, site| same_origin(origin, site, host, false);
        assert!(same(Some("http://127.0.0.1:8780"), None));
        assert!(
            !same(Some("https://127.0.0.1:8780"), None),
            "another scheme"
        );
        assert!(same_origin(
            Some("https://127.0.0.1:8780"),
            None,
            host,
            true
        ));
        assert!(!same_origin(
            Some("http://127.0.0.1:8780"),
            None,
            host,
            true
        ));
        assert!(!same(Some("http://attacker.example"), None));
        assert!(!same(Some("null"), None));
        assert!(!same(Some("null"), Some("cross-site")), "a sandboxed frame");
        assert!(
            same(Some("null"), Some("same-origin")),
            "no-referrer's form"
        );
        assert!(same(None, Some("same-origin")));
        assert!(!same(None, Some("cross-site")));
        assert!(!same(None, None), "no word is no proof");
    }

    #[test]
    fn a_request_names_its_host_once() {
        assert_eq!(one_host(&["a:1"], None), Some(Some("a:1")));
        assert_eq!(one_host(&[], None), Some(None));
        assert_eq!(one_host(&["a:1", "b:2"], None), None, "two Hosts");
        assert_eq!(one_host(&["a:1"], Some("A:1")), Some(Some("a:1")));
        assert_eq!(one_host(&["a:1"], Some("evil:1")), None, "absolute form");
        assert_eq!(one_host(&[], Some("a:1")), None);
    }

    #[test]
    fn only_a_forms_body_is_read_as_a_form() {
        assert!(is_form(Some("application/x-www-form-urlencoded")));
        assert!(is_form(Some(
            "Application/X-WWW-Form-Urlencoded; charset=UTF-8"
        )));
        assert!(!is_form(Some("application/json")));
        assert!(!is_form(Some("multipart/form-data; boundary=x")));
        assert!(!is_form(None));
    }
}
