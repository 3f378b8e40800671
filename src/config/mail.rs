//! `[mail]`: talking with the agent by mail. The supervisor keeps an IMAP
//! connection to the operator's mailbox; each new mail becomes an inbox
//! message, the operator's only when a DKIM signature aligned with an
//! operator address's domain verifies. The agent's answers to the
//! operator's mail go back through the host's `sendmail`.

use serde::{Deserialize, Serialize};

/// `[mail]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MailConfig {
    /// `imaps://HOST[:PORT]` (TLS from the first byte; 993 by default), or
    /// `imap://HOST[:PORT]` with STARTTLS, required (143 by default); empty:
    /// no mail.
    pub imap: String,
    /// The IMAP login.
    pub user: String,
    /// The environment variable that holds the password (never a file).
    pub password_env: String,
    /// The folder mail arrives in.
    pub folder: String,
    /// The operator's addresses: a mail is theirs only from one of these,
    /// with an aligned DKIM signature that verifies.
    pub operator: Vec<String>,
    /// The agent's address: replies are sent from it.
    pub from: String,
    /// The `sendmail` program replies go through (given the message on
    /// stdin, `-i -t`).
    pub sendmail: String,
    /// The DNS server DKIM keys are looked up at (`IP:PORT`); empty: the
    /// system's (`/etc/resolv.conf`).
    pub dns: String,
    /// Seconds between looks at a server without IDLE, and the longest an
    /// IDLE waits before it is renewed.
    pub poll_s: u64,
    /// The largest mail taken whole (bytes); a larger one becomes a
    /// message that says so, with its headers, and loses nothing on the
    /// server.
    pub max_bytes: u64,
}

impl Default for MailConfig {
    fn default() -> Self {
        MailConfig {
            imap: String::new(),
            user: String::new(),
            password_env: "HEARTH_MAIL_PASSWORD".into(),
            folder: "INBOX".into(),
            operator: Vec::new(),
            from: String::new(),
            sendmail: "/usr/sbin/sendmail".into(),
            dns: String::new(),
            poll_s: 300,
            max_bytes: 10 * 1024 * 1024,
        }
    }
}

/// Where the IMAP server is, and how its connection is made private.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImapServer {
    /// Its name (what its certificate must name).
    pub host: String,
    /// Its port.
    pub port: u16,
    /// `imap://`: STARTTLS before anything else is said.
    pub starttls: bool,
}

impl MailConfig {
    /// Whether mail is set up at all.
    pub fn enabled(&self) -> bool {
        !self.imap.trim().is_empty()
    }

    /// The server `imap` names, or why it names none.
    pub fn server(&self) -> Result<ImapServer, String> {
        let url = self.imap.trim().trim_end_matches('/');
        let (rest, starttls, default_port) = if let Some(rest) = url.strip_prefix("imaps://") {
            (rest, false, 993)
        } else if let Some(rest) = url.strip_prefix("imap://") {
            (rest, true, 143)
        } else {
            return Err(format!(
                "[mail] imap = {url:?}: give imaps://HOST[:PORT] (or imap://HOST[:PORT], \
                 upgraded with STARTTLS)"
            ));
        };
        if rest.contains(['@', '/', '?', '#']) || rest.is_empty() {
            return Err(format!(
                "[mail] imap = {url:?}: a host and port alone (the login is `user`, the \
                 password in the environment variable `password_env`)"
            ));
        }
        let (host, port) = match rest.rsplit_once(':') {
            Some((host, port)) => match port.parse() {
                Ok(port) => (host, port),
                Err(_) => return Err(format!("[mail] imap = {url:?}: {port:?} is not a port")),
            },
            None => (rest, default_port),
        };
        Ok(ImapServer {
            host: host.trim_matches(['[', ']']).to_string(),
            port,
            starttls,
        })
    }

    /// What is wrong with `[mail]`, if mail is on: the server, the login,
    /// who the operator is, where replies come from.
    pub fn problem(&self) -> Option<String> {
        if !self.enabled() {
            return None;
        }
        if let Err(why) = self.server() {
            return Some(why);
        }
        if self.user.trim().is_empty() {
            return Some("[mail] user is empty: give the IMAP login".into());
        }
        if self.operator.iter().any(|a| !a.contains('@')) {
            return Some(format!(
                "[mail] operator = {:?}: each is an address (ada@example.org)",
                self.operator
            ));
        }
        if !self.dns.is_empty() && self.dns.parse::<std::net::SocketAddr>().is_err() {
            return Some(format!(
                "[mail] dns = {:?}: give IP:PORT (127.0.0.1:53), or leave it empty for the \
                 system's resolver",
                self.dns
            ));
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_server_is_a_host_and_port_private_from_the_first_byte_or_by_starttls() {
        let mail = |imap: &str| MailConfig {
            imap: imap.into(),
            user: "agent".into(),
            ..MailConfig::default()
        };
        assert_eq!(
            mail("imaps://mail.example.org").server(),
            Ok(ImapServer {
                host: "mail.example.org".into(),
                port: 993,
                starttls: false
            })
        );
        assert_eq!(mail("imap://127.0.0.1:1143").server().unwrap().port, 1143);
        assert!(mail("imap://127.0.0.1:1143").server().unwrap().starttls);
        assert!(mail("https://mail.example.org").problem().is_some());
        assert!(mail("imaps://me:pw@mail.example.org").problem().is_some());
        assert!(mail("imaps://mail.example.org").problem().is_none());
        assert!(MailConfig::default().problem().is_none(), "off");
    }
}
