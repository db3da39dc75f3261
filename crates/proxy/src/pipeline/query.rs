//! The retrieval query: the user's own words in their newest message, bounded.
//!
//! Which text is the user's is decided by `metaclaw_wire::reader`, the one reader of
//! conversations; this module only bounds what retrieval reads.

use metaclaw_wire::reader;
use serde_json::{Map, Value};

/// Characters of a message retrieval reads: its start and its end. A pasted log or file can
/// be megabytes; ranking skills and memories on all of it cost seconds and hundreds of MB per
/// request and finds nothing a few thousand characters from each end do not.
const QUERY_HEAD_CHARS: usize = 3_000;
const QUERY_TAIL_CHARS: usize = 1_000;

/// The user's own words in their newest message, bounded for retrieval.
pub fn retrieval_query(body: &Map<String, Value>) -> String {
    bounded(&reader::newest_user_words(body))
}

/// Indices of the messages the user wrote (oldest first): not tool results, not agent
/// envelopes such as OpenClaw's internal-context message.
pub fn human_user_messages(body: &Map<String, Value>) -> Vec<usize> {
    reader::user_turns(body).iter().map(|t| t.index).collect()
}

/// The first `QUERY_HEAD_CHARS` and last `QUERY_TAIL_CHARS` characters.
fn bounded(text: &str) -> String {
    let total = text.chars().count();
    if total <= QUERY_HEAD_CHARS + QUERY_TAIL_CHARS {
        return text.to_string();
    }
    let start: String = text.chars().take(QUERY_HEAD_CHARS).collect();
    let end: String = text.chars().skip(total - QUERY_TAIL_CHARS).collect();
    format!("{start}\n{end}")
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
        assert_eq!(reader::own_words(text), "What is the latest news on Rust?");
    }

    #[test]
    fn the_openclaw_internal_context_message_is_not_the_query() {
        let body = json!({"messages":[
            {"role":"user","content":"[Thu 2026-12-03 17:38 UTC] what's the weather tomorrow in Rome?"},
            {"role":"user","content":"<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>\nSubagents: delegate\n<<<END_OPENCLAW_INTERNAL_CONTEXT>>>"}
        ]});
        let m = body.as_object().unwrap();
        assert_eq!(retrieval_query(m), "what's the weather tomorrow in Rome?");
        assert_eq!(human_user_messages(m), [0]);
    }

    #[test]
    fn strips_injected_block_and_wrappers() {
        let text = "fix the bug\n<metaclaw-context>\n## Skills\nstuff\n</metaclaw-context>\n<internal-context>x</internal-context>";
        assert_eq!(reader::own_words(text), "fix the bug");
        assert_eq!(reader::own_words("[Queued message 2]\nhello"), "hello");
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
