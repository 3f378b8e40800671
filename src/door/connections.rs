//! Which connections a door holds: accepted first, at most a cap of them,
//! and when full the oldest that has not sent a whole request closed to
//! make room, so slow clients cannot keep the operator out.

use axum::body::Body;

use super::listen::Listener;

/// The connections a door holds, in the order they were accepted, and
/// which of them are in the middle of a request.
#[derive(Default)]
struct Held {
    next: u64,
    open: std::collections::BTreeMap<u64, HeldConn>,
}

struct HeldConn {
    /// Requests whose headers came and whose answer is not sent yet.
    busy: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    /// Ends its task (and closes it).
    abort: tokio::task::AbortHandle,
}

impl Held {
    /// Room for one more connection under `max`: when full, the oldest
    /// that has not sent a whole request (a slow client, an idle
    /// keep-alive) is closed. `false`: every one is at work; refuse.
    fn make_room(&mut self, max: usize) -> bool {
        if self.open.len() < max {
            return true;
        }
        let idle = self
            .open
            .iter()
            .find(|(_, c)| c.busy.load(std::sync::atomic::Ordering::SeqCst) == 0)
            .map(|(n, _)| *n);
        match idle.and_then(|n| self.open.remove(&n)) {
            Some(shed) => {
                shed.abort.abort();
                true
            }
            None => false,
        }
    }
}

/// Takes a connection's place out of [`Held`] when its task ends, however
/// it ends (served, timed out, shed).
struct Leaving(std::sync::Arc<std::sync::Mutex<Held>>, u64);

impl Drop for Leaving {
    fn drop(&mut self) {
        if let Ok(mut held) = self.0.lock() {
            held.open.remove(&self.1);
        }
    }
}

/// A response body that keeps its connection counted busy until it is
/// sent whole (or the connection drops it): an event stream is at work
/// for as long as it streams.
struct BusyUntilSent {
    inner: Body,
    busy: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

impl Drop for BusyUntilSent {
    fn drop(&mut self) {
        self.busy.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}

impl hyper::body::Body for BusyUntilSent {
    type Data = bytes::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<hyper::body::Frame<bytes::Bytes>, Self::Error>>> {
        std::pin::Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.inner.size_hint()
    }
}

/// Serves `listener`'s connections for ever with `app` (a door's router
/// and its layers), at most
/// `max_connections` at once. A connection is accepted first; when the
/// door is full, the oldest connection that has not sent a whole request
/// is closed to make room (600 slow connections from one client kept the
/// operator waiting half a minute when the cap was a queue), and only
/// when every one is at work is the new one refused. A request's headers
/// must come within `header_timeout`. An accept that fails (out of
/// descriptors, say) is said once a spell and backed off, never a loop
/// that spins a core and floods the log. `door` names the door in the log.
pub async fn serve_connections<S>(
    listener: &Listener,
    door: &'static str,
    max_connections: usize,
    header_timeout: std::time::Duration,
    app: S,
) where
    S: App,
{
    let held = std::sync::Arc::new(std::sync::Mutex::new(Held::default()));
    let mut failing: u64 = 0;
    loop {
        let conn = match listener.accept(door).await {
            Ok(Some(conn)) => conn,
            Ok(None) => continue,
            Err(e) => {
                if failing == 0 {
                    tracing::warn!(
                        "{door}: connections cannot be accepted ({e}); trying again, slower, \
                         until they can"
                    );
                }
                failing += 1;
                let wait = std::time::Duration::from_millis(50 << failing.min(5));
                tokio::time::sleep(wait).await;
                continue;
            }
        };
        if failing > 0 {
            tracing::info!("{door}: accepting again ({failing} failed accepts)");
            failing = 0;
        }
        let mut holding = held.lock().expect("the door's connections");
        if !holding.make_room(max_connections) {
            tracing::debug!("{door}: every connection is at work; one more was refused");
            continue; // dropped: closed
        }
        let n = holding.next;
        holding.next += 1;
        let busy = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let leaving = Leaving(std::sync::Arc::clone(&held), n);
        let served = serve_one(
            conn,
            app.clone(),
            std::sync::Arc::clone(&busy),
            header_timeout,
        );
        let task = tokio::spawn(async move {
            let _leaving = leaving;
            if let Err(e) = served.await {
                tracing::debug!("{door}: a connection ended: {e}");
            }
        });
        holding.open.insert(
            n,
            HeldConn {
                busy,
                abort: task.abort_handle(),
            },
        );
    }
}

/// A door's router with its layers, as [`serve_connections`] serves it.
pub trait App:
    tower_service::Service<
        hyper::Request<hyper::body::Incoming>,
        Response = hyper::Response<Body>,
        Error = std::convert::Infallible,
        Future: Send + 'static,
    > + Clone
    + Send
    + 'static
{
}

impl<S> App for S where
    S: tower_service::Service<
            hyper::Request<hyper::body::Incoming>,
            Response = hyper::Response<Body>,
            Error = std::convert::Infallible,
            Future: Send + 'static,
        > + Clone
        + Send
        + 'static
{
}

/// One connection served by `app`, each request counted in `busy` from
/// its headers until its answer is sent.
async fn serve_one(
    conn: Box<dyn super::listen::Conn>,
    app: impl App,
    busy: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    header_timeout: std::time::Duration,
) -> Result<(), hyper::Error> {
    use std::sync::atomic::Ordering;
    let service = hyper::service::service_fn(move |request| {
        let mut app = app.clone();
        let busy = std::sync::Arc::clone(&busy);
        busy.fetch_add(1, Ordering::SeqCst);
        async move {
            std::future::poll_fn(|cx| app.poll_ready(cx)).await?;
            let response = app.call(request).await?;
            Ok::<_, std::convert::Infallible>(
                response.map(|inner| Body::new(BusyUntilSent { inner, busy })),
            )
        }
    });
    hyper::server::conn::http1::Builder::new()
        .timer(hyper_util::rt::TokioTimer::new())
        .header_read_timeout(header_timeout)
        .serve_connection(hyper_util::rt::TokioIo::new(conn), service)
        .await
}
