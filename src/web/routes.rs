//! What each path of one home's pages shows ([`view`], a GET) or does
//! ([`act`], a POST under `--allow-act`), once the gate in `web` has let
//! the request in and said which home it is about.

use std::sync::Arc;

use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};

use super::{acts, form, html, pages, see_other, text, Body, Page};
use crate::home::Home;

/// A POST of `home`'s (`/proposals/N/accept`, `/requests/N/approve`,
/// `/jobs/NAME/run`…): the operator's act, the same commit the CLI makes,
/// on the version the page showed; one that changed since is refused,
/// not taken. Back to the act's view under `base` when it is taken.
pub(super) async fn act(
    page: Arc<Page>,
    home: Home,
    base: String,
    path: String,
    request: Request<Incoming>,
) -> Response<Body> {
    let Some(act) = acts::PageAct::of_path(&path) else {
        return text(StatusCode::NOT_FOUND, "there is no such act");
    };
    let body = match super::form_body(request, "a decision").await {
        Ok(body) => body,
        Err(refused) => return refused,
    };
    // What the page showed: a proposal's commit, a request's or a job's
    // digest, an incident's key.
    let seen = ["commit", "digest", "key"]
        .iter()
        .find_map(|field| form::value(&body, field))
        .unwrap_or_default();
    let reason = form::value(&body, "reason").filter(|r| !r.trim().is_empty());
    let back = format!("{base}{}", act.back_to());
    let done = tokio::task::spawn_blocking(move || {
        act.take(&home, &seen, reason.as_deref(), page.clock.now())
    })
    .await;
    match done {
        Ok(Ok(())) => see_other(&back, None),
        Ok(Err(refusal)) => text(refusal.status(), &refusal.to_string()),
        Err(e) => text(
            StatusCode::INTERNAL_SERVER_ERROR,
            &format!("the act failed: {e}"),
        ),
    }
}

/// Returns the heap a render freed to the system: the blocking threads
/// that render pages each get an allocator arena of their own, which glibc
/// keeps once they are done, so a page at rest would hold the high-water
/// mark of its busiest render (measured: 5.3 MB of its own after every
/// view once, 2.2 MB fresh).
fn give_back_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim(3) only returns free memory at the top of the
    // heap and in unused arenas' pages; it touches nothing in use.
    #[allow(unsafe_code)]
    unsafe {
        libc::malloc_trim(0);
    }
}

/// A page of `home` (served under `base`), rendered off the async
/// threads.
pub(super) async fn view(
    page: Arc<Page>,
    home: Home,
    base: String,
    path: String,
    query: String,
) -> Response<Body> {
    let rendered = tokio::task::spawn_blocking(move || {
        let frame = pages::Frame::of(&home, &base, page.clock.now());
        let acts = page.allow_act;
        let number = |prefix: &str| path.strip_prefix(prefix)?.parse::<u64>().ok();
        let rendered = match path.as_str() {
            "/" => Some(pages::today(&frame, &home)),
            "/incidents" => Some(pages::incidents(&frame, &home, acts)),
            "/proposals" => Some(pages::proposals(&frame, &home, acts)),
            "/jobs" => Some(pages::jobs(&frame, &home)),
            "/spend" => Some(pages::spend(&frame, &home)),
            "/memory" | "/memory/" => Some(pages::memory(&frame, &home)),
            "/recall" => {
                let q = form::value(query.as_bytes(), "q").unwrap_or_default();
                Some(pages::recall(&frame, &home, &q))
            }
            _ if path.starts_with("/memory/") => pages::memory_file(&frame, &home, &path[1..]),
            _ if path.starts_with("/jobs/") => {
                pages::job(&frame, &home, &path["/jobs/".len()..], acts)
            }
            _ => {
                if let Some(n) = number("/ticks/") {
                    pages::tick(&frame, &home, n)
                } else if let Some(n) = number("/proposals/") {
                    pages::proposal(&frame, &home, n, acts)
                } else if let Some(n) = number("/requests/") {
                    pages::request(&frame, &home, n, acts)
                } else {
                    None
                }
            }
        }
        .ok_or_else(|| pages::not_found(&frame));
        give_back_freed_memory();
        rendered
    })
    .await;
    match rendered {
        Ok(Ok(markup)) => html(StatusCode::OK, markup),
        Ok(Err(missing)) => html(StatusCode::NOT_FOUND, missing),
        Err(e) => text(
            StatusCode::INTERNAL_SERVER_ERROR,
            &format!("the page failed: {e}"),
        ),
    }
}
