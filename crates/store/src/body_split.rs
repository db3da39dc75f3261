//! Where the repeated parts of a request or reply are in its text.
//!
//! Agents resend the whole conversation every turn, so a request is mostly parts an earlier
//! turn already sent: each element of `messages`, and the `system` prompt and `tools` list
//! (Anthropic's top-level fields; OpenAI's system prompt is the first message). Inside a
//! message, its long strings are parts too: a message resent with a prompt-cache marker added
//! or moved is a new message but the same text, and a reply's text comes back as the next
//! request's assistant message.
//!
//! Parts are byte ranges of the original text — never re-serialised — so the text between
//! them is kept literally and the body rebuilt byte for byte, whatever its whitespace, key
//! order or number formatting.

use std::ops::Range;

use serde::Deserialize;
use serde_json::value::RawValue;

/// Top-level parts shorter than this stay in the body's own text: a reference and a row
/// would cost more than they save.
const MIN_PART_BYTES: usize = 16;

/// Strings shorter than this (quotes included) stay in their part's text.
pub(crate) const MIN_STRING_BYTES: usize = 64;

/// The top-level fields whose values are resent turn after turn. Unknown fields are skipped;
/// a duplicated one makes the body unsplittable (stored whole), which is rare and safe.
#[derive(Deserialize)]
struct Top<'a> {
    #[serde(borrow, default)]
    system: Option<&'a RawValue>,
    #[serde(borrow, default)]
    tools: Option<&'a RawValue>,
    #[serde(borrow, default)]
    messages: Option<&'a RawValue>,
}

/// The byte ranges of a request's top-level parts, in order and disjoint; empty when `text`
/// is not a JSON object or has none of them.
pub(crate) fn request_spans(text: &str) -> Vec<Range<usize>> {
    // serde would also read a struct from an array; only objects are requests.
    if !text.trim_start().starts_with('{') {
        return Vec::new();
    }
    let Ok(top) = serde_json::from_str::<Top<'_>>(text) else {
        return Vec::new();
    };
    let mut values: Vec<&RawValue> = [top.system, top.tools].into_iter().flatten().collect();
    if let Some(messages) = top.messages {
        match serde_json::from_str::<Vec<&RawValue>>(messages.get()) {
            Ok(items) => values.extend(items),
            Err(_) => values.push(messages),
        }
    }
    let mut spans = Vec::with_capacity(values.len());
    for value in values {
        let Some(span) = span_in(text, value.get()) else {
            return Vec::new();
        };
        if span.len() >= MIN_PART_BYTES {
            spans.push(span);
        }
    }
    spans.sort_by_key(|s| s.start);
    let disjoint = spans.windows(2).all(|w| w[0].end <= w[1].start);
    if disjoint { spans } else { Vec::new() }
}

/// The byte ranges of the JSON string tokens (quotes included) of at least
/// [`MIN_STRING_BYTES`] in `text`, in order. Lexical: exact on JSON, and on any other text
/// merely ranges that rebuild it all the same.
pub(crate) fn string_spans(text: &str) -> Vec<Range<usize>> {
    let bytes = text.as_bytes();
    let mut spans = Vec::new();
    let mut at = 0;
    while let Some(offset) = bytes
        .get(at..)
        .and_then(|rest| rest.iter().position(|&b| b == b'"'))
    {
        let start = at + offset;
        let mut i = start + 1;
        let mut closed = false;
        while let Some(&b) = bytes.get(i) {
            match b {
                b'\\' => i += 2,
                b'"' => {
                    closed = true;
                    break;
                }
                _ => i += 1,
            }
        }
        if !closed {
            break;
        }
        let end = i + 1;
        if end - start >= MIN_STRING_BYTES {
            push_string(bytes, start..end, &mut spans);
        }
        at = end;
    }
    spans
}

/// The delimiters of MetaClaw's block as they appear in JSON text (no character in them is
/// escaped).
const BLOCK_OPEN: &[u8] = b"<metaclaw-context>";
const BLOCK_CLOSE: &[u8] = b"</metaclaw-context>";

/// Adds a long string's spans: the string, or, when MetaClaw's block was appended inside it
/// (`user` placement into string content), the text around each block and each block apart.
/// A block is the same on many messages of a session and across sessions; inside the
/// message's one string it would be stored again with every message.
fn push_string(bytes: &[u8], string: Range<usize>, spans: &mut Vec<Range<usize>>) {
    let mut from = string.start;
    let mut blocks = Vec::new();
    while let Some(open) = find(bytes, from..string.end, BLOCK_OPEN) {
        let Some(close) = find(bytes, open..string.end, BLOCK_CLOSE) else {
            break;
        };
        let end = close + BLOCK_CLOSE.len();
        blocks.push(open..end);
        from = end;
    }
    if blocks.is_empty() {
        spans.push(string);
        return;
    }
    let mut at = string.start;
    for block in blocks {
        if block.start - at >= MIN_STRING_BYTES {
            spans.push(at..block.start);
        }
        at = block.end;
        spans.push(block);
    }
    if string.end - at >= MIN_STRING_BYTES {
        spans.push(at..string.end);
    }
}

