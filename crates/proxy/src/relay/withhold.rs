//! An OpenAI stream relayed to a client that did not ask for usage, when MetaClaw asked the
//! upstream for it (`stream_options.include_usage`) so the turn is recorded with its tokens.
//!
//! The client must see what it would have seen without MetaClaw asking: the usage-only final
//! chunk is kept from it, and the `"usage"` member the upstream then adds to other chunks
//! (`null` on each, or the figures on the last content chunk) is cut out of their JSON text.
//! Every other byte goes through as the upstream sent it, one whole event at a time.

use std::collections::VecDeque;

use bytes::Bytes;
use metaclaw_wire::openai;

use crate::seams::TokenUsage;

const USAGE_KEY: &[u8] = b"\"usage\"";

#[derive(Default)]
pub struct Withhold {
    /// Bytes of an event not yet complete.
    buf: Vec<u8>,
    usage: Option<TokenUsage>,
}

impl Withhold {
    pub fn new() -> Self {
        Withhold::default()
    }

    /// Queues for the client every event completed by `bytes`, edited.
    pub fn push(&mut self, bytes: &[u8], out: &mut VecDeque<Bytes>) {
        self.buf.extend_from_slice(bytes);
        let mut from = 0;
        while let Some(len) = frame_len(&self.buf[from..]) {
            let frame = &self.buf[from..from + len];
            if let Some(edited) = edit(frame, &mut self.usage) {
                out.push_back(edited);
            }
            from += len;
        }
        self.buf.drain(..from);
    }

    /// Whatever is left when the upstream closed the stream, as it came.
    pub fn finish(&mut self, out: &mut VecDeque<Bytes>) {
        if !self.buf.is_empty() {
            let rest = std::mem::take(&mut self.buf);
            if let Some(b) = edit(&rest, &mut self.usage) {
                out.push_back(b);
            }
        }
    }

    /// The usage the upstream reported, once its chunk went by.
    pub fn usage(&self) -> Option<TokenUsage> {
        self.usage
    }
}

/// Length of the first complete event (through the blank line that ends it).
fn frame_len(buf: &[u8]) -> Option<usize> {
    let (mut i, mut line_start) = (0, 0);
    while i < buf.len() {
        let c = buf[i];
        if c != b'\n' && c != b'\r' {
            i += 1;
            continue;
        }
        let mut next = i + 1;
        if c == b'\r' {
            // A `\r` at the end may be the first half of `\r\n`.
            let &after = buf.get(next)?;
            if after == b'\n' {
                next += 1;
            }
        }
        if i == line_start {
            return Some(next);
        }
        line_start = next;
        i = next;
    }
    None
}

/// The event as the client gets it; `None` to keep it back (the usage-only chunk).
fn edit(frame: &[u8], usage: &mut Option<TokenUsage>) -> Option<Bytes> {
    let unchanged = || Some(Bytes::copy_from_slice(frame));
    if !frame.windows(USAGE_KEY.len()).any(|w| w == USAGE_KEY) {
        return unchanged();
    }
    let Ok(text) = std::str::from_utf8(frame) else {
        return unchanged();
    };
    let mut data_lines = text
        .match_indices("data:")
        .filter(|(at, _)| *at == 0 || matches!(text.as_bytes().get(at - 1), Some(b'\n' | b'\r')));
    let (Some((at, _)), None) = (data_lines.next(), data_lines.next()) else {
        return unchanged();
    };
    let start = at + "data:".len();
    let start = start + usize::from(text[start..].starts_with(' '));
    let end = text[start..]
        .find(['\r', '\n'])
        .map_or(text.len(), |e| start + e);
    let json = &text[start..end];
    let Some(cut) = remove_member(json, "usage") else {
        return unchanged();
    };
    // Every chunk carries `"usage": null` once usage is asked for: cut it without parsing
    // anything; only a chunk with figures is read, and kept back when it has no choices.
    if cut.value.trim() != "null" {
        if let Ok(u) = serde_json::from_str::<openai::Usage>(cut.value) {
            *usage = Some(TokenUsage::from(&u));
        }
        let Ok(chunk) = serde_json::from_str::<serde_json::Value>(json) else {
            return unchanged();
        };
        let only_usage = chunk
            .get("choices")
            .and_then(serde_json::Value::as_array)
            .is_some_and(Vec::is_empty)
            && chunk.get("usage").is_some_and(serde_json::Value::is_object);
        if only_usage {
            return None;
        }
    }
    let mut edited = String::with_capacity(frame.len());
    edited.push_str(&text[..start]);
    edited.push_str(&cut.rest);
    edited.push_str(&text[end..]);
    Some(Bytes::from(edited))
}

/// A JSON object's text with one top-level member cut out, and that member's value text.
struct Cut<'a> {
    rest: String,
    value: &'a str,
}

/// Cuts the top-level member `key` out of the object text `json`, with the comma that
/// separated it, leaving every other byte as it was. `None` when there is no such member or
/// the text is not an object.
fn remove_member<'a>(json: &'a str, key: &str) -> Option<Cut<'a>> {
    let b = json.as_bytes();
    let (mut depth, mut i) = (0usize, 0usize);
    let mut expect_key = false;
    // The `{` or `,` before the member being read.
    let mut separator = 0usize;
    while i < b.len() {
        match b[i] {
            b'"' => {
                let end = string_end(b, i)?;
                if depth == 1 && expect_key {
                    expect_key = false;
                    if &json[i + 1..end - 1] == key {
                        return cut(json, separator, i, end);
                    }
                }
                i = end;
                continue;
            }
            b'{' | b'[' => {
                depth += 1;
                if depth == 1 {
                    if b[i] != b'{' {
                        return None;
                    }
                    separator = i;
                    expect_key = true;
                }
            }
            b'}' | b']' => depth = depth.checked_sub(1)?,
            b',' if depth == 1 => {
                separator = i;
                expect_key = true;
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// Removes the member whose key spans `key_start..key_end`.
fn cut(json: &str, separator: usize, key_start: usize, key_end: usize) -> Option<Cut<'_>> {
    let b = json.as_bytes();
    let mut i = skip_ws(b, key_end);
    if b.get(i) != Some(&b':') {
        return None;
    }
    let value_start = skip_ws(b, i + 1);
    i = value_start;
    let mut depth = 0usize;
    // The value ends at the `,` or `}` that closes it at the object's own level.
    let terminator = loop {
        match *b.get(i)? {
            b'"' => {
                i = string_end(b, i)?;
                continue;
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' if depth == 0 => break i,
            b'}' | b']' => depth -= 1,
            b',' if depth == 0 => break i,
            _ => {}
        }
        i += 1;
    };
    let value = json[value_start..terminator].trim_end();
    let rest = if b[separator] == b',' {
        format!("{}{}", &json[..separator], &json[terminator..])
    } else if b[terminator] == b',' {
        let after = skip_ws(b, terminator + 1);
        format!("{}{}", &json[..key_start], &json[after..])
    } else {
        format!("{}{}", &json[..key_start], &json[terminator..])
    };
    Some(Cut { rest, value })
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while b.get(i).is_some_and(u8::is_ascii_whitespace) {
        i += 1;
    }
    i
}

/// Index just past the closing quote of the string opening at `start`.
fn string_end(b: &[u8], start: usize) -> Option<usize> {
    let mut i = start + 1;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

#[cfg(test)]
mod tests;
