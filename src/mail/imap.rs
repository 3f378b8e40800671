//! The IMAP edge: a private connection to the operator's mailbox (TLS
//! from the first byte, or STARTTLS before the login — never a password
//! in the clear), the folder selected, new mail fetched by UID without
//! marking it, marked seen once taken, and IDLE to hear of the next.
//!
//! The server's certificate is checked against the web's roots and, for
//! a server of the operator's own CA, the certificates of the file
//! `SSL_CERT_FILE` names (read by the CLI, as OpenSSL reads it).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use imap::extensions::idle::SetReadTimeout;

use crate::config::mail::ImapServer;

/// How long a connection, a login or one answer may take.
const IO_TIMEOUT: Duration = Duration::from_secs(60);

/// A TLS stream over TCP, as the IMAP client reads and writes it.
pub struct Tls(rustls::StreamOwned<rustls::ClientConnection, TcpStream>);

impl Read for Tls {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.0.read(buf)
    }
}

impl Write for Tls {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

impl SetReadTimeout for Tls {
    fn set_read_timeout(&mut self, timeout: Option<Duration>) -> imap::Result<()> {
        self.0
            .sock
            .set_read_timeout(timeout)
            .map_err(imap::Error::Io)
    }
}

/// A logged-in session with the folder selected.
pub type Session = imap::Session<Tls>;

/// Why the mailbox could not be reached.
#[derive(Debug, thiserror::Error)]
pub enum Unreached {
    /// No connection.
    #[error("could not connect to {at}: {source}")]
    Connect {
        /// Where.
        at: String,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// The TLS handshake or the certificate failed.
    #[error("no private connection to {at}: {why}")]
    Tls {
        /// Where.
        at: String,
        /// What went wrong.
        why: String,
    },
    /// `imap://` and the server offers no STARTTLS: nothing is sent.
    #[error("{at} offers no STARTTLS: the password is not sent in the clear")]
    NoStartTls {
        /// Where.
        at: String,
    },
    /// The login was refused.
    #[error("the login as {user} was refused: {why}")]
    Login {
        /// Who.
        user: String,
        /// What the server said.
        why: String,
    },
    /// Anything the server said after the login.
    #[error("the server: {0}")]
    Imap(#[from] imap::Error),
    /// The mail ledger cannot be read: nothing is taken until it is
    /// mended (taking with a ledger read as empty would take every mail
    /// again).
    #[error("{0}")]
    Ledger(String),
}

/// The roots a server's certificate is checked against: the web's, and
/// those of `extra` (a PEM file, `SSL_CERT_FILE`).
fn roots(extra: Option<&Path>) -> Result<rustls::RootCertStore, String> {
    use rustls::pki_types::pem::PemObject;
    let mut roots = rustls::RootCertStore::empty();
    roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    if let Some(path) = extra {
        let certs = rustls::pki_types::CertificateDer::pem_file_iter(path)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        for cert in certs {
            let cert = cert.map_err(|e| format!("{}: {e}", path.display()))?;
            roots
                .add(cert)
                .map_err(|e| format!("{}: {e}", path.display()))?;
        }
    }
    Ok(roots)
}

fn handshake(server: &ImapServer, tcp: TcpStream, extra: Option<&Path>) -> Result<Tls, Unreached> {
    let at = format!("{}:{}", server.host, server.port);
    let tls = |why: String| Unreached::Tls {
        at: at.clone(),
        why,
    };
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| tls(e.to_string()))?
        .with_root_certificates(roots(extra).map_err(tls)?)
        .with_no_client_auth();
    let name = rustls::pki_types::ServerName::try_from(server.host.clone())
        .map_err(|e| tls(e.to_string()))?;
    let connection =
        rustls::ClientConnection::new(Arc::new(config), name).map_err(|e| tls(e.to_string()))?;
    let mut stream = rustls::StreamOwned::new(connection, tcp);
    // The handshake now, so a bad certificate is said as one.
    while stream.conn.is_handshaking() {
        stream
            .conn
            .complete_io(&mut stream.sock)
            .map_err(|e| tls(e.to_string()))?;
    }
    Ok(Tls(stream))
}

/// Connects to `server`, privately, and logs in as `user`; the greeting
/// read, nothing selected.
pub fn log_in(
    server: &ImapServer,
    user: &str,
    password: &str,
    extra_roots: Option<&Path>,
) -> Result<Session, Unreached> {
    let at = format!("{}:{}", server.host, server.port);
    let connect = |source| Unreached::Connect {
        at: at.clone(),
        source,
    };
    let tcp = std::net::ToSocketAddrs::to_socket_addrs(&(server.host.as_str(), server.port))
        .map_err(connect)?
        .find_map(|addr| TcpStream::connect_timeout(&addr, IO_TIMEOUT).ok())
        .ok_or_else(|| connect(std::io::Error::other("no address answered")))?;
    tcp.set_read_timeout(Some(IO_TIMEOUT)).map_err(connect)?;
    tcp.set_write_timeout(Some(IO_TIMEOUT)).map_err(connect)?;
    if server.starttls {
        starttls(&tcp, &at)?;
    }
    let mut client = imap::Client::new(handshake(server, tcp, extra_roots)?);
    if !server.starttls {
        client.read_greeting()?;
    }
    client
        .login(user, password)
        .map_err(|(e, _)| Unreached::Login {
            user: user.to_string(),
            why: e.to_string(),
        })
}

/// `imap://`: the greeting read, STARTTLS asked for and granted before
/// anything else is said (RFC 3501 6.2.1) — the client library offers no
/// STARTTLS before a login of its own, so these three lines are written
/// here. A server that does not offer it is refused: the password is
/// never sent in the clear.
fn starttls(tcp: &TcpStream, at: &str) -> Result<(), Unreached> {
    use std::io::BufRead;
    let io = |source| Unreached::Connect {
        at: at.to_string(),
        source,
    };
    let mut reader = std::io::BufReader::new(tcp);
    let mut writer = tcp;
    // Until the tagged answer; the lines before it.
    let mut answer = |tag: &str| -> Result<(Vec<String>, String), Unreached> {
        let mut lines = Vec::new();
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).map_err(io)? == 0 {
                return Err(io(std::io::ErrorKind::UnexpectedEof.into()));
            }
            match line.strip_prefix(tag) {
                Some(status) => return Ok((lines, status.trim().to_string())),
                None if tag.is_empty() => return Ok((lines, line.trim().to_string())),
                None => lines.push(line),
            }
        }
    };
    let (_, greeting) = answer("")?;
    if !greeting.starts_with("* OK") {
        return Err(Unreached::Tls {
            at: at.to_string(),
            why: format!("the server greeted with {greeting:?}"),
        });
    }
    writer.write_all(b"s1 CAPABILITY\r\n").map_err(io)?;
    let (said, _) = answer("s1 ")?;
    if !said
        .iter()
        .any(|l| l.to_ascii_uppercase().contains(" STARTTLS"))
    {
        return Err(Unreached::NoStartTls { at: at.to_string() });
    }
    writer.write_all(b"s2 STARTTLS\r\n").map_err(io)?;
    let (_, status) = answer("s2 ")?;
    if !status.starts_with("OK") {
        return Err(Unreached::NoStartTls { at: at.to_string() });
    }
    // Nothing may be left unread: what follows is the TLS handshake.
    if !reader.buffer().is_empty() {
        return Err(Unreached::Tls {
            at: at.to_string(),
            why: "the server sent more before the TLS handshake".into(),
        });
    }
    Ok(())
}

