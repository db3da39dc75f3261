//! The one reader of conversations: what the user actually said.
//!
//! Real agents wrap the user's words. OpenClaw appends an extra user message holding its
//! internal context (`<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>> … <<<END_…>>>`), stamps the user's
//! text (`[Thu 2026-12-03 17:38 UTC] …`) and adds metadata (`Conversation info (untrusted
//! metadata):` JSON blocks, `Runtime:` lines). Claude Code opens the first user message with
//! `<system-reminder>` blocks and sends its environment as a `system` message inside
//! `messages`. MetaClaw itself appends `<metaclaw-context>`. Retrieval, injection placement,
//! session fingerprints, the learning digest, memory extraction and RL evidence all read the
//! conversation through this module, so each envelope is known in one place.
//!
//! It works on the raw JSON both protocols share (`messages[]` with `role` and string-or-parts
//! `content`), so the hot path pays for no typed parse. An envelope it does not know degrades
//! safely: the text stays, and only a message that is nothing but known envelopes is skipped.

mod envelope;

use serde_json::{Map, Value};

pub use envelope::{BLOCK_END, BLOCK_START, own_words};

/// One message the user wrote, as the reader sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserTurn {
    /// Position in `messages[]`.
    pub index: usize,
    /// The user's own words: every envelope, stamp and injected block removed.
    pub words: String,
}

/// The user's messages of a request, oldest first. Messages that carry only tool results or
/// only agent envelopes (OpenClaw's internal context, Claude Code's reminders) are not the
/// user's and are left out.
pub fn user_turns(body: &Map<String, Value>) -> Vec<UserTurn> {
    messages(body)
        .iter()
        .enumerate()
        .filter(|(_, m)| role(m) == Some("user"))
        .filter_map(|(index, m)| {
            let words = words_of(m);
            (!words.is_empty()).then_some(UserTurn { index, words })
        })
        .collect()
}

/// The newest message the user wrote; the context block belongs on it.
pub fn newest_user_turn(body: &Map<String, Value>) -> Option<UserTurn> {
    let messages = messages(body);
    messages
        .iter()
        .enumerate()
        .rev()
        .filter(|(_, m)| role(m) == Some("user"))
        .find_map(|(index, m)| {
            let words = words_of(m);
            (!words.is_empty()).then_some(UserTurn { index, words })
        })
}

/// The user's own words in the newest message they wrote (empty when there is none).
pub fn newest_user_words(body: &Map<String, Value>) -> String {
    newest_user_turn(body).map(|t| t.words).unwrap_or_default()
}

/// Text read from one message, at most: its first and last half of this. Everything that
/// reads the user's words (queries, digests, fingerprints, extraction) needs far less, and a
/// pasted 30 MB log must not be copied several times on the request path.
pub const MAX_READ: usize = 64 * 1024;

/// The user's own words in one message, read from at most [`MAX_READ`] bytes of its text.
fn words_of(message: &Value) -> String {
    let text = match message.get("content") {
        Some(Value::String(s)) => bounded(s).into_owned(),
        Some(Value::Array(parts)) => {
            let joined = text_parts(parts)
                .map(bounded)
                .collect::<Vec<_>>()
                .join("\n");
            bounded(&joined).into_owned()
        }
        _ => String::new(),
    };
    own_words(&text)
}

/// `text` itself when short; else its first and last `MAX_READ / 2` bytes (on character
/// boundaries) around a line that says what was left out.
fn bounded(text: &str) -> std::borrow::Cow<'_, str> {
    if text.len() <= MAX_READ {
        return text.into();
    }
    let half = MAX_READ / 2;
    let mut head_end = half;
    while !text.is_char_boundary(head_end) {
        head_end -= 1;
    }
    let mut tail_start = text.len() - half;
    while !text.is_char_boundary(tail_start) {
        tail_start += 1;
    }
    format!(
        "{}\n[… {} bytes …]\n{}",
        &text[..head_end],
        tail_start - head_end,
        &text[tail_start..]
    )
    .into()
}

/// The text of string-or-parts content.
pub fn content_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => text_parts(parts).collect::<Vec<_>>().join("\n"),
        _ => String::new(),
    }
}

fn text_parts(parts: &[Value]) -> impl Iterator<Item = &str> {
    parts
        .iter()
        .filter(|p| matches!(p.get("type").and_then(Value::as_str), Some("text") | None))
        .filter_map(|p| p.get("text").and_then(Value::as_str))
}

fn messages(body: &Map<String, Value>) -> &[Value] {
    body.get("messages")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

fn role(message: &Value) -> Option<&str> {
    message.get("role").and_then(Value::as_str)
}

#[cfg(test)]
mod tests;
