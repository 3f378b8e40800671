//! The page's guards as layers, each the edge of a pure rule in
//! [`guard`] or [`session`]: a request passes them in the order they are
//! listed here, and nothing of a home is read before the last has let it
//! through.

use std::sync::Arc;
use std::time::Instant;

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;
use http::{header, Method, StatusCode};

use super::respond::text;
use super::state::Page;
use super::{guard, session};
use crate::door::token;

fn one(request: &Request, name: header::HeaderName) -> Option<&str> {
    request.headers().get(name).and_then(|v| v.to_str().ok())
}

/// First: the request names its host once, and it is a name this page
/// serves (a rebound DNS name, a proxy's name not given with `--host`,
/// is refused before anything else is read).
pub(super) async fn only_names_served(
    State(page): State<Arc<Page>>,
    request: Request,
    next: Next,
) -> Response {
    let hosts: Vec<&str> = request
        .headers()
        .get_all(header::HOST)
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
    if !page.served.allows(host) {
        return text(
            StatusCode::MISDIRECTED_REQUEST,
            "this page does not serve that name (a rebound DNS name, or a proxy's name not \
             given with --host)",
        );
    }
    next.run(request).await
}

/// Second: a GET or HEAD passes; a POST only from the page itself (403)
/// and with a form's body or none (415); any other method is 405.
pub(super) async fn only_forms_from_the_page(
    State(page): State<Arc<Page>>,
    request: Request,
    next: Next,
) -> Response {
    let method = request.method();
    if method == Method::POST {
        let host = one(&request, header::HOST);
        let site = one(&request, header::HeaderName::from_static("sec-fetch-site"));
        let origin = one(&request, header::ORIGIN);
        if !guard::same_origin(origin, site, host, page.secure_cookies) {
            return text(StatusCode::FORBIDDEN, "a form from another page is refused");
        }
        let content_type = one(&request, header::CONTENT_TYPE);
        // A POST with no body (a logout, a bare button) has no type.
        let headers = request.headers();
        let empty = headers
            .get(header::CONTENT_LENGTH)
            .is_none_or(|l| l.as_bytes() == b"0")
            && headers.get(header::TRANSFER_ENCODING).is_none();
        if !(guard::is_form(content_type) || empty && content_type.is_none()) {
            return text(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "a decision is a form (application/x-www-form-urlencoded)",
            );
        }
    } else if method != Method::GET && method != Method::HEAD {
        return text(StatusCode::METHOD_NOT_ALLOWED, "GET, or a form's POST");
    }
    next.run(request).await
}

/// Third, for everything of a home: the token as `Authorization: Bearer`
/// or an open session's cookie; without either, to the login. A wrong
/// bearer is answered after [`session::WRONG_WAIT`], the right one at
/// once.
pub(super) async fn signed_in(
    State(page): State<Arc<Page>>,
    request: Request,
    next: Next,
) -> Response {
    match credentials(&page, &request) {
        Some(true) => next.run(request).await,
        Some(false) => super::login::to_login(&request),
        None => {
            // A wrong bearer token.
            tokio::time::sleep(session::WRONG_WAIT).await;
            super::login::to_login(&request)
        }
    }
}

/// Whether the request may see the home: `Some(true)` the token or an
/// open session, `Some(false)` neither, `None` a wrong bearer token.
fn credentials(page: &Page, request: &Request) -> Option<bool> {
    let Some(expected) = &page.token else {
        return Some(true); // a Unix socket of this account's, no token set
    };
    let authorization = request.headers().get(header::AUTHORIZATION);
    if let Some(given) = token::bearer(authorization.map(|h| h.as_bytes())) {
        return token::token_matches(given, expected).then_some(true);
    }
    let name = session::cookie_name(page.secure_cookies);
    let now = Instant::now();
    let mut sessions = page.sessions.lock().expect("sessions");
    Some(session::from_cookie(one(request, header::COOKIE), name).any(|id| sessions.check(id, now)))
}

/// Last, for a POST of a home: only on a page started with `--allow-act`.
pub(super) async fn acts_allowed(
    State(page): State<Arc<Page>>,
    request: Request,
    next: Next,
) -> Response {
    if request.method() == Method::POST && !page.allow_act {
        return text(
            StatusCode::FORBIDDEN,
            "the page is read-only (started without --allow-act): decide on the server \
             (`hearth proposals accept N`)",
        );
    }
    next.run(request).await
}
