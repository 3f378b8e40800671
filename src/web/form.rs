//! The page's one kind of request body: a short
//! `application/x-www-form-urlencoded` form (a login, a decision), read
//! whole under [`MAX_BODY`] into a typed value — and a query string
//! (`/recall?q=…`), which is written the same way.

use axum::extract::{FromRequest, Request};
use axum::response::{IntoResponse, Response};
use http::StatusCode;
use serde::de::DeserializeOwned;

use crate::door::body::{read_request, BodyRefused};

/// The largest request body read (a login, a decision): anything larger
/// is 413.
const MAX_BODY: usize = 4096;

/// A form's fields, as `T`, from a body of at most `MAX` bytes (its gate,
/// `only_forms_from_the_page`, has already refused any other kind of
/// body).
pub(super) struct Form<T, const MAX: usize = MAX_BODY>(pub T);

impl<T: DeserializeOwned, S: Send + Sync, const MAX: usize> FromRequest<S> for Form<T, MAX> {
    type Rejection = Response;

    async fn from_request(request: Request, _: &S) -> Result<Form<T, MAX>, Response> {
        let (_, body) = read_request(request, MAX)
            .await
            .map_err(|refused| match refused {
                BodyRefused::TooLarge => super::respond::text(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    &format!("this form takes at most {MAX} bytes"),
                ),
                BodyRefused::Unreadable => {
                    super::respond::text(StatusCode::BAD_REQUEST, "the form could not be read")
                }
            })?;
        serde_urlencoded::from_bytes(&body).map(Form).map_err(|e| {
            super::respond::text(
                StatusCode::BAD_REQUEST,
                &format!("the form is not one of this page's: {e}"),
            )
            .into_response()
        })
    }
}

/// The fields of a query string (`None`: no query), or the defaults when
/// it does not read as one: a query only ever narrows what is shown.
pub(super) fn query<T: DeserializeOwned + Default>(query: Option<&str>) -> T {
    serde_urlencoded::from_str(query.unwrap_or("")).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Default, serde::Deserialize, PartialEq)]
    struct QueryOf {
        q: Option<String>,
    }

    #[test]
    fn a_query_is_decoded_and_a_broken_one_asks_nothing() {
        let asked: QueryOf = query(Some("q=a%2Bb+c%21&x=1"));
        assert_eq!(asked.q.as_deref(), Some("a+b c!"));
        assert_eq!(query::<QueryOf>(None), QueryOf::default());
        assert_eq!(query::<QueryOf>(Some("q=%zz")).q.as_deref(), Some("%zz"));
    }
}
