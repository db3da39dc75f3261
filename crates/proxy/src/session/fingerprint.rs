//! Session ids for clients that send none (OpenClaw): a hash of the conversation's stable start.
//!
//! Clients resend the whole history every turn, so model + system prompt + first user message
//! stay the same within a conversation and differ between conversations.

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::seams::Protocol;

pub fn of_conversation(protocol: Protocol, body: &Map<String, Value>) -> String {
    let mut hasher = Sha256::new();
    hasher.update(protocol.as_str().as_bytes());
    hasher.update([0]);
    if let Some(model) = body.get("model").and_then(Value::as_str) {
        hasher.update(model.as_bytes());
    }
    hasher.update([0]);
    let messages = body
        .get("messages")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    if protocol == Protocol::Anthropic
        && let Some(system) = body.get("system")
    {
        hash_text(&mut hasher, system);
    }
    for m in messages {
        let role = m.get("role").and_then(Value::as_str).unwrap_or_default();
        if matches!(role, "system" | "developer") {
            if let Some(c) = m.get("content") {
                hash_text(&mut hasher, c);
            }
            continue;
        }
        break;
    }
    hasher.update([0]);
    // The user's own words, as the one reader sees them: an agent's envelope in front of the
    // conversation (reminders, an internal-context message) does not decide which it is.
    if let Some(first) = metaclaw_wire::reader::user_turns(body).first() {
        hasher.update(first.words.as_bytes());
    }
    let digest = hasher.finalize();
    let hex: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
    format!("fp-{hex}")
}

/// Hashes only the text of string-or-blocks content, so `cache_control` markers that agents move
/// from turn to turn do not change the fingerprint.
fn hash_text(hasher: &mut Sha256, content: &Value) {
    match content {
        Value::String(s) => {
            hasher.update(s.as_bytes());
            hasher.update([1]);
        }
        Value::Array(parts) => {
            for p in parts {
                if let Some(t) = p.get("text").and_then(Value::as_str) {
                    hasher.update(t.as_bytes());
                    hasher.update([1]);
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn fp(v: Value) -> String {
        match v {
            Value::Object(m) => of_conversation(Protocol::Openai, &m),
            _ => String::new(),
        }
    }

    #[test]
    fn stable_across_turns_of_one_conversation() {
        let t1 = json!({"model":"m","messages":[{"role":"system","content":"S"},{"role":"user","content":"hello"}]});
        let t2 = json!({"model":"m","messages":[{"role":"system","content":"S"},{"role":"user","content":"hello"},
            {"role":"assistant","content":"hi"},{"role":"user","content":"more"}]});
        assert_eq!(fp(t1), fp(t2));
    }

    #[test]
    fn differs_between_conversations() {
        let a = json!({"model":"m","messages":[{"role":"system","content":"S"},{"role":"user","content":"hello"}]});
        let b = json!({"model":"m","messages":[{"role":"system","content":"S"},{"role":"user","content":"bye"}]});
        let c = json!({"model":"other","messages":[{"role":"system","content":"S"},{"role":"user","content":"hello"}]});
        assert_ne!(fp(a.clone()), fp(b));
        assert_ne!(fp(a), fp(c));
    }

    #[test]
    fn an_envelope_message_does_not_make_a_new_conversation() {
        let plain = json!({"model":"m","messages":[{"role":"user","content":"hello"}]});
        let wrapped = json!({"model":"m","messages":[{"role":"user","content":"hello"},
            {"role":"user","content":"<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>\nx\n<<<END_OPENCLAW_INTERNAL_CONTEXT>>>"}]});
        assert_eq!(fp(plain), fp(wrapped));
    }

    #[test]
    fn string_and_block_content_with_cache_control_agree() {
        let a = json!({"model":"m","messages":[{"role":"user","content":"hello"}]});
        let b = json!({"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"hello","cache_control":{"type":"ephemeral"}}]}]});
        assert_eq!(fp(a), fp(b));
    }
}
