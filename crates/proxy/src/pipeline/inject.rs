//! Puts the context block into the request (SPEC §2 Injection).
//!
//! `user` placement appends the block to the newest user message, `system` to the system prompt.
//! Keeping the block byte-identical when a message is resent (prompt-cache stickiness) needs
//! memory of past blocks; that arrives with the skills library, which owns the block's content.

use serde_json::{Map, Value, json};

use crate::config::Placement;
use crate::seams::Protocol;

pub const BLOCK_START: &str = "<metaclaw-context>";
pub const BLOCK_END: &str = "</metaclaw-context>";

/// Wraps the block in delimiters that retrieval and extraction know to strip.
pub fn delimit(block: &str) -> String {
    format!("{BLOCK_START}\n{}\n{BLOCK_END}", block.trim())
}

pub fn apply(protocol: Protocol, body: &mut Map<String, Value>, block: &str, placement: Placement) {
    let text = delimit(block);
    match placement {
        Placement::User => append_to_newest_user(body, &text),
        Placement::System => append_to_system(protocol, body, &text),
    }
}

fn append_to_newest_user(body: &mut Map<String, Value>, text: &str) {
    let Some(messages) = body.get_mut("messages").and_then(Value::as_array_mut) else {
        return;
    };
    let Some(msg) = messages
        .iter_mut()
        .rev()
        .find(|m| m.get("role").and_then(Value::as_str) == Some("user"))
    else {
        return;
    };
    match msg.get_mut("content") {
        Some(Value::String(s)) => {
            s.push_str("\n\n");
            s.push_str(text);
        }
        Some(Value::Array(parts)) => parts.push(json!({"type": "text", "text": text})),
        _ => {
            msg["content"] = Value::String(text.to_string());
        }
    }
}

fn append_to_system(protocol: Protocol, body: &mut Map<String, Value>, text: &str) {
    match protocol {
        Protocol::Anthropic => match body.get_mut("system") {
            Some(Value::String(s)) => {
                s.push_str("\n\n");
                s.push_str(text);
            }
            Some(Value::Array(blocks)) => blocks.push(json!({"type": "text", "text": text})),
            _ => {
                body.insert("system".into(), Value::String(text.to_string()));
            }
        },
        Protocol::Openai => {
            let Some(messages) = body.get_mut("messages").and_then(Value::as_array_mut) else {
                return;
            };
            let first_system = messages.iter_mut().find(|m| {
                matches!(
                    m.get("role").and_then(Value::as_str),
                    Some("system" | "developer")
                )
            });
            match first_system {
                Some(m) => match m.get_mut("content") {
                    Some(Value::String(s)) => {
                        s.push_str("\n\n");
                        s.push_str(text);
                    }
                    Some(Value::Array(parts)) => {
                        parts.push(json!({"type": "text", "text": text}));
                    }
                    _ => m["content"] = Value::String(text.to_string()),
                },
                None => messages.insert(0, json!({"role": "system", "content": text})),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn user_placement_appends_to_newest_user_message_only() {
        let mut b = map(json!({"messages":[
            {"role":"user","content":"old"},{"role":"assistant","content":"a"},
            {"role":"user","content":[{"type":"text","text":"new"}]}]}));
        apply(Protocol::Openai, &mut b, "SKILL", Placement::User);
        assert_eq!(b["messages"][0]["content"], "old");
        let parts = b["messages"][2]["content"].as_array().unwrap();
        assert_eq!(parts.len(), 2);
        assert!(parts[1]["text"].as_str().unwrap().contains("SKILL"));
    }

    #[test]
    fn system_placement_for_both_protocols() {
        let mut b = map(
            json!({"system":[{"type":"text","text":"S","cache_control":{"type":"ephemeral"}}],"messages":[]}),
        );
        apply(Protocol::Anthropic, &mut b, "X", Placement::System);
        assert_eq!(b["system"].as_array().unwrap().len(), 2);
        assert_eq!(b["system"][0]["cache_control"]["type"], "ephemeral");

        let mut b = map(json!({"messages":[{"role":"user","content":"hi"}]}));
        apply(Protocol::Openai, &mut b, "X", Placement::System);
        assert_eq!(b["messages"][0]["role"], "system");
        assert!(
            b["messages"][0]["content"]
                .as_str()
                .unwrap()
                .starts_with(BLOCK_START)
        );
    }
}
