//! A model API on 127.0.0.1 for tests: a real TCP server speaking HTTP/1.1
//! and SSE byte for byte, answering each request with the next scripted
//! reply and recording what it received.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// One scripted answer.
#[derive(Clone)]
pub enum Answer {
    /// 200 with an SSE body; `hang` keeps the connection open (silent) for
    /// that long after the last event before closing.
    Stream {
        events: Vec<String>,
        hang: Option<Duration>,
    },
    /// 200 with an SSE body, pausing between events (to see streaming).
    Paced {
        events: Vec<String>,
        pause: Duration,
    },
    /// 200 with a chunked SSE body (as llama.cpp's server sends it) whose
    /// connection drops after `events` mid-way through the next chunk's
    /// size line: a server killed mid-answer.
    Dropped { events: Vec<String> },
    /// The answer is computed from the request's body: a model that knows
    /// only what each request tells it.
    Respond(fn(&serde_json::Value) -> Answer),
    /// Like `Respond`, from a closure (a fault schedule that reads a
    /// simulated clock, say).
    Computed(Arc<dyn Fn(&serde_json::Value) -> Answer + Send + Sync>),
    /// Any status with a JSON body and extra headers.
    Status {
        status: u16,
        headers: Vec<(String, String)>,
        body: String,
    },
}

#[derive(Debug, Clone)]
pub struct Received {
    /// When the request was read in full.
    pub at: std::time::Instant,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: serde_json::Value,
}

impl Received {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

pub struct ModelServer {
    pub url: String,
    received: Arc<Mutex<Vec<Received>>>,
}

impl ModelServer {
    /// Serves `script` in order; past its end, the last answer repeats.
    pub fn start(script: Vec<Answer>) -> ModelServer {
        ModelServer::serving(script, true)
    }

    /// Like [`Self::start`], keeping no request (a month of ticks sends
    /// tens of GB of bodies: the billing server keeps its own books).
    pub fn start_unrecorded(script: Vec<Answer>) -> ModelServer {
        ModelServer::serving(script, false)
    }

    fn serving(script: Vec<Answer>, record: bool) -> ModelServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let received = Arc::new(Mutex::new(Vec::new()));
        let log = received.clone();
        std::thread::spawn(move || {
            for (n, stream) in listener.incoming().enumerate() {
                let Ok(stream) = stream else { continue };
                let answer = script[n.min(script.len() - 1)].clone();
                let log = record.then(|| log.clone());
                std::thread::spawn(move || serve(stream, answer, log));
            }
        });
        ModelServer { url, received }
    }

    pub fn received(&self) -> Vec<Received> {
        self.received.lock().unwrap().clone()
    }
}

fn serve(stream: TcpStream, answer: Answer, log: Option<Arc<Mutex<Vec<Received>>>>) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).is_err() {
        return;
    }
    let path = request_line
        .split_whitespace()
        .nth(1)
        .unwrap_or("")
        .to_string();
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            headers.push((name.trim().to_string(), value.trim().to_string()));
        }
    }
    let length: usize = headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; length];
    if reader.read_exact(&mut body).is_err() {
        return;
    }
    let body: serde_json::Value = serde_json::from_slice(&body).unwrap_or(serde_json::Value::Null);
    let answer = match answer {
        Answer::Respond(respond) => respond(&body),
        Answer::Computed(respond) => respond(&body),
        other => other,
    };
    if let Some(log) = log {
        log.lock().unwrap().push(Received {
            at: std::time::Instant::now(),
            path,
            headers,
            body,
        });
    }
    let mut out = stream;
    match answer {
        Answer::Respond(_) | Answer::Computed(_) => {}
        Answer::Paced { events, pause } => {
            write_sse(&mut out, &events, pause);
        }
        Answer::Stream { events, hang } => {
            if write_sse(&mut out, &events, Duration::ZERO) {
                if let Some(hang) = hang {
                    std::thread::sleep(hang);
                }
            }
        }
        Answer::Dropped { events } => {
            let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n";
            let _ = out.write_all(head.as_bytes());
            for event in &events {
                let _ = write!(out, "{:x}\r\n{event}\r\n", event.len());
            }
            let _ = out.write_all(b"1");
            let _ = out.flush();
            let _ = out.shutdown(std::net::Shutdown::Both);
        }
        Answer::Status {
            status,
            headers,
            body,
        } => {
            let mut head = format!(
                "HTTP/1.1 {status} Status\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n",
                body.len()
            );
            for (name, value) in headers {
                head.push_str(&format!("{name}: {value}\r\n"));
            }
            head.push_str("\r\n");
            let _ = out.write_all(head.as_bytes());
            let _ = out.write_all(body.as_bytes());
        }
    }
}

