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
pub mod pages;
pub mod session;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::{Method, Request, Response, StatusCode};

use crate::clock::Clock;
use crate::home::Home;
use crate::mcp::listen::{self, Body, Listen, Listener};
use guard::Served;
use homes::{Addressed, Homes};
use session::{Login, Sessions};

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
        listen::serve_connections(
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

fn header(request: &Request<Incoming>, name: hyper::header::HeaderName) -> Option<&str> {
    request.headers().get(name).and_then(|v| v.to_str().ok())
}

/// One request: the name it was sent to, its origin (for a POST) and its
/// credentials checked before anything of the home is read.
async fn answer(page: Arc<Page>, request: Request<Incoming>) -> Response<Body> {
    let host = header(&request, hyper::header::HOST).map(str::to_string);
    if !page.served.allows(host.as_deref()) {
        return text(
            StatusCode::MISDIRECTED_REQUEST,
            "this page does not serve that name (a rebound DNS name, or a proxy's name not \
             given with --host)",
        );
    }
    let method = request.method().clone();
    if method == Method::POST {
        let origin = header(&request, hyper::header::ORIGIN);
        let site = request
            .headers()
            .get("sec-fetch-site")
            .and_then(|v| v.to_str().ok());
        if !guard::same_origin(origin, site, host.as_deref()) {
            return text(StatusCode::FORBIDDEN, "a form from another page is refused");
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
            return html(StatusCode::OK, pages::login(false, false, next));
        }
        ("POST", "/login") => return log_in(&page, request).await,
        ("POST", "/logout") => {
            let cookie = header(&request, hyper::header::COOKIE).map(str::to_string);
            if let Some(id) = session::from_cookie(cookie.as_deref()) {
                page.sessions.lock().expect("sessions").logout(id);
            }
            return see_other("/login", None);
        }
        _ if !signed_in(&page, &request) => {
            // A link from a notice opens where it led once logged in.
            let asked = request.uri().path_and_query().map_or("/", |p| p.as_str());
            let to = match (method == Method::GET, guard::local_path(asked)) {
                (true, Some(path)) if path != "/" => format!(
                    "/login?next={}",
                    percent_encoding::utf8_percent_encode(path, percent_encoding::NON_ALPHANUMERIC)
                ),
                _ => "/login".to_string(),
            };
            return see_other(&to, None);
        }
        _ => {}
    }
    let (home, base, rest) = match page.homes.resolve(&path) {
        Addressed::Index => {
            let homes = page.homes.clone();
            let now = page.clock.now();
            let listed =
                tokio::task::spawn_blocking(move || pages::index(&homes.list(), now)).await;
            return match listed {
                Ok(markup) => html(StatusCode::OK, markup),
                Err(e) => text(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    &format!("the page failed: {e}"),
                ),
            };
        }
        Addressed::Missing => return text(StatusCode::NOT_FOUND, "there is no such home here"),
        Addressed::Home { home, base, rest } => (home, base, rest),
    };
    // The page's own names (a memory file's, a job's) are percent-encoded
    // in its links: decoded once, here.
    let Ok(rest) = percent_encoding::percent_decode_str(&rest)
        .decode_utf8()
        .map(|r| r.into_owned())
    else {
        return text(StatusCode::NOT_FOUND, "there is no such page");
    };
    let query = request.uri().query().unwrap_or("").to_string();
    match (method.as_str(), rest.as_str()) {
        ("GET", "/events") => events::stream(page, home),
        ("GET" | "HEAD", _) => view(page, home, base, rest, query).await,
        ("POST", _) if page.allow_act => act(page, home, base, rest, request).await,
        _ => text(
            StatusCode::FORBIDDEN,
            "the page is read-only (started without --allow-act): decide on the server \
             (`hearth proposals accept N`)",
        ),
    }
}

/// A POST of `home`'s (`/proposals/N/accept`, `/requests/N/approve`,
/// `/jobs/NAME/run`…): the operator's act, the same commit the CLI makes,
/// on the version the page showed; one that changed since is refused,
/// not taken. Back to the act's view under `base` when it is taken.
async fn act(
    page: Arc<Page>,
    home: Home,
    base: String,
    path: String,
    request: Request<Incoming>,
) -> Response<Body> {
    let Some(act) = acts::PageAct::of_path(&path) else {
        return text(StatusCode::NOT_FOUND, "there is no such act");
    };
    let body = match Limited::new(request.into_body(), MAX_BODY).collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(_) => return text(StatusCode::PAYLOAD_TOO_LARGE, "a decision is a short form"),
    };
    // What the page showed: a proposal's commit, a request's or a job's
    // digest, an incident's key.
    let seen = ["commit", "digest", "key"]
        .iter()
        .find_map(|field| form::value(&body, field))
        .unwrap_or_default();
    let reason = form::value(&body, "reason").filter(|r| !r.trim().is_empty());
    let back = format!("{base}{}", act.back_to());
    let done = tokio::task::spawn_blocking(move || {
        act.take(&home, &seen, reason.as_deref(), page.clock.now())
    })
    .await;
    match done {
        Ok(Ok(())) => see_other(&back, None),
        Ok(Err(refusal)) => text(refusal.status(), &refusal.to_string()),
        Err(e) => text(
            StatusCode::INTERNAL_SERVER_ERROR,
            &format!("the act failed: {e}"),
        ),
    }
}

