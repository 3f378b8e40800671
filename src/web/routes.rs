//! One home's pages: the route table of what each path shows (a GET,
//! rendered off the async threads) or does (a POST under `--allow-act`),
//! behind the session and the home the path is about.

use std::sync::Arc;

use axum::extract::rejection::PathRejection;
use axum::extract::{Path, RawQuery, Request, State};
use axum::middleware::{self, Next};
use axum::response::Response;
use axum::routing::{get, post, MethodRouter};
use axum::{Extension, Router};
use http::{Method, StatusCode};

use super::acts::PageAct;
use super::form::Form;
use super::homes::Addressed;
use super::respond::{html, see_other, text};
use super::state::{At, Page};
use super::{events, gate, pages, talk};
use crate::home::Home;

/// Everything of the homes a page serves: the session first
/// ([`gate::signed_in`]), then the home the path names ([`to_the_home`],
/// which answers the index of `--homes` and a missing home itself), then
/// the home's own route table, whose acts pass [`gate::acts_allowed`].
pub(super) fn homes(page: Arc<Page>) -> Router {
    let pages = Router::new()
        .route("/", view(|f, home, _| Some(pages::today(f, home))))
        .route(
            "/incidents",
            view(|f, home, acts| Some(pages::incidents(f, home, acts))),
        )
        .route(
            "/proposals",
            view(|f, home, acts| Some(pages::proposals(f, home, acts))),
        )
        .route("/proposals/{n}", view_of(pages::proposal))
        .route("/requests/{n}", view_of(pages::request))
        .route(
            "/ticks/{n}",
            view_of(|f, home, n, _| pages::tick(f, home, n)),
        )
        .route("/jobs", view(|f, home, _| Some(pages::jobs(f, home))))
        .route(
            "/jobs/{name}",
            view_of(|f, home, name: String, acts| pages::job(f, home, &name, acts)),
        )
        .route("/spend", view(|f, home, _| Some(pages::spend(f, home))))
        .route("/memory", view(|f, home, _| Some(pages::memory(f, home))))
        .route("/memory/", view(|f, home, _| Some(pages::memory(f, home))))
        .route(
            "/memory/{*path}",
            view_of(|f, home, path: String, _| {
                pages::memory_file(f, home, &format!("memory/{path}"))
            }),
        )
        .route("/recall", get(recall))
        .route("/talk", get(thread))
        .route("/talk/say", post(talk::say))
        .route("/talk/ask", post(talk::ask))
        .route("/talk/read", post(talk::read))
        .route("/talk/send", post(talk::send))
        .route("/events", get(events::stream))
        .route("/proposals/{n}/accept", decide(PageAct::Accept))
        .route("/proposals/{n}/reject", decide(PageAct::Reject))
        .route("/requests/{n}/approve", decide(PageAct::Approve))
        .route("/requests/{n}/decline", decide(PageAct::Decline))
        .route("/jobs/{name}/run", decide(PageAct::RunJob))
        .route(
            "/incidents/acknowledge",
            post(|seen: OfHome, Form(d): Form<ActForm>| act(seen, PageAct::Acknowledge, d)),
        )
        .fallback(nothing_here)
        .method_not_allowed_fallback(nothing_here)
        .layer(middleware::from_fn_with_state(
            Arc::clone(&page),
            gate::acts_allowed,
        ))
        .with_state(Arc::clone(&page));
    Router::new()
        .fallback_service(pages)
        .layer(middleware::from_fn_with_state(
            Arc::clone(&page),
            to_the_home,
        ))
        .layer(middleware::from_fn_with_state(page, gate::signed_in))
}

