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
mod asking;
mod chat;
mod events;
mod form;
mod gate;
pub mod guard;
pub mod homes;
mod login;
pub mod pages;
mod respond;
mod routes;
pub mod session;
mod state;
mod talk;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::middleware;
use axum::routing::{get, post};
use axum::Router;

use crate::clock::Clock;
use crate::door::{self, Listen, Listener};
use guard::Served;
use homes::Homes;
use respond::{asset, with_headers};
use session::Sessions;
use state::Page;

/// The environment variable that holds the token.
pub const TOKEN_VARIABLE: &str = "HEARTH_WEB_TOKEN";

/// Connections served at once; when full, the oldest idle one is closed.
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
    /// run a job now; and the chat API asks. Without it every act is
    /// refused.
    pub allow_act: bool,
    /// The command's environment: the model's key for the chat API's
    /// asks (`/v1`), and what operator tools may be given of it. Read by
    /// the CLI; the library reads no environment.
    pub environment: std::collections::BTreeMap<String, String>,
    /// The hearth program the chat API runs `hearth ask` with (the
    /// command's own; none: the chat API answers 503).
    pub program: Option<std::path::PathBuf>,
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
    let at = options.listen.to_string();
    let io = |source| WebError::Io {
        at: at.clone(),
        source,
    };
    let runtime = door::runtime().map_err(io)?;
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
            environment: options.environment.clone(),
            program: options.program.clone(),
        });
        door::connections::serve_connections(
            &listener,
            "the page",
            MAX_CONNECTIONS,
            HEADER_TIMEOUT,
            app(page),
        )
        .await;
        Ok(())
    })
}

/// The page's route table. Its guards are layers, in the order they run:
/// the name the request was sent to ([`gate::only_names_served`]); then,
/// for the page, a POST's origin and type ([`gate::only_forms_from_the_page`])
/// and, for everything but the login and the page's two files, the session
/// ([`gate::signed_in`]) and the home the path is about ([`routes`]); for
/// the chat API (`/v1`), the bearer token alone ([`chat`]). Every answer
/// carries [`guard::HEADERS`].
fn app(page: Arc<Page>) -> Router {
    let pages = Router::new()
        .route(
            "/style.css",
            get(|| async { asset("text/css", pages::STYLE) }),
        )
        .route(
            "/live.js",
            get(|| async { asset("text/javascript; charset=utf-8", pages::LIVE_JS) }),
        )
        .route(
            "/talk.js",
            get(|| async { asset("text/javascript; charset=utf-8", pages::TALK_JS) }),
        )
        .route("/login", get(login::form).post(login::log_in))
        .route("/logout", post(login::log_out))
        .fallback_service(routes::homes(Arc::clone(&page)))
        .layer(middleware::from_fn_with_state(
            Arc::clone(&page),
            gate::only_forms_from_the_page,
        ))
        .with_state(Arc::clone(&page));
    Router::new()
        .merge(chat::routes(Arc::clone(&page)))
        .merge(pages)
        .layer(middleware::from_fn_with_state(
            page,
            gate::only_names_served,
        ))
        .layer(middleware::map_response(with_headers))
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
