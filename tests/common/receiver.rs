//! An HTTP receiver on 127.0.0.1 for what hearth sends off the box (ntfy,
//! webhooks, dead-man pings): it records every request whole and answers
//! with the status the test sets (500 while "down", 200 once back), as a
//! real receiver would. HTTP/1.1 with Content-Length bodies, one request
//! per connection.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicU16, Ordering};
use std::sync::{Arc, Mutex};

/// One request as received.
#[derive(Debug, Clone)]
pub struct Request {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// The status it was answered with.
    pub answered: u16,
}

impl Request {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or_default()
    }
}

/// The receiver.
pub struct Receiver {
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    status: Arc<AtomicU16>,
    seen: Arc<Mutex<Vec<Request>>>,
}

impl Receiver {
    /// Listens, answering 200 until told otherwise.
    pub fn start() -> Receiver {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let status = Arc::new(AtomicU16::new(200));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let (s, r) = (status.clone(), seen.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut line = String::new();
                if reader.read_line(&mut line).is_err() || line.is_empty() {
                    continue;
                }
                let mut parts = line.split_whitespace();
                let method = parts.next().unwrap_or("").to_string();
                let path = parts.next().unwrap_or("").to_string();
                let mut headers = Vec::new();
                let mut length = 0usize;
                loop {
                    let mut h = String::new();
                    if reader.read_line(&mut h).is_err() || h.trim().is_empty() {
                        break;
                    }
                    if let Some((k, v)) = h.trim_end().split_once(':') {
                        if k.eq_ignore_ascii_case("content-length") {
                            length = v.trim().parse().unwrap_or(0);
                        }
                        headers.push((k.to_string(), v.trim().to_string()));
                    }
                }
                let mut body = vec![0; length];
                let _ = reader.read_exact(&mut body);
                let answered = s.load(Ordering::SeqCst);
                r.lock().unwrap().push(Request {
                    method,
                    path,
                    headers,
                    body,
                    answered,
                });
                let reason = if answered == 200 { "OK" } else { "Error" };
                let _ = write!(
                    stream,
                    "HTTP/1.1 {answered} {reason}\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"
                );
            }
        });
        Receiver { url, status, seen }
    }

    /// What it answers from now on.
    pub fn answer(&self, status: u16) {
        self.status.store(status, Ordering::SeqCst);
    }

    /// Every request so far.
    pub fn received(&self) -> Vec<Request> {
        self.seen.lock().unwrap().clone()
    }

    /// The requests it answered 200.
    pub fn taken(&self) -> Vec<Request> {
        self.received()
            .into_iter()
            .filter(|r| r.answered == 200)
            .collect()
    }
}
