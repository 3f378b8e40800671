//! The thread's acts (`--allow-act`, from the page's own origin, with a
//! session — the gates before these have proved the operator): say
//! (`POST /talk/say`, `hearth say`'s own commit), ask (`POST /talk/ask`,
//! `hearth ask` itself, its answer streamed as server-sent events when
//! the page's script asks for them) and mark read (`POST /talk/read`, as
//! `hearth outbox --ack`), and send a held reply (`POST /talk/send`, as
//! `hearth mail send`).

use std::convert::Infallible;
use std::sync::Arc;

use axum::extract::{Extension, State};
use axum::response::sse::{Event, Sse};
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Utc};
use http::{header, HeaderMap, StatusCode};

use super::acts::operator;
use super::asking::{self, NotAnswered};
use super::form::Form;
use super::respond::{see_other, text};
use super::state::{At, Page};
use crate::mailbox::{read_through, say};
use crate::view::talk;

/// The largest message or question the page takes (the inbox's own
/// limit on what the model reads of one).
const MAX_SAID: usize = crate::mailbox::inbox::MAX_MESSAGE_BYTES;

/// What the operator wrote.
#[derive(Debug, Default, serde::Deserialize)]
pub(super) struct TheirWords {
    #[serde(default)]
    text: String,
}

/// `POST /talk/say`: a message in the inbox, committed as the
/// operator's, as `hearth say` does; back to the thread.
pub(super) async fn say(
    State(page): State<Arc<Page>>,
    Extension(at): Extension<At>,
    Form(words): Form<TheirWords, MAX_SAID>,
) -> Response {
    let now = page.clock.now();
    let home = at.home.clone();
    let said = tokio::task::spawn_blocking(move || say::say(&home, &words.text, now)).await;
    match said {
        Ok(Ok(said)) => {
            if let Some(why) = said.not_committed {
                tracing::warn!("{} was delivered but not committed: {why}", said.rel);
            }
            see_other(&format!("{}/talk", at.base), None)
        }
        Ok(Err(crate::mailbox::MailboxError::Empty)) => text(
            StatusCode::BAD_REQUEST,
            "the message is empty: say something",
        ),
        Ok(Err(e)) => text(
            StatusCode::INTERNAL_SERVER_ERROR,
            &format!("{e} (hint: {})", e.hint()),
        ),
        Err(e) => text(
            StatusCode::INTERNAL_SERVER_ERROR,
            &format!("the message was not taken: {e}"),
        ),
    }
}

/// Whether the client asked for server-sent events (the page's script
/// does; a form without it does not).
fn wants_events(headers: &HeaderMap) -> bool {
    headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|accept| accept.contains("text/event-stream"))
}

