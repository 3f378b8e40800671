//! The MCP door over HTTP (`hearth mcp --http ADDR`): the same tools as on
//! stdio, served with the specification's Streamable HTTP transport (rmcp's
//! service, hyper underneath), so a client on another machine needs no ssh.
//!
//! Who may knock: a loopback address serves this host's clients (and rmcp
//! refuses a `Host` that is not loopback, against DNS rebinding); any other
//! address needs a bearer token, which the operator gives in the
//! environment, and a request without it is answered 401 before anything
//! else reads it. The token is compared in constant time and never logged.
//! A request body is at most [`guard::MAX_LINE`], as a line on stdio is.
//! Many clients at once; every write goes through the home's commit lock,
//! as on stdio.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};

use super::serve::Handler;
use super::{guard, Doors};

/// The environment variable that holds the bearer token.
pub const TOKEN_VARIABLE: &str = "HEARTH_MCP_TOKEN";

/// The path the door answers on.
pub const PATH: &str = "/mcp";

/// Why the door would not open.
#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    /// A non-loopback address without a token.
    #[error(
        "{addr} is not a loopback address, and {TOKEN_VARIABLE} is not set: anyone who can \
         reach it could read the memory"
    )]
    NoToken {
        /// The address asked for.
        addr: SocketAddr,
    },
    /// The address could not be bound or served.
    #[error("could not serve MCP on {addr}: {source}")]
    Io {
        /// The address.
        addr: SocketAddr,
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
                 `Authorization: Bearer …`), or serve on 127.0.0.1 and reach it through ssh"
            ),
            HttpError::Io { source, .. } => crate::io_hint::kind_hint(source),
        }
    }
}

/// Whether a request may pass: with no token, every request (the address
/// is loopback); with one, only those that carry it.
pub fn authorized(header: Option<&[u8]>, token: Option<&str>) -> bool {
    let Some(token) = token else {
        return true;
    };
    let Some(given) = header.and_then(|h| h.strip_prefix(b"Bearer ")) else {
        return false;
    };
    // Constant time in the token's length: no byte is learned by timing.
    given.len() == token.len()
        && given
            .iter()
            .zip(token.as_bytes())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
}

type Body = http_body_util::combinators::BoxBody<Bytes, Infallible>;

fn refused(status: StatusCode, text: &str) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from(text.to_string())).boxed());
    *response.status_mut() = status;
    if status == StatusCode::UNAUTHORIZED {
        response.headers_mut().insert(
            hyper::header::WWW_AUTHENTICATE,
            hyper::header::HeaderValue::from_static("Bearer"),
        );
    }
    response
}

/// Serves `doors` on `addr` until the process is stopped; `listening` is
/// told the address bound (a port of 0 is chosen by the system).
pub fn serve(
    doors: Doors,
    addr: SocketAddr,
    token: Option<String>,
    listening: impl FnOnce(SocketAddr),
) -> Result<(), HttpError> {
    if token.is_none() && !addr.ip().is_loopback() {
        return Err(HttpError::NoToken { addr });
    }
    let io = |source| HttpError::Io { addr, source };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(io)?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(addr).await.map_err(io)?;
        listening(listener.local_addr().map_err(io)?);
        let doors = Arc::new(doors);
        let mut config = StreamableHttpServerConfig::default();
        if !addr.ip().is_loopback() {
            // Reached by its public name, guarded by the token instead.
            config = config.disable_allowed_hosts();
        }
        let service = StreamableHttpService::new(
            move || Ok(Handler::new(Arc::clone(&doors))),
            Arc::new(LocalSessionManager::default()),
            config,
        );
        let token: Arc<Option<String>> = Arc::new(token);
        loop {
            let (stream, _) = match listener.accept().await {
                Ok(accepted) => accepted,
                Err(e) => {
                    tracing::warn!("MCP over HTTP: a connection was not accepted: {e}");
                    continue;
                }
            };
            let (service, token) = (service.clone(), Arc::clone(&token));
            tokio::spawn(async move {
                let answer = hyper::service::service_fn(move |request: Request<Incoming>| {
                    let (service, token) = (service.clone(), Arc::clone(&token));
                    async move { Ok::<_, Infallible>(answer(service, &token, request).await) }
                });
                let io = hyper_util::rt::TokioIo::new(stream);
                if let Err(e) = hyper::server::conn::http1::Builder::new()
                    .serve_connection(io, answer)
                    .await
                {
                    tracing::debug!("MCP over HTTP: a connection ended: {e}");
                }
            });
        }
    })
}

/// One request: the token, the path and the size checked, then the SDK.
async fn answer(
    mut service: StreamableHttpService<Handler, LocalSessionManager>,
    token: &Option<String>,
    request: Request<Incoming>,
) -> Response<Body> {
    use tower_service::Service;
    let header = request.headers().get(hyper::header::AUTHORIZATION);
    if !authorized(header.map(|h| h.as_bytes()), token.as_deref()) {
        return refused(StatusCode::UNAUTHORIZED, "a bearer token is required\n");
    }
    if request.uri().path() != PATH {
        return refused(StatusCode::NOT_FOUND, "the MCP door is at /mcp\n");
    }
    let (parts, body) = request.into_parts();
    let limited = Request::from_parts(parts, Limited::new(body, guard::MAX_LINE));
    match service.call(limited).await {
        Ok(response) => response,
        Err(never) => match never {},
    }
}

#[cfg(test)]
mod tests {
    use super::authorized;

    #[test]
    fn a_token_is_needed_when_one_is_set_and_must_match_whole() {
        assert!(authorized(None, None), "loopback without a token");
        assert!(authorized(Some(b"Bearer s3cret"), Some("s3cret")));
        assert!(!authorized(None, Some("s3cret")));
        assert!(!authorized(Some(b"Bearer s3cre"), Some("s3cret")));
        assert!(!authorized(Some(b"Bearer s3cretX"), Some("s3cret")));
        assert!(
            !authorized(Some(b"s3cret"), Some("s3cret")),
            "the scheme is said"
        );
        assert!(!authorized(Some(b"Basic s3cret"), Some("s3cret")));
    }
}
