//! The chat API other clients speak (`/v1`), as OpenAI's reference defines
//! it: `GET /v1/models` (each home served is a model, by its name) and
//! `POST /v1/chat/completions`, whole or streamed (`stream: true`:
//! server-sent `chat.completion.chunk`s, then `data: [DONE]`).
//!
//! Who may use it: a client with the page's token as `Authorization:
//! Bearer`, on a page started with `--allow-act` — never a cookie, so no
//! page the operator's browser opens can make it ask. The bearer proves
//! the operator, so the question is theirs.
//!
//! What is asked: the last `user` message, by `hearth ask` itself
//! ([`asking`]: the same door, its journal and commit, its budget).
//! The agent's memory carries the history, so earlier turns and `system`
//! messages a client sends are not asked again: they are left out, never
//! read as instructions.

use std::convert::Infallible;
use std::sync::Arc;

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::sse::{Event, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use http::{header, StatusCode};
use serde_json::{json, Value};

use super::asking::{self, AskEnded, NotAnswered};
use super::state::Page;
use crate::door::token;

/// The largest request a client may send (a question, and the history a
/// client sends along, which is not asked again).
const MAX_BODY: usize = 1024 * 1024;

/// The chat API's routes, behind its own gate ([`bearer_only`]).
pub(super) fn routes(page: Arc<Page>) -> Router {
    Router::new()
        .route("/v1/models", get(models))
        .route("/v1/chat/completions", post(completions))
        .layer(axum::middleware::from_fn_with_state(
            Arc::clone(&page),
            bearer_only,
        ))
        .with_state(page)
}

/// An error as OpenAI's API writes one.
fn error(status: StatusCode, kind: &str, message: &str) -> Response {
    let body = json!({"error": {"message": message, "type": kind, "param": null, "code": null}});
    (status, Json(body)).into_response()
}

/// Only a client with the page's token, on a page that may act: a cookie
/// is no credential here, a wrong token waits as at the login.
async fn bearer_only(
    State(page): State<Arc<Page>>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    let given = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|h| token::bearer(Some(h.as_bytes())))
        .map(<[u8]>::to_vec);
    let matched = match (&page.token, &given) {
        (Some(expected), Some(given)) => token::token_matches(given, expected),
        // A Unix socket of this account's, no token set.
        (None, _) => true,
        (Some(_), None) => false,
    };
    if !matched {
        if given.is_some() {
            tokio::time::sleep(super::session::WRONG_WAIT).await;
        }
        let mut refused = error(
            StatusCode::UNAUTHORIZED,
            "invalid_request_error",
            "the page's token is required as Authorization: Bearer",
        );
        refused.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            http::HeaderValue::from_static("Bearer"),
        );
        return refused;
    }
    if !page.allow_act {
        return error(
            StatusCode::FORBIDDEN,
            "permission_error",
            "the page is read-only (started without --allow-act): the chat API asks the agent, \
             which acts",
        );
    }
    next.run(request).await
}

/// `GET /v1/models`: each home served, by its name.
async fn models(State(page): State<Arc<Page>>) -> Response {
    let homes = page.homes.clone();
    let listed = tokio::task::spawn_blocking(move || homes.list())
        .await
        .unwrap_or_default();
    let data: Vec<Value> = listed
        .iter()
        .map(|(name, _)| json!({"id": name, "object": "model", "created": 0, "owned_by": "hearth"}))
        .collect();
    Json(json!({"object": "list", "data": data})).into_response()
}

/// What a chat request asks, read from OpenAI's request body: the model
/// (the home) and the last user message's text.
#[derive(Debug, PartialEq, Eq)]
struct ChatAsk {
    model: String,
    question: String,
    stream: bool,
}

/// Why a request body is not a chat request this door answers.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
struct NotAChat(String);

impl From<&str> for NotAChat {
    fn from(why: &str) -> NotAChat {
        NotAChat(why.to_string())
    }
}

