//! The MCP door over HTTP (`hearth mcp --http ADDR` or `--http
//! unix:PATH`): the same tools as on stdio, served with the
//! specification's Streamable HTTP transport (rmcp's service, hyper
//! underneath), so a client on another machine needs no ssh.
//!
//! Who may knock (`crate::door`): the door is its operator's. Over TCP —
//! loopback too, since any account on the host can reach a loopback port —
//! every request carries a bearer token the operator gives in the
//! environment, or it is answered 401 before anything else reads it; the
//! token is compared in constant time and never logged. On a Unix socket
//! (mode 0600) only the account the door runs as is answered. rmcp refuses
//! a `Host` that is not loopback on loopback, and any request a web page
//! sent (it carries an `Origin`) is refused with 403, against DNS
//! rebinding and pages the operator happens to open.
//!
//! What one client can hold ([`DoorLimits`]): sessions are capped (503 past the
//! cap) and expire when idle; connections are capped below the descriptor
//! limit (the rest wait in the kernel's queue, and an accept that fails is
//! backed off and logged once, not in a loop); headers are read under a
//! timeout; a body over [`guard::MAX_LINE`] is answered 413 and never held
//! whole. Many clients at once; every write goes through the home's commit
//! lock, as on stdio.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Request, State};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::Router;
use http::StatusCode;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};

use super::serve::Handler;
use super::{guard, Doors};
use crate::door::{self, Listen, Listener};

/// The path the door answers on.
pub const PATH: &str = "/mcp";

/// The environment variable that holds the bearer token.
pub const TOKEN_VARIABLE: &str = "HEARTH_MCP_TOKEN";

/// Why the door would not open.
#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    /// A TCP address without a token.
    #[error(
        "{addr}: {TOKEN_VARIABLE} is not set, and over TCP any account on this host (or \
         beyond, off loopback) could read the memory"
    )]
    NoToken {
        /// The address asked for.
        addr: SocketAddr,
    },
    /// The address could not be bound or served.
    #[error("could not serve MCP on {at}: {source}")]
    Io {
        /// Where.
        at: String,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
}

impl HttpError {
    /// What to do about it.
    pub fn hint(&self) -> String {
        match self {
            HttpError::NoToken { .. } => format!(
                "export {TOKEN_VARIABLE}=<a long random string> (clients send it as \
                 `Authorization: Bearer …`), or serve this account alone on a Unix socket: \
                 --http unix:/run/user/$UID/hearth-mcp.sock"
            ),
            HttpError::Io { source, .. } => crate::io_hint::kind_hint(source),
        }
    }
}

/// What one client can hold of the door.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DoorLimits {
    /// Sessions open at once; a new one past it is answered 503.
    pub max_sessions: usize,
    /// A session unused this long is closed.
    pub session_idle: Duration,
    /// Connections served at once (the rest wait to be accepted); kept
    /// below half the descriptor limit.
    pub max_connections: usize,
    /// A request's headers must have come within this.
    pub header_timeout: Duration,
}

impl Default for DoorLimits {
    fn default() -> DoorLimits {
        DoorLimits {
            max_sessions: 64,
            session_idle: Duration::from_secs(300),
            max_connections: 256,
            header_timeout: Duration::from_secs(10),
        }
    }
}

impl DoorLimits {
    /// These limits, the connections kept below half of `descriptors`
    /// (the process's limit on open files).
    pub fn within(self, descriptors: u64) -> DoorLimits {
        let half = usize::try_from(descriptors / 2)
            .unwrap_or(usize::MAX)
            .max(8);
        DoorLimits {
            max_connections: self.max_connections.min(half),
            ..self
        }
    }
}

fn refused(status: StatusCode, text: &str) -> Response {
    let mut response = (status, text.to_string()).into_response();
    if status == StatusCode::UNAUTHORIZED {
        response.headers_mut().insert(
            http::header::WWW_AUTHENTICATE,
            http::HeaderValue::from_static("Bearer"),
        );
    }
    response
}

type Service = StreamableHttpService<Handler, LocalSessionManager>;