/// The home the path names, put on the request ([`At`]) with the path
/// made the page within it; or the answer itself: the index of
/// `--homes`, or no such home.
async fn to_the_home(State(page): State<Arc<Page>>, mut request: Request, next: Next) -> Response {
    let (home, base, rest) = match page.homes.resolve(request.uri().path()) {
        Addressed::Index => {
            let homes = page.homes.clone();
            let now = page.clock.now();
            let listed =
                tokio::task::spawn_blocking(move || pages::index(&homes.list(), now)).await;
            return match listed {
                Ok(markup) => html(StatusCode::OK, markup),
                Err(e) => text(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    &format!("the page failed: {e}"),
                ),
            };
        }
        Addressed::Missing => return text(StatusCode::NOT_FOUND, "there is no such home here"),
        Addressed::Home { home, base, rest } => (home, base, rest),
    };
    let within = match request.uri().query() {
        Some(query) => format!("{rest}?{query}"),
        None => rest,
    };
    match within.parse() {
        Ok(uri) => *request.uri_mut() = uri,
        Err(_) => return text(StatusCode::NOT_FOUND, "there is no such page"),
    }
    request.extensions_mut().insert(At { home, base });
    next.run(request).await
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

/// A view of the home, rendered off the async threads by `render`
/// (`None`: there is no such thing, 404 in the page's frame).
async fn render<F>(page: Arc<Page>, at: At, render: F) -> Response
where
    F: FnOnce(&pages::Frame, &Home, bool) -> Option<maud::Markup> + Send + 'static,
{
    let rendered = tokio::task::spawn_blocking(move || {
        let frame = pages::Frame::of(&at.home, &at.base, page.clock.now());
        let rendered =
            render(&frame, &at.home, page.allow_act).ok_or_else(|| pages::not_found(&frame));
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

/// What every handler of a home is given: the page and the home.
type OfHome = (State<Arc<Page>>, Extension<At>);

/// A view of the home: what `show` renders of it (`None`: 404).
fn view(show: fn(&pages::Frame, &Home, bool) -> Option<maud::Markup>) -> MethodRouter<Arc<Page>> {
    get(move |(State(page), Extension(at)): OfHome| render(page, at, show))
}

/// A view of one thing of the home, named by the path (`Path<u64>`, a
/// name): what `show` renders of it (`None`, or a path that does not
/// name one: 404).
fn view_of<T>(
    show: fn(&pages::Frame, &Home, T, bool) -> Option<maud::Markup>,
) -> MethodRouter<Arc<Page>>
where
    T: serde::de::DeserializeOwned + Send + 'static,
{
    get(
        move |(State(page), Extension(at)): OfHome, named: Result<Path<T>, PathRejection>| async move {
            match named {
                Ok(Path(what)) => {
                    render(page, at, move |f, home, acts| show(f, home, what, acts)).await
                }
                Err(_) => render(page, at, |_, _, _| None).await,
            }
        },
    )
}

/// What `/recall` is asked (`?q=`).
#[derive(Debug, Default, serde::Deserialize)]
struct RecallQuery {
    #[serde(default)]
    q: String,
}

async fn recall((State(page), Extension(at)): OfHome, RawQuery(query): RawQuery) -> Response {
    let asked: RecallQuery = super::form::query(query.as_deref());
    render(page, at, move |f, home, _| {
        Some(pages::recall(f, home, &asked.q))
    })
    .await
}

/// Which page of the thread (`?before=N`).
#[derive(Debug, Default, serde::Deserialize)]
struct ThreadQuery {
    before: Option<u64>,
}

async fn thread((State(page), Extension(at)): OfHome, RawQuery(query): RawQuery) -> Response {
    let asked: ThreadQuery = super::form::query(query.as_deref());
    render(page, at, move |f, home, acts| {
        Some(pages::talk(f, home, asked.before, acts))
    })
    .await
}

/// A path of no page: the page's 404 for a look, "no such act" for a
/// POST.
async fn nothing_here(
    State(page): State<Arc<Page>>,
    at: Option<Extension<At>>,
    method: Method,
) -> Response {
    match (method, at) {
        (Method::POST, _) | (_, None) => text(StatusCode::NOT_FOUND, "there is no such act"),
        (_, Some(Extension(at))) => render(page, at, |_, _, _| None).await,
    }
}

/// A decision's form: what the page showed — a proposal's commit, a
/// request's or a job's digest, an incident's key — and the reason given.
#[derive(Debug, Default, serde::Deserialize)]
struct ActForm {
    commit: Option<String>,
    digest: Option<String>,
    key: Option<String>,
    reason: Option<String>,
}

/// A decision on the thing the path names (`/proposals/N/accept`,
/// `/jobs/NAME/run`…), with its form.
fn decide<T>(act_on: fn(T) -> PageAct) -> MethodRouter<Arc<Page>>
where
    T: serde::de::DeserializeOwned + Send + 'static,
{
    post(
        move |seen: OfHome, Path(what): Path<T>, Form(form): Form<ActForm>| {
            act(seen, act_on(what), form)
        },
    )
}

/// The operator's act, the same commit the CLI makes, on the version the
/// page showed; one that changed since is refused, not taken. Back to the
/// act's view when it is taken.
async fn act((State(page), Extension(at)): OfHome, act: PageAct, decision: ActForm) -> Response {
    let seen = [decision.commit, decision.digest, decision.key]
        .into_iter()
        .flatten()
        .next()
        .unwrap_or_default();
    let reason = decision.reason.filter(|r| !r.trim().is_empty());
    let back = format!("{}{}", at.base, act.back_to());
    let done = tokio::task::spawn_blocking(move || {
        act.take(&at.home, &seen, reason.as_deref(), page.clock.now())
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
