//! `[web]`: where the operator's page is reached, so that every notice
//! can link to it. A link identifies what to look at; it never
//! authorizes (no token in it: the page asks for its own login).

use serde::{Deserialize, Serialize};

/// `[web]`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WebConfig {
    /// The page's public address (`https://agent.example`), as a proxy
    /// serves `hearth web`; empty: notices carry no link.
    pub url: String,
}

impl WebConfig {
    /// The page's address without a trailing `/`, when one is set.
    pub fn base(&self) -> Option<&str> {
        let url = self.url.trim().trim_end_matches('/');
        (!url.is_empty()).then_some(url)
    }

    /// Why `url` is not a page's address, if it is not: http(s), no
    /// credentials, no query or fragment (a link must not carry a secret).
    pub fn problem(&self) -> Option<String> {
        let url = self.base()?;
        let Some(rest) = url
            .strip_prefix("https://")
            .or_else(|| url.strip_prefix("http://"))
        else {
            return Some(format!(
                "[web] url = {url:?}: give the page's http(s) address"
            ));
        };
        let authority = rest.split('/').next().unwrap_or("");
        if authority.is_empty() || authority.contains('@') || rest.contains(['?', '#']) {
            return Some(format!(
                "[web] url = {url:?}: a plain address (no user, password, query or fragment: a \
                 link never carries a secret)"
            ));
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_is_a_plain_address() {
        let web = |url: &str| WebConfig { url: url.into() };
        assert_eq!(
            web("https://agent.example/").base(),
            Some("https://agent.example")
        );
        assert_eq!(web("").base(), None);
        assert!(web("https://agent.example/hearth").problem().is_none());
        assert!(web("agent.example").problem().is_some());
        assert!(web("https://me:pw@agent.example").problem().is_some());
        assert!(web("https://agent.example/?token=x").problem().is_some());
    }
}
