//! `hearth web`: the operator's page — what the agent did, what it
//! costs, what waits — readable from a phone, and safer than the pages
//! rivals ship (their advisories: dashboards open without auth, a URL
//! parameter that chose where the page connected, DNS rebinding, stored
//! script from raw markdown).
//!
//! Who may read it ([`guard`], [`session`]): over TCP — loopback too, since
//! the operator's own browser and any account on the host reach it — it
//! opens only with `HEARTH_WEB_TOKEN` set; a browser logs in with the
//! token at `/login` and gets a session cookie, a script sends `Authorization:
//! Bearer`. On a Unix socket (mode 0600, this account alone, for `ssh -L`)
//! the token is optional. Every request must be addressed to a name the
//! page serves (`Host`), every POST must come from the page itself, and
//! every answer forbids frames, sniffing, referrers and any script.
//!
//! What it shows ([`pages`]) comes from the read room (`crate::view`) and
//! the home's records, escaped. Acts — accept or reject a proposal,
//! approve or decline a request, acknowledge an incident, run a job now —
//! are taken only with `--allow-act` ([`acts`]), each on the version the
//! page showed, as the same operator's commit the CLI makes. With
//! `--homes DIR` one page serves every home under DIR ([`homes`]). No URL
//! parameter chooses anything the server fetches.

pub mod acts;
mod events;
mod form;
pub mod guard;
pub mod homes;
mod login;
pub mod pages;
mod routes;
pub mod session;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Method, Request, Response, StatusCode};

use crate::clock::Clock;
use crate::home::Home;
use crate::mcp::listen::{self, Body, Listen, Listener};
use guard::Served;
use homes::{Addressed, Homes};
use session::Sessions;

/// The environment variable that holds the token.
pub const TOKEN_VARIABLE: &str = "HEARTH_WEB_TOKEN";

/// The largest request body read (a login form): anything larger is 413.
const MAX_BODY: usize = 4096;

/// Connections served at once; the rest wait in the kernel's queue.
const MAX_CONNECTIONS: usize = 64;

/// A request's headers must have come within this.
const HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// Why the page would not open.
#[derive(Debug, thiserror::Error)]
pub enum WebError {
    /// A TCP address without a token.
    #[error(
        "{addr}: {TOKEN_VARIABLE} is not set, and over TCP any account on this host, and any \
         page the operator's browser opens, could read the agent's memory"
    )]
    NoToken {
        /// The address asked for.
        addr: std::net::SocketAddr,
    },
    /// A token short enough to be guessed.
    #[error(
        "{TOKEN_VARIABLE} is {chars} characters long; the page takes a token of at least {} \
         (128 bits as hex), which no rate a network allows can guess",
        session::MIN_TOKEN_CHARS
    )]
    WeakToken {
        /// How long the token given is.
        chars: usize,
    },
    /// The address could not be bound or served.
    #[error("could not serve the page on {at}: {source}")]
    Io {
        /// Where.
        at: String,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
}

impl WebError {
    /// What to do about it.
    pub fn hint(&self) -> String {
        match self {
            WebError::NoToken { .. } => format!(
                "export {TOKEN_VARIABLE}=<a long random string> (the login page asks for it), \
                 or serve this account alone on a Unix socket and reach it with ssh -L: \
                 --listen unix:/run/user/$UID/hearth-web.sock"
            ),
            WebError::WeakToken { .. } => format!(
                "make a new one: export {TOKEN_VARIABLE}=$(openssl rand -hex 32), in the \
                 page's environment file, and log in with it"
            ),
            WebError::Io { source, .. } => crate::io_hint::kind_hint(source),
        }
    }
}

/// How the page is served.
#[derive(Debug, Clone)]
pub struct WebOptions {
    /// Where it listens.
    pub listen: Listen,
    /// The token (required over TCP).
    pub token: Option<String>,
    /// Public names a proxy forwards under (`--host agent.example`).
    pub hosts: Vec<String>,
    /// Cookies marked Secure (served as https behind a proxy).
    pub secure_cookies: bool,
    /// Acts are taken from the page (`--allow-act`): accept or reject a
    /// proposal, approve or decline a request, acknowledge an incident,
    /// run a job now. Without it every act is refused.
    pub allow_act: bool,
}

/// The page as it serves: what every request shares.
struct Page {
    homes: Homes,
    clock: Clock,
    token: Option<String>,
    served: Served,
    secure_cookies: bool,
    allow_act: bool,
    sessions: Mutex<Sessions>,
    /// Event streams open now.
    streams: std::sync::atomic::AtomicUsize,
}

