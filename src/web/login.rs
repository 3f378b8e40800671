//! The login: `GET /login` (its form), `POST /login` (the token, a
//! session), `POST /logout`, and where a request without a session is
//! sent ([`to_login`]).

use std::sync::Arc;
use std::time::Instant;

use axum::extract::{RawQuery, Request, State};
use axum::http::HeaderMap;
use axum::response::Response;
use http::{header, Method, StatusCode};

use super::form::Form;
use super::respond::{html, see_other};
use super::state::Page;
use super::{guard, pages, session};
use crate::door::token;

/// Where to go once logged in (`?next=` of the login's address, a field
/// of its form).
#[derive(Debug, Default, serde::Deserialize)]
pub(super) struct NextPage {
    next: Option<String>,
}

/// The login form.
#[derive(Debug, Default, serde::Deserialize)]
pub(super) struct Login {
    #[serde(default)]
    token: String,
    next: Option<String>,
}

/// `GET /login`: the form, which opens `next` (a path of this page only)
/// once the token is given.
pub(super) async fn form(RawQuery(query): RawQuery) -> Response {
    let asked: NextPage = super::form::query(query.as_deref());
    let next = asked.next.as_deref().and_then(guard::local_path);
    html(StatusCode::OK, pages::login(false, next))
}

/// `POST /login`: the token in a form, bounded; a wrong one answered
/// after [`session::WRONG_WAIT`].
pub(super) async fn log_in(State(page): State<Arc<Page>>, Form(login): Form<Login>) -> Response {
    let next = login.next.as_deref().and_then(guard::local_path);
    let matched = page
        .token
        .as_deref()
        .is_none_or(|expected| token::token_matches(login.token.as_bytes(), expected));
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
pub(super) async fn log_out(State(page): State<Arc<Page>>, headers: HeaderMap) -> Response {
    let name = session::cookie_name(page.secure_cookies);
    let cookie = headers.get(header::COOKIE).and_then(|v| v.to_str().ok());
    let mut sessions = page.sessions.lock().expect("sessions");
    for id in session::from_cookie(cookie, name) {
        sessions.logout(id);
    }
    see_other("/login", Some(session::clear_cookie(page.secure_cookies)))
}

/// Where a request without a session is sent: the login, which — for a
/// GET of a page of this site (a link from a notice) — opens that page
/// once the operator has logged in.
pub(super) fn to_login(request: &Request) -> Response {
    let asked = request.uri().path_and_query().map_or("/", |p| p.as_str());
    let to = match (request.method() == Method::GET, guard::local_path(asked)) {
        (true, Some(path)) if path != "/" => format!(
            "/login?next={}",
            percent_encoding::utf8_percent_encode(path, percent_encoding::NON_ALPHANUMERIC)
        ),
        _ => "/login".to_string(),
    };
    see_other(&to, None)
}
