//! A request's body as both HTTP doors take it: whole, up to the door's
//! limit; an oversized one read on and dropped, bounded, so the client
//! reads the 413 instead of a reset (tower-http's limit answers 413 at
//! once and closes on a client still sending: it reads a reset, never
//! the answer).

/// Why a request's body was not taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyRefused {
    /// Past the door's limit: answer 413.
    TooLarge,
    /// The connection failed while it came.
    Unreadable,
}

/// How much of an oversized body is read and dropped before the 413, so
/// the client is not cut off while it still sends (closing a socket with
/// unread data makes the kernel send a reset, and the client never reads
/// why); past it, or past [`DRAIN_TIME`], the connection is closed.
const DRAIN_BYTES: usize = 64 * 1024 * 1024;
const DRAIN_TIME: std::time::Duration = std::time::Duration::from_secs(10);

/// A request's body, whole, when it is at most `max` bytes; both doors
/// read every body through it. An oversized one (declared or streamed) is
/// read on and dropped (bounded) before the caller answers 413.
pub async fn read_body(
    body: axum::body::Body,
    declared: Option<u64>,
    max: usize,
) -> Result<bytes::Bytes, BodyRefused> {
    use http_body_util::BodyExt;
    let mut body = body;
    let mut kept = bytes::BytesMut::new();
    let mut seen = 0usize;
    let mut oversized = declared.is_some_and(|n| n > max as u64);
    let drain = async {
        while let Some(frame) = body.frame().await {
            let Ok(frame) = frame else {
                return Err(BodyRefused::Unreadable);
            };
            let Ok(data) = frame.into_data() else {
                continue; // trailers
            };
            seen += data.len();
            if seen > max {
                oversized = true;
            }
            if oversized {
                if seen > DRAIN_BYTES {
                    break;
                }
            } else {
                kept.extend_from_slice(&data);
            }
        }
        Ok(())
    };
    match tokio::time::timeout(DRAIN_TIME, drain).await {
        Ok(Ok(())) if !oversized => Ok(kept.freeze()),
        Ok(Ok(())) | Err(_) if oversized => Err(BodyRefused::TooLarge),
        Ok(Err(refused)) => Err(refused),
        _ => Err(BodyRefused::Unreadable),
    }
}

/// A request's head and its body, whole (see [`read_body`]): the length
/// it declares is taken at its word only to refuse early.
pub async fn read_request(
    request: axum::extract::Request,
    max: usize,
) -> Result<(http::request::Parts, bytes::Bytes), BodyRefused> {
    let (parts, body) = request.into_parts();
    let declared = parts
        .headers
        .get(http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    let bytes = read_body(body, declared, max).await?;
    Ok((parts, bytes))
}
