//! `GET /events`: what tells an open page that `main` moved, so it learns
//! of a new tick without a reload (the page's one script, `/live.js`,
//! listens).

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::body::Frame;
use hyper::{Response, StatusCode};

use super::{respond, text, Body, Page};
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
pub(super) fn stream(page: Arc<Page>, home: Home) -> Response<Body> {
    if page.streams.fetch_add(1, Ordering::SeqCst) >= MAX_STREAMS {
        page.streams.fetch_sub(1, Ordering::SeqCst);
        return text(StatusCode::SERVICE_UNAVAILABLE, "too many pages are open");
    }
    let slot = Slot(Arc::clone(&page));
    let (sender, frames) = tokio::sync::mpsc::channel::<Bytes>(2);
    tokio::spawn(async move {
        let mut last: Option<String> = None;
        let mut quiet = Duration::ZERO;
        // A closed page ends the body, which ends this at its next look.
        while !sender.is_closed() {
            let (home, seen) = (home.clone(), last.clone());
            // The ledger is read only when `main` moved.
            let now = tokio::task::spawn_blocking(move || moved(&home, seen.as_deref()))
                .await
                .ok()
                .flatten();
            let said = match now {
                Some((head, tick)) => {
                    let said = format!("event: commit\ndata: {head} {tick}\n\n");
                    last = Some(head);
                    quiet = Duration::ZERO;
                    Some(said)
                }
                _ if quiet >= KEEP_ALIVE => {
                    quiet = Duration::ZERO;
                    Some(": still here\n\n".to_string())
                }
                _ => None,
            };
            if let Some(said) = said {
                if sender.send(Bytes::from(said)).await.is_err() {
                    break; // the page was closed
                }
            }
            tokio::time::sleep(EVENTS_EVERY).await;
            quiet += EVENTS_EVERY;
        }
    });
    let mut response = respond(StatusCode::OK, "text/event-stream", String::new());
    *response.body_mut() = EventBody {
        frames,
        _slot: slot,
    }
    .boxed();
    response
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

/// An event stream's body: what its task says, while the page listens.
struct EventBody {
    frames: tokio::sync::mpsc::Receiver<Bytes>,
    _slot: Slot,
}

impl hyper::body::Body for EventBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        self.frames
            .poll_recv(cx)
            .map(|said| said.map(|bytes| Ok(Frame::data(bytes))))
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
