//! Reading the model's reply: its `run_command` calls, from `tool_calls` or inline
//! `<tool_call>` blocks, and the tool definition the episodes offer.

use metaclaw_learn::reply::parse_reply;
use serde_json::{Value, json};

/// A tool call of the model's reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    pub id: String,
    pub name: String,
    /// `arguments.command`, when it is a string.
    pub command: Option<String>,
}

/// The assistant message to keep in the conversation, and its tool calls: from `tool_calls`,
/// else from `<tool_call>` blocks left in the content (then moved into `tool_calls` of the
/// kept message, so the tool answers have calls to refer to). A call without an id gets one.
pub fn read_reply(message: &Value) -> (Value, Vec<Call>) {
    let mut kept = message.clone();
    let mut calls = Vec::new();
    if let Some(list) = kept.get_mut("tool_calls").and_then(Value::as_array_mut) {
        for (i, entry) in list.iter_mut().enumerate() {
            let id = match entry.get("id").and_then(Value::as_str) {
                Some(id) if !id.is_empty() => id.to_owned(),
                _ => {
                    let id = format!("call_rollout_{i}");
                    if let Some(obj) = entry.as_object_mut() {
                        obj.insert("id".into(), json!(id));
                    }
                    id
                }
            };
            let function = entry.get("function");
            calls.push(Call {
                id,
                name: function
                    .and_then(|f| f.get("name"))
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
                command: command_of(function.and_then(|f| f.get("arguments"))),
            });
        }
    }
    if !calls.is_empty() {
        return (kept, calls);
    }
    let content = message.get("content").and_then(Value::as_str).unwrap_or("");
    if !content.contains("<tool_call>") {
        return (kept, calls);
    }
    let parsed = parse_reply(content, &[]);
    if parsed.tool_calls.is_empty() {
        return (kept, calls);
    }
    let rebuilt = parsed.to_openai_message();
    if let (Some(obj), Some(new)) = (kept.as_object_mut(), rebuilt.as_object()) {
        for key in ["content", "tool_calls"] {
            if let Some(v) = new.get(key) {
                obj.insert(key.into(), v.clone());
            }
        }
    }
    let calls = parsed
        .tool_calls
        .iter()
        .map(|c| Call {
            id: c.id.clone(),
            name: c.name.clone(),
            command: command_of(Some(&Value::String(c.arguments.clone()))),
        })
        .collect();
    (kept, calls)
}

/// `command` of the arguments: a JSON object, or its text (as OpenAI sends it).
fn command_of(arguments: Option<&Value>) -> Option<String> {
    let parsed;
    let args = match arguments? {
        Value::String(s) => {
            parsed = serde_json::from_str::<Value>(s).ok()?;
            &parsed
        }
        other => other,
    };
    args.get("command")?.as_str().map(str::to_owned)
}

pub(super) fn tools() -> Value {
    json!([{
        "type": "function",
        "function": {
            "name": "run_command",
            "description": "Run one shell command in the task's working directory and return its output. Use the command `done` when the task is finished.",
            "parameters": {
                "type": "object",
                "properties": {
                    "command": {"type": "string", "description": "A shell command, or `done`."}
                },
                "required": ["command"]
            }
        }
    }])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_are_read_from_tool_calls() {
        let msg = json!({
            "role": "assistant",
            "content": null,
            "reasoning_content": "look first",
            "tool_calls": [
                {"id": "call_1", "type": "function",
                 "function": {"name": "run_command", "arguments": "{\"command\":\"ls -la\"}"}},
                {"type": "function",
                 "function": {"name": "run_command", "arguments": {"command": "pwd"}}},
                {"id": "call_3", "type": "function",
                 "function": {"name": "other", "arguments": "{\"x\":1}"}}
            ]
        });
        let (kept, calls) = read_reply(&msg);
        assert_eq!(
            calls,
            vec![
                Call {
                    id: "call_1".into(),
                    name: "run_command".into(),
                    command: Some("ls -la".into())
                },
                Call {
                    id: "call_rollout_1".into(),
                    name: "run_command".into(),
                    command: Some("pwd".into())
                },
                Call {
                    id: "call_3".into(),
                    name: "other".into(),
                    command: None
                },
            ]
        );
        assert_eq!(kept["tool_calls"][1]["id"], "call_rollout_1");
        assert_eq!(kept["reasoning_content"], "look first");
    }

    #[test]
    fn an_inline_tool_call_in_the_content_is_read_and_moved() {
        let msg = json!({
            "role": "assistant",
            "content": "Let me look.\n<tool_call>{\"name\":\"run_command\",\"arguments\":{\"command\":\"echo hi\"}}</tool_call>"
        });
        let (kept, calls) = read_reply(&msg);
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0].name, "run_command");
        assert_eq!(calls[0].command.as_deref(), Some("echo hi"));
        assert_eq!(kept["content"], "Let me look.");
        assert_eq!(kept["tool_calls"][0]["id"], json!(calls[0].id));
        assert_eq!(kept["tool_calls"][0]["function"]["name"], "run_command");
    }

    #[test]
    fn a_reply_without_a_call_has_none() {
        let msg = json!({"role": "assistant", "content": "I am done thinking."});
        let (kept, calls) = read_reply(&msg);
        assert!(calls.is_empty());
        assert_eq!(kept, msg);
        let broken = json!({"role": "assistant", "content": "<tool_call>not json</tool_call>"});
        let (kept, calls) = read_reply(&broken);
        assert!(calls.is_empty());
        assert_eq!(kept, broken);
    }
}
