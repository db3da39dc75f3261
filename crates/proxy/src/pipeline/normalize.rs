//! Small repairs so what agents really send is accepted upstream.

use serde_json::{Map, Value};

/// Claude Code puts `role:"system"` messages (reminders) inside `messages[]`, which the Messages
/// API rejects. They are sent as user turns in place, so nothing before them changes and the
/// provider's prompt cache stays warm; the API merges consecutive user turns.
pub fn anthropic_system_messages(body: &mut Map<String, Value>) -> usize {
    let Some(messages) = body.get_mut("messages").and_then(Value::as_array_mut) else {
        return 0;
    };
    let mut n = 0;
    for m in messages.iter_mut() {
        if let Some(role) = m.get_mut("role")
            && matches!(role.as_str(), Some("system" | "developer"))
        {
            *role = Value::String("user".into());
            n += 1;
        }
    }
    n
}

pub fn has_system_messages(body: &Value) -> bool {
    body.get("messages")
        .and_then(Value::as_array)
        .is_some_and(|m| {
            m.iter().any(|m| {
                matches!(
                    m.get("role").and_then(Value::as_str),
                    Some("system" | "developer")
                )
            })
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn system_messages_become_user_turns_in_place() {
        let mut b = json!({"messages":[
            {"role":"system","content":"<system-reminder>x</system-reminder>"},
            {"role":"user","content":"hi"}]})
        .as_object()
        .cloned()
        .unwrap_or_default();
        assert_eq!(anthropic_system_messages(&mut b), 1);
        assert_eq!(b["messages"][0]["role"], "user");
        assert_eq!(
            b["messages"][0]["content"],
            "<system-reminder>x</system-reminder>"
        );
    }
}
