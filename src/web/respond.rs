//! The page's answers: text, markup, a redirect (with a cookie), a file of
//! its own — and the headers every one carries.

use axum::response::{IntoResponse, Response};
use http::{header, HeaderValue, StatusCode};

use super::guard;

/// Every answer's [`guard::HEADERS`].
pub(super) async fn with_headers(mut response: Response) -> Response {
    let headers = response.headers_mut();
    for (name, value) in guard::HEADERS {
        headers.insert(name, HeaderValue::from_static(value));
    }
    response
}

pub(super) fn asset(content_type: &'static str, body: &'static str) -> Response {
    ([(header::CONTENT_TYPE, content_type)], body).into_response()
}

pub(super) fn text(status: StatusCode, body: &str) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        format!("{body}\n"),
    )
        .into_response()
}

pub(super) fn html(status: StatusCode, markup: maud::Markup) -> Response {
    (status, axum::response::Html(markup.into_string())).into_response()
}

pub(super) fn see_other(to: &str, cookie: Option<String>) -> Response {
    let mut response = StatusCode::SEE_OTHER.into_response();
    let headers = response.headers_mut();
    if let Ok(value) = HeaderValue::from_str(to) {
        headers.insert(header::LOCATION, value);
    }
    if let Some(value) = cookie.and_then(|c| HeaderValue::from_str(&c).ok()) {
        headers.insert(header::SET_COOKIE, value);
    }
    response
}