/// Where `needle` starts in `bytes[range]`.
fn find(bytes: &[u8], range: Range<usize>, needle: &[u8]) -> Option<usize> {
    bytes
        .get(range.clone())?
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|i| range.start + i)
}

/// Where `part`, a slice borrowed from `text`, lies in it. Checked rather than assumed, so a
/// value that was not borrowed from `text` makes the body unsplittable instead of wrong.
fn span_in(text: &str, part: &str) -> Option<Range<usize>> {
    let start = part.as_ptr().addr().checked_sub(text.as_ptr().addr())?;
    let span = start..start.checked_add(part.len())?;
    let same = text.get(span.clone())?.as_ptr() == part.as_ptr();
    same.then_some(span)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(text: &str) -> Vec<&str> {
        request_spans(text).into_iter().map(|s| &text[s]).collect()
    }

    #[test]
    fn messages_system_and_tools_are_found_with_their_exact_text() {
        let text = "{ \"tools\" : [ {\"name\":\"read_file\"} ] ,\n\"model\":\"m\",\
                    \"messages\":[ {\"role\":\"user\",\"content\":\"hello there\"} ,\n\
                    {\"role\":\"assistant\",\"content\":1.50e3} ],\
                    \"system\":\"You are a careful helper.\"}";
        assert_eq!(
            parts(text),
            [
                "[ {\"name\":\"read_file\"} ]",
                "{\"role\":\"user\",\"content\":\"hello there\"}",
                "{\"role\":\"assistant\",\"content\":1.50e3}",
                "\"You are a careful helper.\""
            ]
        );
    }

    #[test]
    fn short_parts_stay_in_the_text() {
        assert_eq!(
            parts(r#"{"messages":[{"role":"user"},{"role":"user","content":"x"}]}"#),
            [r#"{"role":"user","content":"x"}"#]
        );
    }

    #[test]
    fn bodies_without_parts_yield_none() {
        for text in [
            "",
            "not json",
            "[1, 2, 3]",
            r#"{"messages": []}"#,
            r#"{"model":"m"}"#,
            r#"{"messages":[{"role":"user","content":"duplicated key"}],"messages":[]}"#,
            r#"{"messages":[{"role":"user","content":"truncated"}"#,
        ] {
            assert!(request_spans(text).is_empty(), "{text}");
        }
    }

    #[test]
    fn messages_that_are_not_an_array_are_one_part() {
        assert_eq!(
            parts(r#"{"messages": {"odd": "but kept as one part"}}"#),
            [r#"{"odd": "but kept as one part"}"#]
        );
    }

    #[test]
    fn a_block_inside_a_string_is_a_span_of_its_own() {
        let block = format!(
            "<metaclaw-context>\\n{}\\n</metaclaw-context>",
            "rule ".repeat(20)
        );
        let words = "what the user asked, long enough to be a part of its own text";
        let text = format!(r#"{{"content":"{words}\n\n{block}","short":"a\n{block}"}}"#);
        let found: Vec<&str> = string_spans(&text).into_iter().map(|s| &text[s]).collect();
        assert_eq!(
            found,
            [format!("\"{words}\\n\\n"), block.clone(), block.clone()],
            "the short text before the second block stays in the body's own text"
        );
        let open = format!(r#"{{"content":"{words} <metaclaw-context> never closed"}}"#);
        assert_eq!(string_spans(&open).len(), 1);
    }

    #[test]
    fn long_strings_are_found_escapes_and_all() {
        let long = format!(r#""{}\"quoted\" \\ and \u00e9 ünïcode""#, "x".repeat(40));
        let text = format!(
            r#"{{"short":"{}","long":{long},"key":[{long}, "tail \\"]}}"#,
            "y".repeat(30)
        );
        let found: Vec<&str> = string_spans(&text).into_iter().map(|s| &text[s]).collect();
        assert_eq!(found, [long.as_str(), long.as_str()]);
        assert!(string_spans(&format!("\"{}", "z".repeat(100))).is_empty());
        assert!(string_spans(&format!("\"{}\\", "z".repeat(100))).is_empty());
    }
}
