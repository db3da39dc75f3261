//! Conversations shaped like a real client's: every request carries the system prompt, a
//! bounded recent history (user and assistant messages) and one new user message. Each
//! turn's newest message is new, so it gets a fresh context block, and the resent ones must
//! get theirs back. Messages are derived from (conversation, turn), so the client keeps no
//! state per conversation however many it runs.

use serde_json::{Value, json};

use super::client::QUESTIONS;

const SYSTEM: &str = "You are a careful coding agent. Answer briefly.";
/// What `fake-upstream --fast` answers, resent as the assistant's side of the history.
const REPLY: &str = "Echo: benchmark reply";

/// The user's words at `turn` of `conversation`: a question matching built-in skills, made
/// unique so its message key (and so its block) is new.
pub fn user_text(conversation: u64, turn: u64) -> String {
    let n = QUESTIONS.len() as u64;
    let q = QUESTIONS[((conversation.wrapping_mul(7) + turn) % n) as usize];
    format!("{q} (conversation {conversation}, message {turn})")
}

/// The request body of `turn`: the last `history` exchanges and the new user message.
pub fn request_body(conversation: u64, turn: u64, history: u64) -> String {
    let mut messages: Vec<Value> = vec![json!({"role": "system", "content": SYSTEM})];
    for i in turn.saturating_sub(history)..turn {
        messages.push(json!({"role": "user", "content": user_text(conversation, i)}));
        messages.push(json!({"role": "assistant", "content": REPLY}));
    }
    messages.push(json!({"role": "user", "content": user_text(conversation, turn)}));
    json!({"model": "fake-model", "messages": messages, "stream": false}).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn history_is_bounded_and_ends_with_the_new_message() {
        let body: Value = serde_json::from_str(&request_body(3, 10, 4)).unwrap();
        let messages = body["messages"].as_array().unwrap();
        assert_eq!(messages.len(), 1 + 2 * 4 + 1);
        assert_eq!(messages[1]["content"], user_text(3, 6));
        assert_eq!(messages.last().unwrap()["content"], user_text(3, 10));
        assert_ne!(user_text(3, 10), user_text(4, 10));
        let first: Value = serde_json::from_str(&request_body(3, 0, 4)).unwrap();
        assert_eq!(first["messages"].as_array().unwrap().len(), 2);
    }
}