/// Whether the request carries the token or an open session.
fn signed_in(page: &Page, request: &Request<Incoming>) -> bool {
    let Some(token) = &page.token else {
        return true; // a Unix socket of this account's, no token set
    };
    let bearer = header(request, hyper::header::AUTHORIZATION).and_then(|h| {
        h.strip_prefix("Bearer ")
            .or_else(|| h.strip_prefix("bearer "))
    });
    if let Some(given) = bearer {
        let matched = listen::token_matches(given.trim().as_bytes(), token);
        return page
            .sessions
            .lock()
            .expect("sessions")
            .bearer(matched, Instant::now());
    }
    let cookie = header(request, hyper::header::COOKIE);
    session::from_cookie(cookie).is_some_and(|id| {
        page.sessions
            .lock()
            .expect("sessions")
            .check(id, Instant::now())
    })
}

/// `POST /login`: the token in a form, bounded and rate-limited.
async fn log_in(page: &Page, request: Request<Incoming>) -> Response<Body> {
    let body = match Limited::new(request.into_body(), MAX_BODY).collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(_) => return text(StatusCode::PAYLOAD_TOO_LARGE, "a login is a short form"),
    };
    let given = form::value(&body, "token").unwrap_or_default();
    let next = form::value(&body, "next");
    let next = next.as_deref().and_then(guard::local_path);
    let matched = page
        .token
        .as_deref()
        .is_none_or(|token| listen::token_matches(given.as_bytes(), token));
    let login = page
        .sessions
        .lock()
        .expect("sessions")
        .login(matched, Instant::now());
    match login {
        Login::Opened(id) => see_other(
            next.unwrap_or("/"),
            Some(session::set_cookie(&id, page.secure_cookies)),
        ),
        Login::Refused => html(StatusCode::UNAUTHORIZED, pages::login(true, false, next)),
        Login::TooMany => html(
            StatusCode::TOO_MANY_REQUESTS,
            pages::login(false, true, next),
        ),
    }
}

/// Returns the heap a render freed to the system: the blocking threads
/// that render pages each get an allocator arena of their own, which glibc
/// keeps once they are done, so a page at rest would hold the high-water
/// mark of its busiest render (measured: 5.3 MB of its own after every
/// view once, 2.2 MB fresh).
fn give_back_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim(3) only returns free memory at the top of the
    // heap and in unused arenas' pages; it touches nothing in use.
    #[allow(unsafe_code)]
    unsafe {
        libc::malloc_trim(0);
    }
}

/// A page of `home` (served under `base`), rendered off the async
/// threads.
async fn view(
    page: Arc<Page>,
    home: Home,
    base: String,
    path: String,
    query: String,
) -> Response<Body> {
    let rendered = tokio::task::spawn_blocking(move || {
        let frame = pages::Frame::of(&home, &base, page.clock.now());
        let acts = page.allow_act;
        let number = |prefix: &str| path.strip_prefix(prefix)?.parse::<u64>().ok();
        let rendered = match path.as_str() {
            "/" => Some(pages::today(&frame, &home)),
            "/incidents" => Some(pages::incidents(&frame, &home, acts)),
            "/proposals" => Some(pages::proposals(&frame, &home, acts)),
            "/jobs" => Some(pages::jobs(&frame, &home)),
            "/spend" => Some(pages::spend(&frame, &home)),
            "/memory" | "/memory/" => Some(pages::memory(&frame, &home)),
            "/recall" => {
                let q = form::value(query.as_bytes(), "q").unwrap_or_default();
                Some(pages::recall(&frame, &home, &q))
            }
            _ if path.starts_with("/memory/") => pages::memory_file(&frame, &home, &path[1..]),
            _ if path.starts_with("/jobs/") => {
                pages::job(&frame, &home, &path["/jobs/".len()..], acts)
            }
            _ => {
                if let Some(n) = number("/ticks/") {
                    pages::tick(&frame, &home, n)
                } else if let Some(n) = number("/proposals/") {
                    pages::proposal(&frame, &home, n, acts)
                } else if let Some(n) = number("/requests/") {
                    pages::request(&frame, &home, n, acts)
                } else {
                    None
                }
            }
        }
        .ok_or_else(|| pages::not_found(&frame));
        give_back_freed_memory();
        rendered
    })
    .await;
    match rendered {
        Ok(Ok(markup)) => html(StatusCode::OK, markup),
        Ok(Err(missing)) => html(StatusCode::NOT_FOUND, missing),
        Err(e) => text(
            StatusCode::INTERNAL_SERVER_ERROR,
            &format!("the page failed: {e}"),
        ),
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
