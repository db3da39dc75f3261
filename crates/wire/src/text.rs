//! Plain text of the newest user message, used as the retrieval query.

use crate::anthropic::{self, Content, ContentBlock};
use crate::{Role, openai};

/// Text parts of the newest `user` message, joined with `\n`.
pub fn newest_user_text_openai(req: &openai::ChatRequest) -> String {
    req.messages
        .iter()
        .rev()
        .find(|m| m.role == Role::User)
        .and_then(|m| m.content.as_ref())
        .map(|c| c.text("\n").into_owned())
        .unwrap_or_default()
}

/// Text blocks of the newest `user` message that has any, joined with `\n`. Messages that
/// only carry tool results are skipped: they are the agent's plumbing, not the user's words.
pub fn newest_user_text_anthropic(req: &anthropic::MessagesRequest) -> String {
    req.messages
        .iter()
        .rev()
        .filter(|m| m.role == Role::User)
        .find(|m| has_text(&m.content))
        .map(|m| m.content.text("\n").into_owned())
        .unwrap_or_default()
}

fn has_text(content: &Content) -> bool {
    match content {
        Content::Text(_) => true,
        Content::Blocks(blocks) => blocks
            .iter()
            .any(|b| matches!(b, ContentBlock::Text { .. })),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn openai_newest_user() {
        let req: openai::ChatRequest = serde_json::from_value(json!({
            "model": "m",
            "messages": [
                {"role": "user", "content": "old"},
                {"role": "assistant", "content": "a"},
                {"role": "user", "content": [
                    {"type": "text", "text": "one"},
                    {"type": "image_url", "image_url": {"url": "https://x/y.png"}},
                    {"type": "text", "text": "two"}
                ]},
                {"role": "tool", "tool_call_id": "c", "content": "tool out"}
            ]
        }))
        .unwrap();
        assert_eq!(newest_user_text_openai(&req), "one\ntwo");
    }

    #[test]
    fn anthropic_skips_tool_result_only_messages() {
        let req: anthropic::MessagesRequest = serde_json::from_value(json!({
            "model": "m",
            "messages": [
                {"role": "user", "content": [{"type": "text", "text": "fix it"}, {"type": "text", "text": "please"}]},
                {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "x", "input": {}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "ok"}]}
            ]
        }))
        .unwrap();
        assert_eq!(newest_user_text_anthropic(&req), "fix it\nplease");
    }

    #[test]
    fn empty_when_no_user() {
        let req = openai::ChatRequest::default();
        assert_eq!(newest_user_text_openai(&req), "");
        let req = anthropic::MessagesRequest::default();
        assert_eq!(newest_user_text_anthropic(&req), "");
    }
}
