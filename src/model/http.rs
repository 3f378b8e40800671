//! The HTTP side of the providers: one blocking client, retries as the
//! official SDKs do them, and errors sorted by what they mean for the tick.
//!
//! Retried: 408, 409, 429, every 5xx (529 "overloaded" included) and
//! connection failures, up to `[model] max_retries` times. A server's
//! `retry-after-ms` / `retry-after` is honoured when it asks for 0–60 s;
//! otherwise the wait doubles from `[model] retry_base_ms` (capped at 8 s)
//! with jitter. A 429 that says the account is out of credit is not retried:
//! waiting will not fix it.

use std::time::Duration;

use reqwest::blocking::{Client, Response};
use serde_json::Value;

use super::ModelError;

#[derive(Debug, Clone, Copy)]
pub struct RetryPolicy {
    pub max_retries: u32,
    pub base: Duration,
}

/// Backoff never waits longer than this between attempts.
const BACKOFF_CAP: Duration = Duration::from_secs(8);
/// A server's retry-after is honoured up to this.
const RETRY_AFTER_MAX: Duration = Duration::from_secs(60);

pub struct Http {
    client: Client,
    retry: RetryPolicy,
    jitter: std::cell::Cell<u64>,
}

/// What a provider needs to call its API: the client, the full URL, the
/// model name and the key.
pub struct Endpoint {
    pub http: Http,
    pub url: String,
    pub model: String,
    pub key: String,
}

impl Endpoint {
    /// `[model] base_url` (or `default_base`) joined with `path`, and a
    /// client with `[model]`'s timeout and retries.
    pub fn new(
        config: &crate::config::ModelConfig,
        key: String,
        default_base: &str,
        path: &str,
    ) -> Result<Endpoint, ModelError> {
        let base = if config.base_url.is_empty() {
            default_base
        } else {
            config.base_url.trim_end_matches('/')
        };
        Ok(Endpoint {
            http: Http::new(
                Duration::from_secs(config.timeout_s),
                RetryPolicy {
                    max_retries: config.max_retries,
                    base: Duration::from_millis(config.retry_base_ms),
                },
            )?,
            url: format!("{base}{path}"),
            model: config.model.clone(),
            key,
        })
    }
}

impl Http {
    /// `timeout` bounds connecting, waiting for headers, and each read of a
    /// streamed body (so a stalled stream fails, a long one does not).
    pub fn new(timeout: Duration, retry: RetryPolicy) -> Result<Http, ModelError> {
        let client = Client::builder()
            .timeout(timeout)
            .connect_timeout(timeout)
            .build()
            .map_err(|e| ModelError::Call(format!("cannot build the HTTP client: {e}")))?;
        // Seeded per process: several agents behind one proxy spread out,
        // and a test can seed it to get the same waits every run.
        Ok(Http::seeded(client, retry, u64::from(std::process::id())))
    }

    fn seeded(client: Client, retry: RetryPolicy, seed: u64) -> Http {
        Http {
            client,
            retry,
            jitter: std::cell::Cell::new(seed | 1),
        }
    }

    /// The next jitter fraction in [0, 1), by xorshift64.
    fn next_jitter(&self) -> f64 {
        let mut x = self.jitter.get();
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.jitter.set(x);
        (x >> 11) as f64 / (1u64 << 53) as f64
    }

    /// POSTs `body` as JSON and reads the first successful response with
    /// `read`, retrying what is worth retrying: an error status before the
    /// body, and a server-side error the body reports after a 200 (an
    /// `overloaded_error` event is a 529 that arrived late).
    pub fn post<T>(
        &self,
        url: &str,
        headers: &[(&str, &str)],
        body: &Value,
        mut read: impl FnMut(Response) -> Result<T, ModelError>,
    ) -> Result<T, ModelError> {
        let mut attempt = 0;
        loop {
            let mut request = self.client.post(url).json(body);
            for (name, value) in headers {
                request = request.header(*name, *value);
            }
            let (retryable, wait_hint, error) = match request.send() {
                Ok(response) if response.status().is_success() => match read(response) {
                    Ok(value) => return Ok(value),
                    Err(e @ ModelError::Http { status, .. }) => {
                        (matches!(status, 408 | 409 | 429 | 500..=599), None, e)
                    }
                    Err(e) => return Err(e),
                },
                Ok(response) => {
                    let status = response.status().as_u16();
                    let wait_hint = retry_after(&response);
                    let text = response.text().unwrap_or_default();
                    let message = error_message(&text);
                    let out_of_credit = status == 429 && is_out_of_credit(&text);
                    let retryable = matches!(status, 408 | 409 | 429 | 500..=599) && !out_of_credit;
                    let error = ModelError::Http {
                        status,
                        message,
                        attempts: attempt + 1,
                    };
                    (retryable, wait_hint, error)
                }
                Err(e) if e.is_timeout() => (
                    true,
                    None,
                    ModelError::Timeout(format!("no answer from {url} in time")),
                ),
                Err(e) => (
                    e.is_connect() || e.is_request(),
                    None,
                    ModelError::Connect {
                        message: format!("{}: {}", shown_url(url), without_url(&e)),
                        attempts: attempt + 1,
                    },
                ),
            };
            if !retryable || attempt >= self.retry.max_retries {
                return Err(error.with_attempts(attempt + 1));
            }
            let wait =
                wait_hint.unwrap_or_else(|| backoff(self.retry.base, attempt, self.next_jitter()));
            tracing::warn!("{error}; retrying in {} ms", wait.as_millis());
            std::thread::sleep(wait);
            attempt += 1;
        }
    }
}

