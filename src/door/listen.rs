//! Where a door listens, and who may come in by each way.
//!
//! TCP cannot tell who is calling: any account on the host can reach a
//! loopback port. So a TCP door, loopback too, opens only with a bearer
//! token ([`super::token`]). A Unix socket (`unix:PATH`) can: it
//! is made with mode 0600 (bound under a temporary name, its mode set,
//! then renamed into place, so it is never reachable with another mode),
//! and each connection's peer is checked by its credentials (`SO_PEERCRED`):
//! only the account the door runs as gets an answer.

use std::net::SocketAddr;
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// Where the door listens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Listen {
    /// A TCP address (a token is required).
    Tcp(SocketAddr),
    /// A Unix socket, mode 0600, this account only.
    Unix(PathBuf),
}

impl std::str::FromStr for Listen {
    type Err = String;

    fn from_str(text: &str) -> Result<Listen, String> {
        if let Some(path) = text.strip_prefix("unix:") {
            let path = PathBuf::from(path);
            if !path.is_absolute() {
                return Err(format!(
                    "unix:{}: give the socket's absolute path, e.g. unix:/run/hearth/mcp.sock",
                    path.display()
                ));
            }
            return Ok(Listen::Unix(path));
        }
        text.parse().map(Listen::Tcp).map_err(|_| {
            format!(
                "{text:?} is neither ADDR:PORT (e.g. 127.0.0.1:8765) nor unix:PATH \
                 (e.g. unix:/run/hearth/mcp.sock)"
            )
        })
    }
}

impl std::fmt::Display for Listen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Listen::Tcp(addr) => write!(f, "{addr}"),
            Listen::Unix(path) => write!(f, "unix:{}", path.display()),
        }
    }
}

impl Listen {
    /// The address of the door's `path` here: `http://ADDR/PATH`, or the
    /// socket (whose requests name their own path).
    pub fn url(&self, path: &str) -> String {
        match self {
            Listen::Tcp(addr) => format!("http://{addr}{path}"),
            Listen::Unix(_) => self.to_string(),
        }
    }
}

/// The runtime a door serves on: two worker threads (a door serves one
/// operator and a few clients; rendering and tools run on the blocking
/// pool).
pub fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
}

/// Binds a Unix socket at `path` with mode 0600. A socket left there by a
/// door that died is replaced; anything else at `path` is refused.
pub fn bind_unix(path: &Path) -> std::io::Result<tokio::net::UnixListener> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_socket() => {
            if std::os::unix::net::UnixStream::connect(path).is_ok() {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::AddrInUse,
                    "another door is serving on this socket",
                ));
            }
            std::fs::remove_file(path)?;
        }
        Ok(_) => {
            return Err(std::io::Error::new(
                std::io::ErrorKind::AlreadyExists,
                "a file that is not a socket is there; it is left alone",
            ))
        }
        Err(_) => {}
    }
    let name = path
        .file_name()
        .map_or_else(Default::default, |n| n.to_string_lossy().into_owned());
    let staged = path.with_file_name(format!(".{name}.{}", std::process::id()));
    let _ = std::fs::remove_file(&staged);
    let listener = tokio::net::UnixListener::bind(&staged)?;
    let placed = std::fs::set_permissions(&staged, std::fs::Permissions::from_mode(0o600))
        .and_then(|()| std::fs::rename(&staged, path));
    if let Err(e) = placed {
        let _ = std::fs::remove_file(&staged);
        return Err(e);
    }
    Ok(listener)
}

/// Whether the process at the other end of `stream` runs as this account.
pub fn same_account(stream: &tokio::net::UnixStream) -> bool {
    // SAFETY: geteuid(2) has no preconditions and cannot fail.
    #[allow(unsafe_code)]
    let me = unsafe { libc::geteuid() };
    stream.peer_cred().is_ok_and(|cred| cred.uid() == me)
}

/// One accepted connection, whichever the listener.
pub trait Conn: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static {}
impl<T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static> Conn for T {}

/// A bound door: TCP, or a Unix socket of this account's.
pub enum Listener {
    /// Over TCP.
    Tcp(tokio::net::TcpListener),
    /// On a Unix socket (mode 0600).
    Unix(tokio::net::UnixListener),
}

impl Listener {
    /// Binds `listen` (a Unix socket as [`bind_unix`] makes it): the
    /// listener, and over TCP the address bound (a port of 0 is the
    /// system's choice).
    pub async fn bind(listen: &Listen) -> std::io::Result<(Listener, Option<SocketAddr>)> {
        Ok(match listen {
            Listen::Tcp(addr) => {
                let tcp = tokio::net::TcpListener::bind(addr).await?;
                let bound = tcp.local_addr()?;
                (Listener::Tcp(tcp), Some(bound))
            }
            Listen::Unix(path) => (Listener::Unix(bind_unix(path)?), None),
        })
    }

    /// The next connection to serve (`None`: one refused at the door, a
    /// socket peer of another account, said in the log as `door`'s), or
    /// why none could be accepted.
    pub async fn accept(&self, door: &str) -> std::io::Result<Option<Box<dyn Conn>>> {
        Ok(match self {
            Listener::Tcp(tcp) => Some(Box::new(tcp.accept().await?.0)),
            Listener::Unix(unix) => {
                let stream = unix.accept().await?.0;
                if same_account(&stream) {
                    Some(Box::new(stream))
                } else {
                    tracing::warn!(
                        "{door} over a Unix socket: a client of another account was refused"
                    );
                    None
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_door_is_an_address_or_an_absolute_socket_path() {
        assert_eq!(
            "127.0.0.1:8765".parse::<Listen>(),
            Ok(Listen::Tcp("127.0.0.1:8765".parse().unwrap()))
        );
        assert_eq!(
            "unix:/run/h.sock".parse::<Listen>(),
            Ok(Listen::Unix("/run/h.sock".into()))
        );
        assert!("unix:h.sock".parse::<Listen>().is_err());
        assert!("localhost".parse::<Listen>().is_err());
    }
}
