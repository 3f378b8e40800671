//! A password in a URL is never repeated. A URL hearth is given is shown in
//! status, the log, flares (which are committed and pushed), `collab
//! list`, metrics and the MCP door's answers, and passed to `git` on its
//! command line (readable by every account in `/proc`). So a `[peers]` URL
//! that carries a password is refused at start, with the fix: the password
//! comes from the environment (`HEARTH_GIT_USERNAME` /
//! `HEARTH_GIT_PASSWORD`). Wherever a URL is shown anyway (git's own words,
//! an old state file), its password is masked.

/// The environment variables an https peer's user name and password come
/// from.
pub const USERNAME_VARIABLE: &str = "HEARTH_GIT_USERNAME";
/// See [`USERNAME_VARIABLE`].
pub const PASSWORD_VARIABLE: &str = "HEARTH_GIT_PASSWORD";

/// The user information of `url` (`user` or `user:password` before the
/// host's `@`), if it has any.
fn userinfo(url: &str) -> Option<&str> {
    let (_, rest) = url.split_once("://")?;
    let authority = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
    authority.rsplit_once('@').map(|(info, _)| info)
}

/// Whether `url` carries a secret: a password (`user:password@`), or,
/// over http(s), any user information at all (a token is often given as
/// the user name: `https://ghp_…@host/`). ssh's `git@host` is a name only.
pub fn carries_secret(url: &str) -> bool {
    let Some(info) = userinfo(url) else {
        return false;
    };
    let web = url.starts_with("https://") || url.starts_with("http://");
    info.contains(':') || web
}

/// Whether `text` (a whole `hearth.toml`, say) holds a URL with a
/// password in it anywhere.
pub fn holds_password(text: &str) -> bool {
    masked(text) != text
}

/// `text` with every URL's password (and every http(s) URL's user
/// information) replaced by `***`: `https://me:secret@host/…` is shown as
/// `https://me:***@host/…`, `https://tok@host/` as `https://***@host/`.
pub fn masked(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        let (head, tail) = rest.split_at(at + 3);
        out.push_str(head);
        let scheme_start = head[..at]
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || "+-.".contains(c)))
            .map_or(0, |i| i + 1);
        let web = matches!(&head[scheme_start..at], "https" | "http");
        let end = tail
            .find(|c: char| {
                c == '/' || c == '?' || c == '#' || c.is_whitespace() || c == '"' || c == '\''
            })
            .unwrap_or(tail.len());
        match tail[..end].rsplit_once('@') {
            Some((info, host)) => {
                let shown = match info.split_once(':') {
                    Some((user, _)) => format!("{user}:***"),
                    None if web => "***".to_string(),
                    None => info.to_string(),
                };
                out.push_str(&format!("{shown}@{host}"));
            }
            None => out.push_str(&tail[..end]),
        }
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_password_in_a_url_is_never_repeated() {
        let said = "fatal: unable to access 'https://me:hunter2@example.org/a.git/': 403";
        let shown = masked(said);
        assert!(!shown.contains("hunter2"), "{shown}");
        assert!(
            shown.contains("https://me:***@example.org/a.git/"),
            "{shown}"
        );
        assert_eq!(
            masked("ssh://git@host/x and git://host/y"),
            "ssh://git@host/x and git://host/y"
        );
        assert_eq!(
            masked("bob = \"https://ghp_tok@host/b.git\""),
            "bob = \"https://***@host/b.git\""
        );
        assert_eq!(masked("ssh://me:pw@host:22/x"), "ssh://me:***@host:22/x");
        assert!(holds_password("x = \"git://u:p@h/r\"\n"));
        assert!(!holds_password("x = \"ssh://git@h/r\"\n"));
    }

    #[test]
    fn a_secret_is_a_password_or_any_user_over_the_web() {
        assert!(carries_secret("https://me:pw@host/x.git"));
        assert!(carries_secret("https://token@host/x.git"));
        assert!(carries_secret("ssh://me:pw@host/x.git"));
        assert!(!carries_secret("ssh://git@host/x.git"));
        assert!(!carries_secret("https://host/x.git"));
        assert!(!carries_secret("https://host/a@b.git"), "an @ in the path");
    }
}