/// `retry-after-ms` or `retry-after` (seconds), when within 0–60 s.
fn retry_after(response: &Response) -> Option<Duration> {
    let header = |name| {
        response
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<f64>().ok())
    };
    let wait = header("retry-after-ms")
        .map(|ms| Duration::from_secs_f64(ms.max(0.0) / 1000.0))
        .or_else(|| header("retry-after").map(|s| Duration::from_secs_f64(s.max(0.0))))?;
    (wait <= RETRY_AFTER_MAX).then_some(wait)
}

/// The wait before retry `attempt`: doubling from `base`, capped, less a
/// jitter of up to a quarter (`fraction` in [0, 1)) so that several agents
/// behind one proxy do not retry in lockstep.
fn backoff(base: Duration, attempt: u32, fraction: f64) -> Duration {
    let exp = base.saturating_mul(1 << attempt.min(16)).min(BACKOFF_CAP);
    exp.saturating_sub(exp.mul_f64(fraction.clamp(0.0, 1.0) / 4.0))
}

/// The provider's error message from its JSON error body, else the body.
fn error_message(body: &str) -> String {
    let parsed: Option<Value> = serde_json::from_str(body).ok();
    let message = parsed
        .as_ref()
        .and_then(|v| v["error"]["message"].as_str().or(v["message"].as_str()))
        .map(str::to_string)
        .unwrap_or_else(|| body.chars().take(300).collect());
    message.trim().to_string()
}

fn is_out_of_credit(body: &str) -> bool {
    let lower = body.to_lowercase();
    [
        "insufficient_quota",
        "billing",
        "credit balance",
        "spend limit",
    ]
    .iter()
    .any(|w| lower.contains(w))
}

/// A reqwest error without its URL (the URL is named once by the caller).
/// The URL as an error may show it: no user, password or query (where a
/// proxy's credentials or a key could sit), the rest as configured.
fn shown_url(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(mut parsed) => {
            let _ = parsed.set_username("");
            let _ = parsed.set_password(None);
            parsed.set_query(None);
            parsed.to_string()
        }
        Err(_) => "the configured [model] base_url".into(),
    }
}

fn without_url(e: &reqwest::Error) -> String {
    let mut text = e.to_string();
    if let Some(url) = e.url() {
        text = text.replace(&format!(" for url ({url})"), "");
    }
    let mut source = std::error::Error::source(e);
    while let Some(inner) = source {
        text.push_str(": ");
        text.push_str(&inner.to_string());
        source = inner.source();
    }
    text
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_url_is_shown_without_credentials() {
        assert_eq!(
            super::shown_url("https://user:secret@proxy.example:8443/v1/messages?key=k"),
            "https://proxy.example:8443/v1/messages"
        );
        assert_eq!(
            super::shown_url("http://127.0.0.1:9/v1/chat/completions"),
            "http://127.0.0.1:9/v1/chat/completions"
        );
    }

    use super::*;

    #[test]
    fn backoff_doubles_and_is_capped() {
        let base = Duration::from_millis(100);
        assert_eq!(backoff(base, 0, 0.0), base);
        assert_eq!(backoff(base, 0, 0.999), base - base.mul_f64(0.999 / 4.0));
        assert_eq!(backoff(base, 3, 0.0), base * 8);
        assert_eq!(backoff(base, 30, 0.0), BACKOFF_CAP);
    }

    #[test]
    fn jitter_is_the_same_for_the_same_seed_and_stays_in_range() {
        let policy = RetryPolicy {
            max_retries: 2,
            base: Duration::from_millis(100),
        };
        let a = Http::seeded(Client::new(), policy, 42);
        let b = Http::seeded(Client::new(), policy, 42);
        let run = |h: &Http| (0..100).map(|_| h.next_jitter()).collect::<Vec<_>>();
        let (ra, rb) = (run(&a), run(&b));
        assert_eq!(ra, rb);
        assert!(ra.iter().all(|f| (0.0..1.0).contains(f)));
        assert!(ra.iter().any(|f| *f > 0.5) && ra.iter().any(|f| *f < 0.5));
    }

    #[test]
    fn error_bodies_give_their_message() {
        let body = r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
        assert_eq!(error_message(body), "Overloaded");
        assert!(is_out_of_credit(
            r#"{"error":{"code":"insufficient_quota"}}"#
        ));
    }
}
