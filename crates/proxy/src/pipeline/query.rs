//! The retrieval query: the newest user message without agent metadata or injected context.
//!
//! OpenClaw prefixes user text with `Conversation info (untrusted metadata):` / `Sender …`
//! JSON blocks and `Runtime:` lines; matching on those would pull the same skills every turn.

use serde_json::{Map, Value};

use crate::pipeline::inject::{BLOCK_END, BLOCK_START};

/// Characters of a message retrieval reads: its start and its end. A pasted log or file can
/// be megabytes; ranking skills and memories on all of it cost seconds and hundreds of MB per
/// request and finds nothing a few thousand characters from each end do not.
const QUERY_HEAD_CHARS: usize = 3_000;
const QUERY_TAIL_CHARS: usize = 1_000;

/// Plain text of the newest user message, cleaned for retrieval.
pub fn retrieval_query(body: &Map<String, Value>) -> String {
    let messages = messages(body);
    human_user_messages(body)
        .last()
        .and_then(|&i| messages.get(i))
        // Bounded before and after cleaning: metadata sits at the start and end too.
        .map(|m| strip_metadata(&bounded(&content_text(m.get("content")), 16)))
        .map(|t| bounded(&t, 1))
        .unwrap_or_default()
}

/// The first `QUERY_HEAD_CHARS × scale` and last `QUERY_TAIL_CHARS × scale` characters.
fn bounded(text: &str, scale: usize) -> String {
    let (head, tail) = (QUERY_HEAD_CHARS * scale, QUERY_TAIL_CHARS * scale);
    let total = text.chars().count();
    if total <= head + tail {
        return text.to_string();
    }
    let start: String = text.chars().take(head).collect();
    let end: String = text.chars().skip(total - tail).collect();
    format!("{start}\n{end}")
}

/// Indices of the user messages that carry text (oldest first). Anthropic tool results travel
/// in user messages too; they are not what the user asked, so they are left out. The same
/// rule as `metaclaw_wire::text`, but on the raw JSON both protocols share here, so the hot
/// path does not pay for a typed parse of the whole request.
pub fn human_user_messages(body: &Map<String, Value>) -> Vec<usize> {
    messages(body)
        .iter()
        .enumerate()
        .filter(|(_, m)| m.get("role").and_then(Value::as_str) == Some("user"))
        .filter(|(_, m)| has_text(m.get("content")))
        .map(|(i, _)| i)
        .collect()
}

fn messages(body: &Map<String, Value>) -> &[Value] {
    body.get("messages")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

fn has_text(content: Option<&Value>) -> bool {
    match content {
        Some(Value::String(s)) => !s.trim().is_empty(),
        Some(Value::Array(parts)) => text_parts(parts).any(|t| !t.trim().is_empty()),
        _ => false,
    }
}

fn text_parts(parts: &[Value]) -> impl Iterator<Item = &str> {
    parts
        .iter()
        .filter(|p| matches!(p.get("type").and_then(Value::as_str), Some("text") | None))
        .filter_map(|p| p.get("text").and_then(Value::as_str))
}

/// The text parts of a message's content, joined; tool results and images left out.
pub fn content_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => text_parts(parts).collect::<Vec<_>>().join("\n"),
        _ => String::new(),
    }
}

/// Removes agent metadata blocks, MetaClaw's own injected block and internal wrappers.
pub fn strip_metadata(text: &str) -> String {
    let text = remove_between(text, BLOCK_START, BLOCK_END);
    let text = remove_between(&text, "<internal-context>", "</internal-context>");
    let mut out: Vec<&str> = Vec::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let t = line.trim();
        if t.starts_with("Runtime:") {
            continue;
        }
        if is_metadata_header(t) {
            skip_metadata_body(&mut lines);
            continue;
        }
        if t.starts_with('[') && t.ends_with(']') && is_bracketed_metadata(t) {
            continue;
        }
        out.push(line);
    }
    out.join("\n").trim().to_string()
}

fn is_metadata_header(t: &str) -> bool {
    let lower = t.to_ascii_lowercase();
    lower.ends_with("(untrusted metadata):")
        || lower.starts_with("conversation info") && lower.ends_with(':')
}

fn is_bracketed_metadata(t: &str) -> bool {
    [
        "[Queued message",
        "[Conversation info",
        "[Sender",
        "[Forwarded message context",
        "[Replied message context",
    ]
    .iter()
    .any(|p| t.starts_with(p))
}

/// Skips a fenced block or a run of JSON-looking lines following a metadata header.
fn skip_metadata_body<'a>(lines: &mut std::iter::Peekable<impl Iterator<Item = &'a str>>) {
    match lines.peek().map(|l| l.trim()) {
        Some(l) if l.starts_with("```") => {
            lines.next();
            for l in lines.by_ref() {
                if l.trim().starts_with("```") {
                    break;
                }
            }
        }
        Some(l) if l.starts_with('{') => {
            let mut depth = 0i32;
            for l in lines.by_ref() {
                depth += l.matches('{').count() as i32 - l.matches('}').count() as i32;
                if depth <= 0 {
                    break;
                }
            }
        }
        _ => {}
    }
}

fn remove_between(text: &str, start: &str, end: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find(start) {
        out.push_str(&rest[..i]);
        match rest[i..].find(end) {
            Some(j) => rest = &rest[i + j + end.len()..],
            None => {
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_huge_message_gives_a_bounded_query_from_both_ends() {
        let text = format!("START {} END", "filler ".repeat(1_000_000));
        let body = json!({"messages":[{"role":"user","content":text}]});
        let q = retrieval_query(body.as_object().unwrap());
        assert!(q.chars().count() <= QUERY_HEAD_CHARS + QUERY_TAIL_CHARS + 1);
        assert!(q.starts_with("START") && q.ends_with("END"), "{}", q.len());
        let short = json!({"messages":[{"role":"user","content":"fix the flaky test"}]});
        assert_eq!(
            retrieval_query(short.as_object().unwrap()),
            "fix the flaky test"
        );
    }

    #[test]
    fn strips_openclaw_metadata() {
        let text = "Conversation info (untrusted metadata):\n```json\n{\"chat\": \"x\"}\n```\n\nSender (untrusted metadata):\n{\n  \"name\": \"ann\"\n}\nRuntime: agent=main | host=box\nWhat is the latest news on Rust?";
        assert_eq!(strip_metadata(text), "What is the latest news on Rust?");
    }

    #[test]
    fn strips_injected_block_and_wrappers() {
        let text = format!(
            "fix the bug\n{BLOCK_START}\n## Skills\nstuff\n{BLOCK_END}\n<internal-context>x</internal-context>"
        );
        assert_eq!(strip_metadata(&text), "fix the bug");
        assert_eq!(strip_metadata("[Queued message 2]\nhello"), "hello");
    }

    #[test]
    fn newest_user_text_skips_tool_results() {
        let body = json!({"messages":[
            {"role":"user","content":"first"},
            {"role":"assistant","content":[{"type":"tool_use","id":"t","name":"f","input":{}}]},
            {"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"r"}]}
        ]});
        let Value::Object(m) = body else {
            unreachable!()
        };
        assert_eq!(retrieval_query(&m), "first");
    }
}