/// The folder, selected: its UIDVALIDITY, and whether the server has
/// IDLE.
pub fn select(session: &mut Session, folder: &str) -> Result<(u32, bool), Unreached> {
    let mailbox = session.select(folder)?;
    let idle = session.capabilities()?.has_str("IDLE");
    Ok((mailbox.uid_validity.unwrap_or(0), idle))
}

/// The UIDs at or after `from`, oldest first, each with its size.
pub fn new_since(session: &mut Session, from: u32) -> Result<Vec<(u32, u32)>, Unreached> {
    let found = session.uid_fetch(format!("{}:*", from.max(1)), "(UID RFC822.SIZE)")?;
    let mut uids: Vec<(u32, u32)> = found
        .iter()
        .filter_map(|f| Some((f.uid?, f.size.unwrap_or(0))))
        // `N:*` names the newest mail even when it is older than N.
        .filter(|(uid, _)| *uid >= from)
        .collect();
    uids.sort();
    Ok(uids)
}

/// Mail `uid` whole (or its headers alone, `headers_only`), without
/// marking it seen; `None` when it is gone.
pub fn fetch(
    session: &mut Session,
    uid: u32,
    headers_only: bool,
) -> Result<Option<Vec<u8>>, Unreached> {
    let what = if headers_only {
        "(UID BODY.PEEK[HEADER])"
    } else {
        "(UID BODY.PEEK[])"
    };
    let found = session.uid_fetch(uid.to_string(), what)?;
    let mail = found.iter().find(|f| f.uid == Some(uid));
    Ok(mail.and_then(|f| {
        if headers_only {
            f.header().map(<[u8]>::to_vec)
        } else {
            f.body().map(<[u8]>::to_vec)
        }
    }))
}

/// Marks the mail before `next` seen: each was taken and committed.
pub fn mark_taken(session: &mut Session, next: u32) -> Result<(), Unreached> {
    if next > 1 {
        session.uid_store(format!("1:{}", next - 1), "+FLAGS.SILENT (\\Seen)")?;
    }
    Ok(())
}

/// Waits for the server to say something changed (IDLE), at most `wait`.
pub fn idle(session: &mut Session, wait: Duration) -> Result<(), Unreached> {
    session
        .idle()
        .timeout(wait)
        .keepalive(false)
        .wait_while(imap::extensions::idle::stop_on_any)?;
    Ok(())
}
