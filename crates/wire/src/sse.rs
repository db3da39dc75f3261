//! Server-sent events: an incremental decoder and an encoder.
//!
//! The decoder follows the WHATWG event-stream rules: lines end in `\n`, `\r\n` or `\r`;
//! `:` starts a comment; several `data:` lines join with `\n`; a blank line dispatches.
//! Lines are buffered as bytes, so chunk boundaries may fall anywhere, even inside a
//! UTF-8 sequence. `id` and `retry` are ignored: the proxy never reconnects.

use bytes::{BufMut, Bytes, BytesMut};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    pub event: Option<String>,
    pub data: String,
}

#[derive(Debug, Default)]
pub struct SseDecoder {
    /// Bytes of the current, unterminated line.
    line: Vec<u8>,
    /// The previous chunk ended in `\r`: a leading `\n` of the next one belongs to it.
    after_cr: bool,
    /// Nothing was decoded yet, so a leading byte-order mark is skipped.
    at_start: bool,
    event: Option<String>,
    data: String,
    has_data: bool,
}

impl SseDecoder {
    pub fn new() -> Self {
        SseDecoder {
            at_start: true,
            ..Default::default()
        }
    }

    /// Feeds a chunk and returns the events it completed.
    pub fn push(&mut self, mut chunk: &[u8]) -> Vec<SseEvent> {
        let mut out = Vec::new();
        if self.after_cr {
            self.after_cr = false;
            if let Some(rest) = chunk.strip_prefix(b"\n") {
                chunk = rest;
            }
        }
        while let Some(pos) = chunk.iter().position(|&b| b == b'\n' || b == b'\r') {
            let (line, rest) = chunk.split_at(pos);
            let mut rest = &rest[1..];
            if chunk[pos] == b'\r' {
                match rest.first() {
                    Some(b'\n') => rest = &rest[1..],
                    None => self.after_cr = true,
                    Some(_) => {}
                }
            }
            if self.line.is_empty() {
                self.process_line(line, &mut out);
            } else {
                let mut buffered = std::mem::take(&mut self.line);
                buffered.extend_from_slice(line);
                self.process_line(&buffered, &mut out);
                buffered.clear();
                self.line = buffered;
            }
            chunk = rest;
        }
        self.line.extend_from_slice(chunk);
        out
    }

    /// Ends the stream: a final event that lacked its blank line is returned.
    pub fn finish(&mut self) -> Option<SseEvent> {
        let mut out = Vec::new();
        if !self.line.is_empty() {
            let line = std::mem::take(&mut self.line);
            self.process_line(&line, &mut out);
        }
        self.after_cr = false;
        let last = self.dispatch();
        out.pop().or(last)
    }

    fn process_line(&mut self, line: &[u8], out: &mut Vec<SseEvent>) {
        let mut line = line;
        if self.at_start {
            self.at_start = false;
            line = line.strip_prefix("\u{feff}".as_bytes()).unwrap_or(line);
        }
        if line.is_empty() {
            if let Some(ev) = self.dispatch() {
                out.push(ev);
            }
            return;
        }
        if line[0] == b':' {
            return;
        }
        let (field, value) = match line.iter().position(|&b| b == b':') {
            Some(i) => {
                let v = &line[i + 1..];
                (&line[..i], v.strip_prefix(b" ").unwrap_or(v))
            }
            None => (line, &b""[..]),
        };
        match field {
            b"data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(&String::from_utf8_lossy(value));
                self.has_data = true;
            }
            b"event" => {
                self.event =
                    (!value.is_empty()).then(|| String::from_utf8_lossy(value).into_owned());
            }
            _ => {}
        }
    }

    fn dispatch(&mut self) -> Option<SseEvent> {
        let event = self.event.take();
        if !std::mem::take(&mut self.has_data) {
            return None;
        }
        Some(SseEvent {
            event,
            data: std::mem::take(&mut self.data),
        })
    }
}

/// Encodes one event. Each line of `data` (split at `\n`, `\r\n` or `\r`) gets its own
/// `data:` line, so the decoder returns it with `\n` line ends.
pub fn encode(event: Option<&str>, data: &str) -> Bytes {
    let mut buf = BytesMut::with_capacity(data.len() + event.map_or(0, str::len) + 16);
    if let Some(name) = event {
        buf.put_slice(b"event: ");
        buf.put_slice(name.as_bytes());
        buf.put_u8(b'\n');
    }
    let mut rest = data;
    loop {
        buf.put_slice(b"data: ");
        match rest.find(['\n', '\r']) {
            Some(i) => {
                buf.put_slice(&rest.as_bytes()[..i]);
                buf.put_u8(b'\n');
                let skip = if rest[i..].starts_with("\r\n") { 2 } else { 1 };
                rest = &rest[i + skip..];
            }
            None => {
                buf.put_slice(rest.as_bytes());
                buf.put_u8(b'\n');
                break;
            }
        }
    }
    buf.put_u8(b'\n');
    buf.freeze()
}