/// `POST /talk/ask`: the question asked as `hearth ask` asks it; the
/// answer streams as `text` events, then `done` (or `refused`, with why),
/// each written into the page as text. A plain form waits for the
/// answer and comes back to the thread, where it is.
pub(super) async fn ask(
    State(page): State<Arc<Page>>,
    Extension(at): Extension<At>,
    headers: HeaderMap,
    Form(words): Form<TheirWords, MAX_SAID>,
) -> Response {
    if words.text.trim().is_empty() {
        return text(
            StatusCode::BAD_REQUEST,
            "the question is empty: ask something",
        );
    }
    let Some(program) = page.program.clone() else {
        return text(
            StatusCode::SERVICE_UNAVAILABLE,
            "this page was started without a hearth program to ask with",
        );
    };
    let (sender, mut received) = tokio::sync::mpsc::unbounded_channel::<String>();
    let (environment, home) = (page.environment.clone(), at.home.clone());
    let done = tokio::task::spawn_blocking(move || {
        asking::ask_of(&program, &home, words.text, environment, &mut |chunk| {
            let _ = sender.send(chunk.to_string());
        })
    });
    if !wants_events(&headers) {
        return match done.await {
            Ok(Ok(_)) => see_other(&format!("{}/talk", at.base), None),
            Ok(Err(NotAnswered::Budget(why))) => text(StatusCode::TOO_MANY_REQUESTS, &why),
            Ok(Err(NotAnswered::Failed(why))) => text(StatusCode::INTERNAL_SERVER_ERROR, &why),
            Err(e) => text(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
        };
    }
    let (events, to_send) = tokio::sync::mpsc::unbounded_channel::<Event>();
    tokio::spawn(async move {
        while let Some(chunk) = received.recv().await {
            let _ = events.send(Event::default().event("text").data(chunk));
        }
        let end = match done.await {
            Ok(Ok(_)) => Event::default().event("done").data(""),
            Ok(Err(NotAnswered::Budget(why) | NotAnswered::Failed(why))) => {
                Event::default().event("refused").data(why)
            }
            Err(e) => Event::default().event("refused").data(e.to_string()),
        };
        let _ = events.send(end);
    });
    let stream = futures_util::stream::unfold(to_send, |mut to_send| async move {
        let event = to_send.recv().await?;
        Some((Ok::<_, Infallible>(event), to_send))
    });
    Sse::new(stream).into_response()
}

/// What "mark read" was shown on: the newest time on the page, and the
/// page (its cursor; none: the newest).
#[derive(Debug, Default, serde::Deserialize)]
pub(super) struct ShownRead {
    #[serde(default)]
    through: String,
    before: Option<u64>,
}

/// `POST /talk/read`: the letters the page showed, up to the newest time
/// it showed, marked read (and the thread's mark moved there), committed
/// as the operator's; never one the page did not show.
pub(super) async fn read(
    State(page): State<Arc<Page>>,
    Extension(at): Extension<At>,
    Form(shown): Form<ShownRead>,
) -> Response {
    let Ok(through) = DateTime::parse_from_rfc3339(&shown.through).map(|t| t.with_timezone(&Utc))
    else {
        return text(
            StatusCode::BAD_REQUEST,
            "the form names no time shown (`through`): reload the thread",
        );
    };
    let now = page.clock.now();
    let home = at.home.clone();
    let marked = tokio::task::spawn_blocking(move || {
        let thread = talk::thread(&home, shown.before);
        let letters: Vec<String> = thread
            .entries
            .iter()
            .filter(|e| e.unread && e.time <= through)
            .filter_map(|e| match &e.said {
                talk::Voice::Letter { id, .. } if !id.is_empty() => Some(id.clone()),
                _ => None,
            })
            .collect();
        // Never past what the page holds now.
        let through = thread
            .newest()
            .map_or(through, |newest| newest.min(through));
        read_through::mark(&home, through, &letters, &operator(&home), "page", now)
    })
    .await;
    match marked {
        Ok(Ok(_)) => see_other(&format!("{}/talk", at.base), None),
        Ok(Err(e)) => text(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
        Err(e) => text(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
    }
}

/// Which held reply the operator sends.
#[derive(Debug, Default, serde::Deserialize)]
pub(super) struct HeldLetter {
    #[serde(default)]
    letter: String,
}

/// `POST /talk/send`: a held reply (the agent's answer to mail not proven
/// the operator's) sent as it is on the operator's word, as `hearth mail
/// send` sends it: to the mail's sender, once, committed as theirs.
pub(super) async fn send(
    State(page): State<Arc<Page>>,
    Extension(at): Extension<At>,
    Form(held): Form<HeldLetter>,
) -> Response {
    let now = page.clock.now();
    let (home, environment) = (at.home.clone(), page.environment.clone());
    let sent = tokio::task::spawn_blocking(move || {
        let config = crate::config::Config::load(&home.config_path())
            .map_err(|e| (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?;
        crate::mail::reply::send_held(
            &home,
            &config.mail,
            &held.letter,
            &environment,
            &operator(&home),
            now,
        )
        .map_err(|e| {
            let status = match e {
                crate::mail::reply::HeldNotSent::AlreadySent(_) => StatusCode::CONFLICT,
                crate::mail::reply::HeldNotSent::NotAReply(_)
                | crate::mail::reply::HeldNotSent::NoAddress(_) => StatusCode::NOT_FOUND,
                _ => StatusCode::INTERNAL_SERVER_ERROR,
            };
            (status, e.to_string())
        })
    })
    .await;
    match sent {
        Ok(Ok(_)) => see_other(&format!("{}/talk", at.base), None),
        Ok(Err((status, why))) => text(status, &why),
        Err(e) => text(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
    }
}
