//! Who is let in: a session cookie or the bearer token, checked with the
//! limit on guesses ([`signed_in`]), and `POST /login` ([`log_in`]).

use std::time::Instant;

use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};

use super::session;
use super::{form, guard, header, html, pages, see_other, Body, Page};
use crate::mcp::listen;

/// Whether the request carries the token or an open session. A wrong
/// bearer is answered after [`session::WRONG_WAIT`], the right one at once.
pub(super) async fn signed_in(page: &Page, request: &Request<Incoming>) -> bool {
    let Some(token) = &page.token else {
        return true; // a Unix socket of this account's, no token set
    };
    let authorization = request.headers().get(hyper::header::AUTHORIZATION);
    if let Some(given) = listen::bearer(authorization.map(|h| h.as_bytes())) {
        let matched = listen::token_matches(given, token);
        if !matched {
            tokio::time::sleep(session::WRONG_WAIT).await;
        }
        return matched;
    }
    let name = session::cookie_name(page.secure_cookies);
    let now = Instant::now();
    let mut sessions = page.sessions.lock().expect("sessions");
    session::from_cookie(header(request, hyper::header::COOKIE), name)
        .any(|id| sessions.check(id, now))
}

/// `POST /login`: the token in a form, bounded; a wrong one answered
/// after [`session::WRONG_WAIT`].
pub(super) async fn log_in(page: &Page, request: Request<Incoming>) -> Response<Body> {
    let body = match super::form_body(request, "a login").await {
        Ok(body) => body,
        Err(refused) => return refused,
    };
    let given = form::value(&body, "token").unwrap_or_default();
    let next = form::value(&body, "next");
    let next = next.as_deref().and_then(guard::local_path);
    let matched = page
        .token
        .as_deref()
        .is_none_or(|token| listen::token_matches(given.as_bytes(), token));
    if !matched {
        tokio::time::sleep(session::WRONG_WAIT).await;
        return html(StatusCode::UNAUTHORIZED, pages::login(true, next));
    }
    let id = page
        .sessions
        .lock()
        .expect("sessions")
        .login(Instant::now());
    see_other(
        next.unwrap_or("/"),
        Some(session::set_cookie(&id, page.secure_cookies)),
    )
}

/// `POST /logout`: every session the request names ends, and the
/// browser is told to drop the cookie.
pub(super) fn log_out(page: &Page, request: &Request<Incoming>) -> Response<Body> {
    let name = session::cookie_name(page.secure_cookies);
    let mut sessions = page.sessions.lock().expect("sessions");
    for id in session::from_cookie(header(request, hyper::header::COOKIE), name) {
        sessions.logout(id);
    }
    see_other("/login", Some(session::clear_cookie(page.secure_cookies)))
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
