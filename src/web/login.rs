//! Who is let in: a session cookie or the bearer token, checked with the
//! limit on guesses ([`signed_in`]), and `POST /login` ([`log_in`]).

use std::time::Instant;

use http_body_util::{BodyExt, Limited};
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};

use super::session::{self, Login};
use super::{form, guard, header, html, pages, see_other, text, Body, Page, MAX_BODY};
use crate::mcp::listen;

/// Whether the request carries the token or an open session.
pub(super) fn signed_in(page: &Page, request: &Request<Incoming>) -> bool {
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
pub(super) async fn log_in(page: &Page, request: Request<Incoming>) -> Response<Body> {
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

/// Where a request without a session is sent: the login, which — for a
/// GET of a page of this site (a link from a notice) — opens that page
/// once the operator has logged in.
pub(super) fn to_login(request: &Request<Incoming>) -> Response<Body> {
    let asked = request.uri().path_and_query().map_or("/", |p| p.as_str());
    let to = match (
        request.method() == hyper::Method::GET,
        guard::local_path(asked),
    ) {
        (true, Some(path)) if path != "/" => format!(
            "/login?next={}",
            percent_encoding::utf8_percent_encode(path, percent_encoding::NON_ALPHANUMERIC)
        ),
        _ => "/login".to_string(),
    };
    see_other(&to, None)
}