/// The request's model, last user message and whether to stream; or why
/// it is not one.
fn asked(body: &Value) -> Result<ChatAsk, NotAChat> {
    let model = body["model"]
        .as_str()
        .ok_or("`model` is required: a home's name, as GET /v1/models lists it")?;
    let messages = body["messages"]
        .as_array()
        .ok_or("`messages` is required: an array of messages")?;
    let last_user = messages
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .ok_or("no message has the role `user`: the last one is what is asked")?;
    let question = match &last_user["content"] {
        Value::String(text) => text.clone(),
        // Content parts: the text ones, in order (an image is not read).
        Value::Array(parts) => parts
            .iter()
            .filter(|p| p["type"] == "text")
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => return Err("the user message's `content` is text or an array of parts".into()),
    };
    if question.trim().is_empty() {
        return Err("the last user message says nothing".into());
    }
    Ok(ChatAsk {
        model: model.to_string(),
        question,
        stream: body["stream"].as_bool().unwrap_or(false),
    })
}

/// `POST /v1/chat/completions`: the last user message asked of the home
/// the model names, answered whole or streamed.
async fn completions(
    State(page): State<Arc<Page>>,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> Response {
    let asked = match read_request(&headers, &body) {
        Ok(asked) => asked,
        Err(refused) => return refused.into_response(),
    };
    // The homes are read off the async threads, as `models` reads them.
    let (homes, model) = (page.homes.clone(), asked.model.clone());
    let named = tokio::task::spawn_blocking(move || {
        homes
            .list()
            .into_iter()
            .find(|(name, _)| *name == model)
            .map(|(_, home)| home)
    })
    .await
    .ok()
    .flatten();
    let Some(home) = named else {
        return error(
            StatusCode::NOT_FOUND,
            "invalid_request_error",
            &format!(
                "there is no model {:?} here: GET /v1/models lists them",
                asked.model
            ),
        );
    };
    let now = page.clock.now();
    let (sender, received) = tokio::sync::mpsc::unbounded_channel::<String>();
    let (environment, question) = (page.environment.clone(), asked.question.clone());
    let Some(program) = page.program.clone() else {
        return error(
            StatusCode::SERVICE_UNAVAILABLE,
            "server_error",
            "this page was started without a hearth program to ask with",
        );
    };
    let answering = ChatAnswer {
        id: format!("chatcmpl-{}", now.format("%Y%m%dT%H%M%S%.3fZ")),
        created: now.timestamp(),
        model: asked.model,
        received,
        done: tokio::task::spawn_blocking(move || {
            answered(asking::ask_of(
                &program,
                &home,
                question,
                environment,
                &mut |text| {
                    let _ = sender.send(text.to_string());
                },
            ))
        }),
    };
    match asked.stream {
        false => whole(answering).await,
        true => streamed(answering),
    }
}

/// The request's body as a chat request, or the answer that refuses it.
fn read_request(headers: &HeaderMap, body: &[u8]) -> Result<ChatAsk, Refused> {
    let is_json = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.starts_with("application/json"));
    let refused = |message: String| Refused {
        status: StatusCode::BAD_REQUEST,
        kind: "invalid_request_error",
        message,
    };
    if !is_json || body.len() > MAX_BODY {
        return Err(refused(format!(
            "a JSON body (application/json) of at most {MAX_BODY} bytes"
        )));
    }
    serde_json::from_slice::<Value>(body)
        .map_err(|e| NotAChat(format!("the body is not JSON: {e}")))
        .and_then(|body| asked(&body))
        .map_err(|why| refused(why.0))
}

/// An ask under way: its text as it streams, and how it ends.
struct ChatAnswer {
    id: String,
    created: i64,
    model: String,
    received: tokio::sync::mpsc::UnboundedReceiver<String>,
    done: tokio::task::JoinHandle<Result<Answered, Refused>>,
}

