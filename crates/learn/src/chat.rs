//! Prepares OpenAI chat messages (and the OpenClaw shapes agents send) for a Hugging Face
//! chat template, which expects plain string content, `system`/`user`/`assistant`/`tool`
//! roles and tool calls whose arguments are a mapping.

use serde_json::{Map, Value, json};

/// Normalises each message:
/// * role `developer` → `system`; OpenClaw `toolResult` → `tool` (with `tool_call_id`
///   from `toolCallId` and `name` from `toolName`);
/// * content arrays → one string: text parts joined with newlines (as vLLM does), image
///   parts as `[image]`, other parts dropped; null/absent content → `""`;
/// * assistant tool calls (`tool_calls`, and OpenClaw `toolCall` content parts) →
///   `{id, type: "function", function: {name, arguments}}` with `arguments` an object
///   parsed from the JSON text, because templates `tojson` it (or iterate its items); a
///   string that is not a JSON object is kept as it is; entries that are not objects are
///   dropped (they cannot be rendered);
/// * assistant reasoning (`reasoning_content`, OpenClaw `thinking` parts) → prepended to
///   the content as `<think>\n…\n</think>\n\n`, the form Qwen-style templates split off
///   (and drop from turns before the last user query), unless the content already holds
///   a `</think>`.
///
/// Other fields pass through; a message that is not an object passes through unchanged.
pub fn normalize_messages(messages: &[Value]) -> Vec<Value> {
    messages.iter().map(normalize_message).collect()
}

const IMAGE_PARTS: [&str; 3] = ["image_url", "image", "input_image"];

fn normalize_message(message: &Value) -> Value {
    let Some(obj) = message.as_object() else {
        return message.clone();
    };
    let mut out = obj.clone();
    let role = obj.get("role").and_then(Value::as_str).unwrap_or_default();
    match role {
        "developer" => {
            out.insert("role".into(), json!("system"));
        }
        "toolResult" => to_tool_message(&mut out),
        _ => {}
    }
    let flat = flatten(obj.get("content"));
    let mut content = flat.text;
    if role == "assistant" {
        let listed = match out.remove("tool_calls") {
            Some(Value::Array(calls)) => calls,
            _ => Vec::new(),
        };
        let calls: Vec<Value> = listed
            .iter()
            .chain(flat.tool_calls.iter())
            .filter(|c| c.is_object())
            .enumerate()
            .map(|(i, c)| coerce_tool_call(c, i))
            .collect();
        if !calls.is_empty() {
            out.insert("tool_calls".into(), Value::Array(calls));
        }
        let mut reasoning = flat.reasoning;
        if let Some(Value::String(r)) = out.remove("reasoning_content") {
            reasoning.insert(0, r);
        }
        let reasoning = reasoning
            .iter()
            .map(|r| r.trim())
            .filter(|r| !r.is_empty())
            .collect::<Vec<_>>()
            .join("\n");
        if !reasoning.is_empty() && !content.contains("</think>") {
            content = format!("<think>\n{reasoning}\n</think>\n\n{content}");
        }
    }
    out.insert("content".into(), Value::String(content));
    Value::Object(out)
}

/// OpenClaw `{role: "toolResult", toolCallId, toolName, content}` → an OpenAI tool message.
fn to_tool_message(out: &mut Map<String, Value>) {
    out.insert("role".into(), json!("tool"));
    if let Some(id) = out.remove("toolCallId")
        && !out.contains_key("tool_call_id")
    {
        out.insert("tool_call_id".into(), id);
    }
    if let Some(name) = out.remove("toolName")
        && !out.contains_key("name")
    {
        out.insert("name".into(), name);
    }
}

#[derive(Default)]
struct Flattened {
    text: String,
    /// OpenClaw `toolCall` parts (assistant messages).
    tool_calls: Vec<Value>,
    /// OpenClaw / Anthropic `thinking` parts (assistant messages).
    reasoning: Vec<String>,
}

fn flatten(content: Option<&Value>) -> Flattened {
    let parts: Vec<Value> = match content {
        None | Some(Value::Null) => return Flattened::default(),
        Some(Value::String(s)) => {
            return Flattened {
                text: s.clone(),
                ..Flattened::default()
            };
        }
        Some(Value::Array(parts)) => parts.clone(),
        Some(Value::Object(_)) => content.into_iter().cloned().collect(),
        Some(other) => {
            return Flattened {
                text: other.to_string(),
                ..Flattened::default()
            };
        }
    };
    let mut flat = Flattened::default();
    let mut texts = Vec::new();
    for part in parts {
        if let Value::String(s) = part {
            texts.push(s);
            continue;
        }
        let kind = part.get("type").and_then(Value::as_str).unwrap_or_default();
        let text = part.get("text").and_then(Value::as_str);
        match kind {
            k if IMAGE_PARTS.contains(&k) => texts.push("[image]".to_owned()),
            "toolCall" => flat.tool_calls.push(part),
            "thinking" => {
                if let Some(t) = part.get("thinking").and_then(Value::as_str) {
                    flat.reasoning.push(t.to_owned());
                }
            }
            _ => texts.extend(text.map(str::to_owned)),
        }
    }
    flat.text = texts.join("\n");
    flat
}

/// Any of `{id, type, function: {name, arguments}}`, `{id, name, arguments}` (OpenClaw
/// `toolCall` parts, flat shapes) → the OpenAI shape with object arguments.
fn coerce_tool_call(call: &Value, index: usize) -> Value {
    let function = call.get("function").filter(|f| f.is_object());
    let field = |key: &str| {
        function
            .and_then(|f| f.get(key))
            .or_else(|| call.get(key))
            .filter(|v| !v.is_null())
    };
    let id = call
        .get("id")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map_or_else(|| format!("call_{index}"), str::to_owned);
    let name = field("name").and_then(Value::as_str).unwrap_or_default();
    json!({
        "id": id,
        "type": "function",
        "function": {"name": name, "arguments": arguments_object(field("arguments"))},
    })
}

/// An object stays; JSON object text becomes the object; absent/blank → `{}`; anything
/// else is kept as it is (the template prints a string as written).
fn arguments_object(arguments: Option<&Value>) -> Value {
    match arguments {
        None => json!({}),
        Some(Value::String(s)) if s.trim().is_empty() => json!({}),
        Some(Value::String(s)) => serde_json::from_str::<Value>(s)
            .ok()
            .filter(Value::is_object)
            .unwrap_or_else(|| Value::String(s.clone())),
        Some(other) => other.clone(),
    }
}
