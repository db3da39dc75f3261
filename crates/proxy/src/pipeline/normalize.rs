//! Small repairs so what agents really send is accepted upstream.

use serde_json::{Map, Value};

/// Claude Code puts `role:"system"` messages (its `# Environment`) inside `messages[]`, which
/// the Messages API rejects. They are sent as user turns in place, so nothing before them
/// changes and the provider's prompt cache stays warm; the API merges consecutive user turns.
/// Their text is wrapped in `<system-reminder>` — the form Claude Code itself uses for the
/// same text — so the model, the recorded turn and everything that learns from it still see
/// it as the agent's context, not as something the user said.
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
            if let Some(content) = m.get_mut("content") {
                as_reminder(content);
            }
            n += 1;
        }
    }
    n
}

const REMINDER_START: &str = "<system-reminder>";
const REMINDER_END: &str = "</system-reminder>";

fn as_reminder(content: &mut Value) {
    let wrap = |text: &mut String| {
        if !text.trim_start().starts_with(REMINDER_START) {
            *text = format!("{REMINDER_START}\n{text}\n{REMINDER_END}");
        }
    };
    match content {
        Value::String(text) => wrap(text),
        Value::Array(parts) => {
            for part in parts {
                if let Some(Value::String(text)) = part.get_mut("text") {
                    wrap(text);
                }
            }
        }
        _ => {}
    }
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
    fn system_messages_become_reminder_user_turns_in_place() {
        let mut b = json!({"messages":[
            {"role":"system","content":"<system-reminder>x</system-reminder>"},
            {"role":"system","content":[{"type":"text","text":"# Environment\ncwd: /tmp"}]},
            {"role":"user","content":"hi"}]})
        .as_object()
        .cloned()
        .unwrap_or_default();
        assert_eq!(anthropic_system_messages(&mut b), 2);
        assert_eq!(b["messages"][0]["role"], "user");
        assert_eq!(
            b["messages"][0]["content"],
            "<system-reminder>x</system-reminder>"
        );
        assert_eq!(
            b["messages"][1]["content"][0]["text"],
            "<system-reminder>\n# Environment\ncwd: /tmp\n</system-reminder>"
        );
        // The one reader sees only the user's words.
        assert_eq!(metaclaw_wire::reader::newest_user_words(&b), "hi");
    }
}
