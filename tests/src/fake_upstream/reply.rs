//! The fake's deterministic "model": what it answers to a conversation, independent of the wire
//! protocol. The OpenAI and Anthropic front ends extract a [`Conversation`] and render the
//! [`Reply`] in their own shape.

use serde_json::Value;

use super::fault::{self, Fault};
use super::prefix_cache::CacheUse;

/// What the fake needs to know about a request, extracted per protocol.
#[derive(Debug, Default)]
pub struct Conversation {
    /// Text parts of the newest user message, joined with `\n` (markers still inside).
    pub newest_user_text: String,
    /// Text of the tool results when the last message is a tool result.
    pub tool_result: Option<String>,
    /// Name of the first tool offered, if any.
    pub first_tool: Option<String>,
    /// Characters of all message and system text, for the prompt token count.
    pub prompt_chars: usize,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReplyContent {
    Text(String),
    ToolCall { name: String, arguments: String },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    pub content: ReplyContent,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// Prompt-cache figures, reported only with `FakeOptions::prefix_cache`.
    pub cache: Option<CacheUse>,
}

/// Decides the reply and the fault the conversation's marker asks for.
pub fn decide(conv: &Conversation) -> (Reply, Option<Fault>) {
    let (user_text, fault) = fault::extract_marker(&conv.newest_user_text);
    let content = if let Some(result) = &conv.tool_result {
        ReplyContent::Text(format!("Tool said: {result}"))
    } else if let (Some(name), true) = (&conv.first_tool, user_text.contains("call tool")) {
        ReplyContent::ToolCall {
            name: name.clone(),
            arguments: serde_json::json!({ "query": user_text }).to_string(),
        }
    } else {
        ReplyContent::Text(format!("Echo: {user_text}"))
    };
    let completion_tokens = match &content {
        ReplyContent::Text(t) => word_count(t),
        ReplyContent::ToolCall { arguments, .. } => word_count(arguments),
    };
    let reply = Reply {
        content,
        prompt_tokens: prompt_tokens(conv.prompt_chars),
        completion_tokens,
        cache: None,
    };
    (reply, fault)
}

/// A scripted reply: exactly `text`, with the usual usage numbers.
pub fn scripted(conv: &Conversation, text: String) -> Reply {
    Reply {
        completion_tokens: word_count(&text),
        content: ReplyContent::Text(text),
        prompt_tokens: prompt_tokens(conv.prompt_chars),
        cache: None,
    }
}

/// Prompt token estimate: a quarter of the characters, at least one.
pub fn prompt_tokens(chars: usize) -> u64 {
    (chars as u64 / 4).max(1)
}

fn word_count(text: &str) -> u64 {
    (text.split_whitespace().count() as u64).max(1)
}

/// Splits text into streaming deltas, one per word, each keeping its leading whitespace, so
/// that concatenating the pieces gives the text back exactly.
pub fn text_pieces(text: &str) -> Vec<String> {
    let mut pieces = Vec::new();
    let mut current = String::new();
    let mut in_word = false;
    for ch in text.chars() {
        if ch.is_whitespace() && in_word {
            pieces.push(std::mem::take(&mut current));
            in_word = false;
        } else if !ch.is_whitespace() {
            in_word = true;
        }
        current.push(ch);
    }
    if !current.is_empty() || pieces.is_empty() {
        pieces.push(current);
    }
    pieces
}

/// Splits tool-call arguments into at least two pieces (on char boundaries), as real
/// providers stream partial JSON.
pub fn argument_pieces(arguments: &str) -> Vec<String> {
    let chars: Vec<char> = arguments.chars().collect();
    let size = (chars.len() / 3).clamp(1, 16);
    let mut pieces: Vec<String> = chars.chunks(size).map(|c| c.iter().collect()).collect();
    while pieces.len() < 2 {
        pieces.push(String::new());
    }
    pieces
}

/// Text of a content value that is a string or an array of `{type:"text", text}` parts.
/// Returns the joined text and the number of characters counted.
pub fn content_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter(|p| p.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// Every string reachable in a JSON value, summed in characters: a protocol-neutral measure of
/// how much prompt text a message carries (text parts, tool arguments, tool results).
pub fn text_chars(value: &Value) -> usize {
    match value {
        Value::String(s) => s.chars().count(),
        Value::Array(items) => items.iter().map(text_chars).sum(),
        Value::Object(map) => map
            .iter()
            .filter(|(k, _)| !matches!(k.as_str(), "type" | "role" | "id" | "tool_call_id"))
            .map(|(_, v)| text_chars(v))
            .sum(),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conv(text: &str) -> Conversation {
        Conversation {
            newest_user_text: text.into(),
            prompt_chars: text.len(),
            ..Default::default()
        }
    }

    #[test]
    fn echoes_without_marker() {
        let (reply, fault) = decide(&conv("hi there [[fault:429]]"));
        assert_eq!(reply.content, ReplyContent::Text("Echo: hi there".into()));
        assert_eq!(fault, Some(Fault::RateLimited));
        assert_eq!(reply.completion_tokens, 3);
    }

    #[test]
    fn tool_call_and_result() {
        let mut c = conv("please call tool now");
        c.first_tool = Some("search".into());
        let (reply, _) = decide(&c);
        assert_eq!(
            reply.content,
            ReplyContent::ToolCall {
                name: "search".into(),
                arguments: r#"{"query":"please call tool now"}"#.into()
            }
        );
        c.tool_result = Some("42".into());
        assert_eq!(
            decide(&c).0.content,
            ReplyContent::Text("Tool said: 42".into())
        );
    }

    #[test]
    fn pieces_reassemble() {
        for text in ["Echo: a  b c", "x", "", " lead"] {
            let pieces = text_pieces(text);
            assert_eq!(pieces.concat(), text);
        }
        assert_eq!(text_pieces("Echo: a b").len(), 3);
        let args = r#"{"query":"é"}"#;
        let pieces = argument_pieces(args);
        assert!(pieces.len() >= 2);
        assert_eq!(pieces.concat(), args);
    }
}