/// Serves `doors` at `listen` until the process is stopped; `listening` is
/// told where it listens (a port of 0 is chosen by the system).
pub fn serve(
    doors: Doors,
    listen: &Listen,
    token: Option<String>,
    limits: DoorLimits,
    listening: impl FnOnce(String),
) -> Result<(), HttpError> {
    if let (Listen::Tcp(addr), None) = (listen, &token) {
        return Err(HttpError::NoToken { addr: *addr });
    }
    let io = |source| HttpError::Io {
        at: listen.url(PATH),
        source,
    };
    let runtime = door::runtime().map_err(io)?;
    runtime.block_on(async move {
        let (listener, bound) = Listener::bind(listen).await.map_err(io)?;
        let (shown, loopback) = match bound {
            Some(addr) => (format!("http://{addr}{PATH}"), addr.ip().is_loopback()),
            None => (listen.to_string(), true),
        };
        listening(shown);
        let mut config = StreamableHttpServerConfig::default();
        if !loopback {
            // Reached by its public name, guarded by the token instead.
            config = config.disable_allowed_hosts();
        }
        let mut sessions = LocalSessionManager::default();
        sessions.session_config.keep_alive = Some(limits.session_idle);
        let sessions = Arc::new(sessions);
        let doors = Arc::new(doors);
        let service = StreamableHttpService::new(
            move || Ok(Handler::new(Arc::clone(&doors))),
            Arc::clone(&sessions),
            config,
        );
        let door = Arc::new(OpenDoor {
            sessions,
            token,
            limits,
        });
        let app = router(service, door);
        door::connections::serve_connections(
            &listener,
            "MCP over HTTP",
            limits.max_connections,
            limits.header_timeout,
            app,
        )
        .await;
        Ok(())
    })
}

/// The door as it serves: what its guards share.
struct OpenDoor {
    sessions: Arc<LocalSessionManager>,
    token: Option<String>,
    limits: DoorLimits,
}

/// The door: rmcp's service at [`PATH`], behind its guards in the order
/// they run — a web page's request refused, the token, then the body
/// bounded and the session cap.
fn router(service: Service, door: Arc<OpenDoor>) -> Router {
    Router::new()
        .route_service(PATH, service)
        .fallback(|| async { refused(StatusCode::NOT_FOUND, "the MCP door is at /mcp\n") })
        .layer(middleware::from_fn_with_state(
            Arc::clone(&door),
            bounded_and_capped,
        ))
        .layer(middleware::from_fn_with_state(door, with_token))
        .layer(middleware::from_fn(from_a_program))
}

/// A browser names the page that sent a request; this door serves no
/// page, so any `Origin` is a foreign one (a page the operator opened, a
/// rebound name): refused before anything else is read, as the MCP
/// specification's Streamable HTTP transport requires. Programs send
/// none.
async fn from_a_program(request: Request, next: Next) -> Response {
    if request.headers().contains_key(http::header::ORIGIN) {
        return refused(
            StatusCode::FORBIDDEN,
            "a request from a web page (it carries an Origin) is refused: the MCP door is for \
             programs\n",
        );
    }
    next.run(request).await
}

/// The bearer token, when the door has one.
async fn with_token(State(door): State<Arc<OpenDoor>>, request: Request, next: Next) -> Response {
    let header = request.headers().get(http::header::AUTHORIZATION);
    if !door::token::authorized(header.map(|h| h.as_bytes()), door.token.as_deref()) {
        return refused(StatusCode::UNAUTHORIZED, "a bearer token is required\n");
    }
    next.run(request).await
}

/// The body whole and bounded (an oversized one read on before the 413,
/// so a client still sending reads the answer instead of a reset), and no
/// new session past the cap.
async fn bounded_and_capped(
    State(door): State<Arc<OpenDoor>>,
    request: Request,
    next: Next,
) -> Response {
    let (parts, bytes) = match door::body::read_request(request, guard::MAX_LINE).await {
        Ok(read) => read,
        Err(door::body::BodyRefused::TooLarge) => return too_large(),
        Err(door::body::BodyRefused::Unreadable) => {
            return refused(StatusCode::BAD_REQUEST, "the body could not be read\n")
        }
    };
    let opens_session =
        parts.method == http::Method::POST && !parts.headers.contains_key("mcp-session-id");
    if opens_session && door.sessions.sessions.read().await.len() >= door.limits.max_sessions {
        return refused(
            StatusCode::SERVICE_UNAVAILABLE,
            "too many MCP sessions are open; close one (DELETE) or wait for one to go idle\n",
        );
    }
    let closes_session = parts.method == http::Method::DELETE;
    let mut response = next
        .run(Request::from_parts(parts, axum::body::Body::from(bytes)))
        .await;
    // rmcp answers a session's DELETE with 202; the specification's
    // clients (the Python SDK) take 200 or 204 as closed, and log
    // "Session termination failed: 202" on every exit otherwise.
    if closes_session && response.status() == StatusCode::ACCEPTED {
        *response.status_mut() = StatusCode::OK;
    }
    response
}

fn too_large() -> Response {
    refused(
        StatusCode::PAYLOAD_TOO_LARGE,
        &format!("a request body is at most {} bytes\n", guard::MAX_LINE),
    )
}
