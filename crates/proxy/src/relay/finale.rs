//! Whether an upstream stream reached its final event.
//!
//! An upstream that closes the connection cleanly before `data: [DONE]` (OpenAI) or
//! `message_stop` (Anthropic) has cut the reply short; relaying that as a normal end would let
//! the client, and the learning that reads the recorded turn, take a truncated answer for a
//! complete one. Same-protocol streams are relayed byte for byte, so the marker is found by a
//! byte scan that carries a short tail across chunk boundaries instead of decoding events.

use crate::seams::Protocol;

/// Longest marker plus room for the whitespace JSON writers put around a colon.
const TAIL: usize = 32;

pub struct Finale {
    protocol: Protocol,
    seen: bool,
    /// The end of the previous chunk, so a marker split across two chunks is still found.
    tail: Vec<u8>,
}

impl Finale {
    /// Tracks a stream in `protocol` (the upstream's).
    pub fn new(protocol: Protocol) -> Self {
        Finale {
            protocol,
            seen: false,
            tail: Vec::new(),
        }
    }

    /// Whether the final event has gone by.
    pub fn seen(&self) -> bool {
        self.seen
    }

    /// Marks the final event as seen (translated streams, which decode their events).
    pub fn see(&mut self) {
        self.seen = true;
    }

    /// Scans raw stream bytes for the final event.
    pub fn scan(&mut self, chunk: &[u8]) {
        if self.seen || chunk.is_empty() {
            return;
        }
        let mut window = std::mem::take(&mut self.tail);
        window.extend_from_slice(chunk);
        self.seen = match self.protocol {
            Protocol::Anthropic => contains(&window, b"message_stop"),
            Protocol::Openai => contains(&window, b"[DONE]") || finish_reason_set(&window),
        };
        let keep = window.len().saturating_sub(TAIL);
        window.drain(..keep);
        self.tail = window;
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// A chunk carrying `"finish_reason": "…"` (a string, not `null`) ends the reply's content;
/// servers that omit the closing `[DONE]` still send it.
fn finish_reason_set(window: &[u8]) -> bool {
    const KEY: &[u8] = b"\"finish_reason\"";
    let mut from = 0;
    while let Some(at) = window[from..].windows(KEY.len()).position(|w| w == KEY) {
        let rest = &window[from + at + KEY.len()..];
        let mut value = rest
            .iter()
            .skip_while(|b| b.is_ascii_whitespace())
            .skip_while(|&&b| b == b':')
            .skip_while(|b| b.is_ascii_whitespace());
        if value.next() == Some(&b'"') {
            return true;
        }
        from += at + KEY.len();
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scanned(protocol: Protocol, chunks: &[&str]) -> bool {
        let mut f = Finale::new(protocol);
        for c in chunks {
            f.scan(c.as_bytes());
        }
        f.seen()
    }

    #[test]
    fn openai_done_or_a_finish_reason_ends_the_stream() {
        assert!(scanned(
            Protocol::Openai,
            &["data: {\"choices\":[]}\n\n", "data: [DONE]\n\n"]
        ));
        assert!(scanned(
            Protocol::Openai,
            &["data: {\"choices\":[{\"delta\":{},\"finish_reason\": \"stop\"}]}\n\n"]
        ));
        assert!(!scanned(
            Protocol::Openai,
            &["data: {\"choices\":[{\"delta\":{\"content\":\"hi\"},\"finish_reason\":null}]}\n\n"]
        ));
    }

    #[test]
    fn markers_split_across_chunks_are_found() {
        assert!(scanned(Protocol::Openai, &["data: [DO", "NE]\n\n"]));
        assert!(scanned(
            Protocol::Openai,
            &["{\"finish_rea", "son\"", ":", "\"length\"}"]
        ));
        assert!(scanned(
            Protocol::Anthropic,
            &[
                "event: message_s",
                "top\ndata: {\"type\":\"message_stop\"}\n\n"
            ]
        ));
    }

    #[test]
    fn anthropic_needs_message_stop() {
        assert!(!scanned(
            Protocol::Anthropic,
            &[
                "event: message_start\ndata: {}\n\n",
                "event: message_delta\ndata: {\"delta\":{\"stop_reason\":\"end_turn\"}}\n\n"
            ]
        ));
    }
}