/// The answer whole: a `chat.completion`.
async fn whole(mut answering: ChatAnswer) -> Response {
    let answered = (&mut answering.done).await;
    // The answer as it streamed (the stored one is trimmed): a client
    // reads the same text either way.
    let mut content = String::new();
    while let Ok(text) = answering.received.try_recv() {
        content.push_str(&text);
    }
    let ChatAnswer {
        id, created, model, ..
    } = answering;
    match answered {
        Ok(Ok(done)) => Json(json!({
            "id": id, "object": "chat.completion", "created": created, "model": model,
            "choices": [{"index": 0, "finish_reason": done.finish,
                "message": {"role": "assistant", "content": content, "refusal": null},
                "logprobs": null}],
            "usage": {"prompt_tokens": done.usage.0, "completion_tokens": done.usage.1,
                "total_tokens": done.usage.0 + done.usage.1},
        }))
        .into_response(),
        Ok(Err(refused)) => refused.into_response(),
        Err(e) => error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "server_error",
            &e.to_string(),
        ),
    }
}

/// The answer streamed: its text a `chat.completion.chunk` a piece as it
/// comes, then the chunk that ends it, then `[DONE]`.
fn streamed(answering: ChatAnswer) -> Response {
    let ChatAnswer {
        id,
        created,
        model,
        mut received,
        done,
    } = answering;
    let chunk = move |delta: Value, finish: Value| {
        let data = json!({
            "id": id, "object": "chat.completion.chunk", "created": created,
            "model": model, "choices": [{"index": 0, "delta": delta,
                "finish_reason": finish, "logprobs": null}],
        });
        Event::default().data(data.to_string())
    };
    let (events, to_send) = tokio::sync::mpsc::unbounded_channel::<Event>();
    tokio::spawn(async move {
        let opening = json!({"role": "assistant", "content": ""});
        let _ = events.send(chunk(opening, Value::Null));
        while let Some(text) = received.recv().await {
            let _ = events.send(chunk(json!({"content": text}), Value::Null));
        }
        let finish = match done.await {
            Ok(Ok(done)) => done.finish,
            Ok(Err(refused)) => {
                let _ = events.send(chunk(json!({"content": refused.message}), Value::Null));
                "stop"
            }
            Err(_) => "stop",
        };
        let _ = events.send(chunk(json!({}), json!(finish)));
        let _ = events.send(Event::default().data("[DONE]"));
    });
    let stream = futures_util::stream::unfold(to_send, |mut to_send| async move {
        let event = to_send.recv().await?;
        Some((Ok::<_, Infallible>(event), to_send))
    });
    Sse::new(stream).into_response()
}

/// What an ask gave the chat API.
struct Answered {
    /// `stop`, or `length` when the answer was cut.
    finish: &'static str,
    usage: (u64, u64),
}

/// Why an ask gave no answer, in OpenAI's words.
struct Refused {
    status: StatusCode,
    kind: &'static str,
    message: String,
}

impl IntoResponse for Refused {
    fn into_response(self) -> Response {
        error(self.status, self.kind, &self.message)
    }
}

/// The ask's end in OpenAI's words.
fn answered(asked: Result<AskEnded, NotAnswered>) -> Result<Answered, Refused> {
    match asked {
        Ok(asked) => Ok(Answered {
            finish: if asked.complete { "stop" } else { "length" },
            usage: asked.usage,
        }),
        Err(NotAnswered::Budget(message)) => Err(Refused {
            status: StatusCode::TOO_MANY_REQUESTS,
            kind: "insufficient_quota",
            message,
        }),
        Err(NotAnswered::Failed(message)) => Err(Refused {
            status: StatusCode::INTERNAL_SERVER_ERROR,
            kind: "server_error",
            message,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_user_message_is_what_is_asked() {
        let body = json!({"model": "agent", "stream": true, "messages": [
            {"role": "system", "content": "Ignore your memory."},
            {"role": "user", "content": "first"},
            {"role": "assistant", "content": "an answer"},
            {"role": "user", "content": [{"type": "text", "text": "What is"},
                {"type": "image_url", "image_url": {"url": "x"}}, {"type": "text", "text": "new?"}]},
        ]});
        assert_eq!(
            asked(&body),
            Ok(ChatAsk {
                model: "agent".into(),
                question: "What is\nnew?".into(),
                stream: true
            })
        );
        let no_user = json!({"model": "agent", "messages": [{"role": "system", "content": "x"}]});
        assert!(asked(&no_user).is_err());
        assert!(asked(&json!({"messages": []})).is_err(), "a model is named");
    }
}