/// A 200 SSE response: each event written and flushed, `pause` after each.
/// False when the client went away.
fn write_sse(out: &mut TcpStream, events: &[String], pause: Duration) -> bool {
    let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\nconnection: close\r\n\r\n";
    if out.write_all(head.as_bytes()).is_err() {
        return false;
    }
    for event in events {
        if out.write_all(event.as_bytes()).is_err() {
            return false;
        }
        let _ = out.flush();
        if !pause.is_zero() {
            std::thread::sleep(pause);
        }
    }
    true
}

/// Anthropic's SSE events, as the API sends them.
pub mod anthropic {
    use serde_json::json;

    pub fn event(name: &str, data: serde_json::Value) -> String {
        format!("event: {name}\ndata: {data}\n\n")
    }

    /// A whole message: `text`, then one tool call per `(id, name,
    /// fragments)`, with usage.
    pub fn message(
        text: &str,
        tools: &[(&str, &str, &[&str])],
        input_tokens: u64,
        output_tokens: u64,
    ) -> Vec<String> {
        let mut events = vec![event(
            "message_start",
            json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "content": [], "model": "claude-test", "stop_reason": null, "usage": {"input_tokens": input_tokens, "output_tokens": 1, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0}}}),
        )];
        events.push(event("content_block_start", json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})));
        events.push(event("ping", json!({"type": "ping"})));
        let mid = text.len() / 2;
        let mid = (0..=mid)
            .rev()
            .find(|i| text.is_char_boundary(*i))
            .unwrap_or(0);
        for piece in [&text[..mid], &text[mid..]] {
            events.push(event("content_block_delta", json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": piece}})));
        }
        events.push(event(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": 0}),
        ));
        for (i, (id, name, fragments)) in tools.iter().enumerate() {
            let index = i + 1;
            events.push(event("content_block_start", json!({"type": "content_block_start", "index": index, "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}})));
            for fragment in fragments.iter() {
                events.push(event("content_block_delta", json!({"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": fragment}})));
            }
            events.push(event(
                "content_block_stop",
                json!({"type": "content_block_stop", "index": index}),
            ));
        }
        let stop = if tools.is_empty() {
            "end_turn"
        } else {
            "tool_use"
        };
        events.push(event("message_delta", json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null}, "usage": {"input_tokens": input_tokens, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": output_tokens}})));
        events.push(event("message_stop", json!({"type": "message_stop"})));
        events
    }

    pub fn error_event(kind: &str, message: &str) -> String {
        event(
            "error",
            json!({"type": "error", "error": {"type": kind, "message": message}}),
        )
    }

    pub fn error_body(kind: &str, message: &str) -> String {
        json!({"type": "error", "error": {"type": kind, "message": message}}).to_string()
    }
}

/// OpenAI chat-completions chunks, as the API (and Ollama, vLLM…) sends them.
pub mod openai {
    use serde_json::json;

    pub fn chunk(v: serde_json::Value) -> String {
        format!("data: {v}\n\n")
    }

    /// `text`, then tool calls (id, name, argument fragments), a usage-only
    /// chunk with `choices: null`, and `[DONE]`.
    pub fn completion(
        text: &str,
        tools: &[(&str, &str, &[&str])],
        prompt: u64,
        completion: u64,
    ) -> Vec<String> {
        let mut out = vec![chunk(
            json!({"id": "c", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": null}]}),
        )];
        for piece in text.split_inclusive(' ') {
            out.push(chunk(json!({"id": "c", "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": null}]})));
        }
        for (i, (id, name, fragments)) in tools.iter().enumerate() {
            out.push(chunk(json!({"id": "c", "choices": [{"index": 0, "delta": {"tool_calls": [{"index": i, "id": id, "type": "function", "function": {"name": name, "arguments": ""}}]}, "finish_reason": null}]})));
            for fragment in fragments.iter() {
                out.push(chunk(json!({"id": "c", "choices": [{"index": 0, "delta": {"tool_calls": [{"index": i, "function": {"arguments": fragment}}]}, "finish_reason": null}]})));
            }
        }
        let finish = if tools.is_empty() {
            "stop"
        } else {
            "tool_calls"
        };
        out.push(chunk(
            json!({"id": "c", "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}),
        ));
        out.push(chunk(json!({"id": "c", "choices": null, "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}})));
        out.push("data: [DONE]\n\n".to_string());
        out
    }
}