/// Serves the page of `home` until the process is stopped; `listening` is
/// told where (a port of 0 is chosen by the system).
pub fn serve(
    homes: Homes,
    clock: Clock,
    options: WebOptions,
    listening: impl FnOnce(String),
) -> Result<(), WebError> {
    if let (Listen::Tcp(addr), None) = (&options.listen, &options.token) {
        return Err(WebError::NoToken { addr: *addr });
    }
    if let Some(chars) = options
        .token
        .as_deref()
        .map(|t| t.chars().count())
        .filter(|n| *n < session::MIN_TOKEN_CHARS)
    {
        return Err(WebError::WeakToken { chars });
    }
    let at = options.listen.address();
    let io = |source| WebError::Io {
        at: at.clone(),
        source,
    };
    let runtime = listen::runtime().map_err(io)?;
    runtime.block_on(async {
        let (listener, bound) = Listener::bind(&options.listen).await.map_err(io)?;
        let (served, shown) = match bound {
            Some(addr) => (
                Served::tcp(addr.ip(), addr.port(), &options.hosts),
                format!("http://{addr}/"),
            ),
            None => (Served::unix(&options.hosts), at.clone()),
        };
        listening(shown);
        if options.allow_act {
            tracing::warn!(
                "the page takes acts (--allow-act): accept, reject, approve, decline, \
                 acknowledge and run jobs from it"
            );
        }
        let page = Arc::new(Page {
            homes,
            clock,
            token: options.token.clone(),
            served,
            secure_cookies: options.secure_cookies,
            allow_act: options.allow_act,
            sessions: Mutex::new(Sessions::default()),
            streams: Default::default(),
        });
        crate::mcp::connections::serve_connections(
            &listener,
            "the page",
            MAX_CONNECTIONS,
            HEADER_TIMEOUT,
            move |request| answer(Arc::clone(&page), request),
        )
        .await;
        Ok(())
    })
}

fn respond(status: StatusCode, content_type: &str, body: String) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from(body)).boxed());
    *response.status_mut() = status;
    let headers = response.headers_mut();
    for (name, value) in guard::HEADERS {
        headers.insert(name, hyper::header::HeaderValue::from_static(value));
    }
    if let Ok(value) = hyper::header::HeaderValue::from_str(content_type) {
        headers.insert(hyper::header::CONTENT_TYPE, value);
    }
    response
}

fn text(status: StatusCode, body: &str) -> Response<Body> {
    respond(status, "text/plain; charset=utf-8", format!("{body}\n"))
}

fn html(status: StatusCode, markup: maud::Markup) -> Response<Body> {
    respond(status, "text/html; charset=utf-8", markup.into_string())
}

fn see_other(to: &str, cookie: Option<String>) -> Response<Body> {
    let mut response = respond(
        StatusCode::SEE_OTHER,
        "text/plain; charset=utf-8",
        String::new(),
    );
    let headers = response.headers_mut();
    if let Ok(value) = hyper::header::HeaderValue::from_str(to) {
        headers.insert(hyper::header::LOCATION, value);
    }
    if let Some(value) = cookie.and_then(|c| hyper::header::HeaderValue::from_str(&c).ok()) {
        headers.insert(hyper::header::SET_COOKIE, value);
    }
    response
}

