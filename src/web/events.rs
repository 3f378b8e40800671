//! `GET /events`: what tells an open page that `main` moved, so it learns
//! of a new tick without a reload (the page's one script, `/live.js`,
//! listens).

use std::convert::Infallible;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Extension, State};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use http::StatusCode;

use super::respond::text;
use super::state::{At, Page};
use crate::home::Home;

/// How often an open page's stream looks at `main`: a commit reaches the
/// page within this (and the time to read it).
const EVENTS_EVERY: Duration = Duration::from_millis(250);

/// A comment line this often keeps a stream open through proxies, and
/// finds a closed one.
const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// Streams open at once (each an open page); past it, 503.
const MAX_STREAMS: usize = 16;

/// `GET /events`: server-sent events, one `commit` event (`SHA TICK`)
/// each time `main` moves, so an open page learns of a new tick without a
/// reload. Nothing is read from the request.
pub(super) async fn stream(
    State(page): State<Arc<Page>>,
    Extension(at): Extension<At>,
) -> Response {
    if page.streams.fetch_add(1, Ordering::SeqCst) >= MAX_STREAMS {
        page.streams.fetch_sub(1, Ordering::SeqCst);
        return text(StatusCode::SERVICE_UNAVAILABLE, "too many pages are open");
    }
    let watching = Watching {
        home: at.home,
        last: None,
        _slot: Slot(page),
    };
    // The stream (and its slot) lives as long as the response's body: a
    // closed page drops it, whatever the stream was waiting for.
    let events = futures_util::stream::unfold(watching, |mut watching| async move {
        loop {
            let (home, seen) = (watching.home.clone(), watching.last.clone());
            // The ledger is read only when `main` moved.
            let now = tokio::task::spawn_blocking(move || moved(&home, seen.as_deref()))
                .await
                .ok()
                .flatten();
            if let Some((head, tick)) = now {
                let event = Event::default()
                    .event("commit")
                    .data(format!("{head} {tick}"));
                watching.last = Some(head);
                return Some((Ok::<_, Infallible>(event), watching));
            }
            tokio::time::sleep(EVENTS_EVERY).await;
        }
    });
    Sse::new(events)
        .keep_alive(KeepAlive::new().interval(KEEP_ALIVE).text("still here"))
        .into_response()
}

/// What one open page's stream holds between looks.
struct Watching {
    home: Home,
    /// The commit last said.
    last: Option<String>,
    _slot: Slot,
}

/// One open page's place among [`MAX_STREAMS`], given back when its
/// stream's body is dropped: the moment the connection closes, not at the
/// next keep-alive (200 closed pages kept new ones out for 14 s).
struct Slot(Arc<Page>);

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.streams.fetch_sub(1, Ordering::SeqCst);
    }
}

/// `main`'s commit and the last tick's number (empty when none), when
/// `main` is not at `seen` any more.
fn moved(home: &Home, seen: Option<&str>) -> Option<(String, String)> {
    let head = crate::repo::Repo::open(home.root()).ok()?.head()?;
    if seen == Some(head.as_str()) {
        return None;
    }
    let tick = crate::exchange::ledger::Ledger::read(&home.ticks_path())
        .ok()
        .and_then(|l| l.last().map(|t| t.tick.to_string()))
        .unwrap_or_default();
    Some((head, tick))
}
