//! Server-sent events over a blocking reader. The SSE crates on crates.io
//! are built on async streams; the tick is synchronous (one call at a time,
//! in a child process), and the framing is a dozen lines of the HTML spec:
//! `field: value` lines, a blank line ends an event, `:` starts a comment,
//! several `data:` lines join with `\n`.

use std::io::{self, BufRead};

/// One server-sent event.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Event {
    /// The `event:` field (empty when the server sent none).
    pub event: String,
    /// Its `data:` lines, joined by newlines.
    pub data: String,
}

/// The events of a `text/event-stream` body, as they arrive.
pub struct Events<R> {
    reader: R,
    line: String,
}

impl<R: BufRead> Events<R> {
    /// Events read from `reader`.
    pub fn new(reader: R) -> Events<R> {
        Events {
            reader,
            line: String::new(),
        }
    }
}

impl<R: BufRead> Iterator for Events<R> {
    type Item = io::Result<Event>;

    /// The next complete event; `None` at the end of the stream (an event
    /// cut off before its blank line is dropped, as the spec says).
    fn next(&mut self) -> Option<io::Result<Event>> {
        let mut event = Event::default();
        let mut has_data = false;
        loop {
            self.line.clear();
            match self.reader.read_line(&mut self.line) {
                Ok(0) => return None,
                Ok(_) => {}
                Err(e) => return Some(Err(e)),
            }
            let line = self.line.trim_end_matches(['\n', '\r']);
            if line.is_empty() {
                if has_data || !event.event.is_empty() {
                    return Some(Ok(event));
                }
                continue;
            }
            if line.starts_with(':') {
                continue;
            }
            let (field, value) = match line.split_once(':') {
                Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
                None => (line, ""),
            };
            match field {
                "event" => event.event = value.to_string(),
                "data" => {
                    if has_data {
                        event.data.push('\n');
                    }
                    event.data.push_str(value);
                    has_data = true;
                }
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Vec<Event> {
        Events::new(text.as_bytes()).map(|e| e.unwrap()).collect()
    }

    #[test]
    fn events_data_comments_and_crlf() {
        let got = parse(": keep-alive\r\nevent: ping\r\ndata: {}\r\n\r\ndata: a\ndata: b\n\nevent: x\ndata:y\n\n");
        assert_eq!(got.len(), 3);
        assert_eq!(
            got[0],
            Event {
                event: "ping".into(),
                data: "{}".into()
            }
        );
        assert_eq!(got[1].data, "a\nb");
        assert_eq!(got[2].data, "y");
    }

    #[test]
    fn a_cut_event_is_dropped() {
        assert_eq!(parse("event: a\ndata: 1\n\nevent: b\ndata: 2").len(), 1);
    }
}