/// A form's body, at most [`MAX_BODY`] (an oversized one read on and
/// dropped, bounded, so the browser reads the 413), or the answer that
/// refuses it; `what` names the form in that answer.
async fn form_body(request: Request<Incoming>, what: &str) -> Result<Bytes, Response<Body>> {
    let declared = request
        .headers()
        .get(hyper::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    crate::mcp::body::read_body(request.into_body(), declared, MAX_BODY)
        .await
        .map_err(|refused| match refused {
            crate::mcp::body::BodyRefused::TooLarge => text(
                StatusCode::PAYLOAD_TOO_LARGE,
                &format!("{what} is a short form"),
            ),
            crate::mcp::body::BodyRefused::Unreadable => {
                text(StatusCode::BAD_REQUEST, "the form could not be read")
            }
        })
}

fn header(request: &Request<Incoming>, name: hyper::header::HeaderName) -> Option<&str> {
    request.headers().get(name).and_then(|v| v.to_str().ok())
}

/// Why a POST is refused before anything else is read, if it is: a form
/// from another origin (403), or a body that is not a form (415).
fn refuse_post(
    page: &Page,
    request: &Request<Incoming>,
    host: Option<&str>,
) -> Option<Response<Body>> {
    let origin = header(request, hyper::header::ORIGIN);
    let site = request
        .headers()
        .get("sec-fetch-site")
        .and_then(|v| v.to_str().ok());
    if !guard::same_origin(origin, site, host, page.secure_cookies) {
        return Some(text(
            StatusCode::FORBIDDEN,
            "a form from another page is refused",
        ));
    }
    let content_type = header(request, hyper::header::CONTENT_TYPE);
    // A POST with no body (a logout, a bare button) has no type.
    let headers = request.headers();
    let empty = headers
        .get(hyper::header::CONTENT_LENGTH)
        .is_none_or(|l| l.as_bytes() == b"0")
        && headers.get(hyper::header::TRANSFER_ENCODING).is_none();
    let no_body = empty && content_type.is_none();
    if !(guard::is_form(content_type) || no_body) {
        return Some(text(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "a decision is a form (application/x-www-form-urlencoded)",
        ));
    }
    None
}

/// One request: the name it was sent to, its origin (for a POST) and its
/// credentials checked before anything of the home is read.
async fn answer(page: Arc<Page>, request: Request<Incoming>) -> Response<Body> {
    let hosts: Vec<&str> = request
        .headers()
        .get_all(hyper::header::HOST)
        .iter()
        .map(|h| h.to_str().unwrap_or("\u{fffd}"))
        .collect();
    let Some(host) = guard::one_host(&hosts, request.uri().authority().map(|a| a.as_str())) else {
        return text(
            StatusCode::BAD_REQUEST,
            "a request names its host once: one Host header, and a target in absolute form \
             only with the same name",
        );
    };
    let host = host.map(str::to_string);
    if !page.served.allows(host.as_deref()) {
        return text(
            StatusCode::MISDIRECTED_REQUEST,
            "this page does not serve that name (a rebound DNS name, or a proxy's name not \
             given with --host)",
        );
    }
    let method = request.method().clone();
    if method == Method::POST {
        if let Some(refused) = refuse_post(&page, &request, host.as_deref()) {
            return refused;
        }
    } else if method != Method::GET && method != Method::HEAD {
        return text(StatusCode::METHOD_NOT_ALLOWED, "GET, or a form's POST");
    }
    let path = request.uri().path().to_string();
    match (method.as_str(), path.as_str()) {
        (_, "/style.css") => return respond(StatusCode::OK, "text/css", pages::STYLE.to_string()),
        (_, "/live.js") => {
            return respond(
                StatusCode::OK,
                "text/javascript; charset=utf-8",
                pages::LIVE_JS.to_string(),
            )
        }
        ("GET", "/login") => {
            let next = form::value(request.uri().query().unwrap_or("").as_bytes(), "next");
            let next = next.as_deref().and_then(guard::local_path);
            return html(StatusCode::OK, pages::login(false, next));
        }
        ("POST", "/login") => return login::log_in(&page, request).await,
        ("POST", "/logout") => return login::log_out(&page, &request),
        _ if !login::signed_in(&page, &request).await => return login::to_login(&request),
        _ => {}
    }
    let (home, base, rest) = match home_of(&page, &path).await {
        Ok(addressed) => addressed,
        Err(answered) => return answered,
    };
    let query = request.uri().query().unwrap_or("").to_string();
    match (method.as_str(), rest.as_str()) {
        ("GET", "/events") => events::stream(page, home),
        ("GET" | "HEAD", _) => routes::view(page, home, base, rest, query).await,
        ("POST", _) if page.allow_act => routes::act(page, home, base, rest, request).await,
        _ => text(
            StatusCode::FORBIDDEN,
            "the page is read-only (started without --allow-act): decide on the server \
             (`hearth proposals accept N`)",
        ),
    }
}

/// The home `path` is about, where its pages are, and the page within it
/// (decoded once: the page's own names are percent-encoded in its links);
/// or the answer itself — the index of `--homes`, or no such home.
async fn home_of(page: &Arc<Page>, path: &str) -> Result<(Home, String, String), Response<Body>> {
    let (home, base, rest) = match page.homes.resolve(path) {
        Addressed::Index => {
            let homes = page.homes.clone();
            let now = page.clock.now();
            let listed =
                tokio::task::spawn_blocking(move || pages::index(&homes.list(), now)).await;
            return Err(match listed {
                Ok(markup) => html(StatusCode::OK, markup),
                Err(e) => text(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    &format!("the page failed: {e}"),
                ),
            });
        }
        Addressed::Missing => {
            return Err(text(StatusCode::NOT_FOUND, "there is no such home here"))
        }
        Addressed::Home { home, base, rest } => (home, base, rest),
    };
    match percent_encoding::percent_decode_str(&rest).decode_utf8() {
        Ok(rest) => Ok((home, base, rest.into_owned())),
        Err(_) => Err(text(StatusCode::NOT_FOUND, "there is no such page")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_tool_is_ever_given_a_doors_token() {
        assert!(!crate::tools::passable(TOKEN_VARIABLE));
        assert!(!crate::tools::passable(crate::mcp::http::TOKEN_VARIABLE));
        assert!(crate::tools::passable("FEED_URL"));
    }
}
