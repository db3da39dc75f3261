//! Turns a sampled completion (decoded with special tokens kept, so the markers are still
//! there) into an OpenAI assistant message: thinking becomes `reasoning_content`, inline
//! tool calls (Qwen `<tool_call>{json}</tool_call>`, Kimi `<|tool_call_begin|>` markers)
//! become `tool_calls`, and what remains is the content.
//!
//! Nothing the model wrote is lost: a tool-call block that cannot be read as a call
//! (invalid JSON, no name, arguments that are not a JSON object) stays in the content.
//! Unlike the earlier proxy, no tool name is guessed from the arguments: running `exec`
//! because the arguments hold a `command` could run a tool the model never named, while
//! an unknown name is answered by the agent with an error the trainer can learn from.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Map, Value, json};

const THINK_OPEN: &str = "<think>";
const THINK_CLOSE: &str = "</think>";
const QWEN_OPEN: &str = "<tool_call>";
const QWEN_CLOSE: &str = "</tool_call>";
const KIMI_OPEN: &str = "<|tool_call_begin|>";
const KIMI_ARGS: &str = "<|tool_call_argument_begin|>";
const KIMI_CLOSE: &str = "<|tool_call_end|>";
/// Framing around Kimi calls; removed once the calls inside are handled.
const KIMI_SECTION: [&str; 2] = ["<|tool_calls_section_begin|>", "<|tool_calls_section_end|>"];

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCall {
    /// `call_` + 16 hex digits, unique per call (not derived from the text, so a repeated
    /// identical call in a later turn gets a different id).
    pub id: String,
    pub name: String,
    /// JSON object text.
    pub arguments: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ParsedReply {
    pub reasoning: Option<String>,
    pub content: String,
    pub tool_calls: Vec<ToolCall>,
}

/// Parses `text`, the decoded completion with special tokens kept. The text ends at the
/// first of `end_markers` (e.g. `<|im_end|>`, `<|endoftext|>`, the eos token): the
/// sampler stops there, so nothing after it belongs to the reply.
///
/// Thinking: `<think>…</think>` pairs; text before a lone `</think>` (the generation
/// prompt opened `<think>`); an unclosed `<think>` runs to the end (cut off by the token
/// limit). Pieces are trimmed and joined with newlines; none → `None`. Tool calls are
/// read only outside thinking.
pub fn parse_reply(text: &str, end_markers: &[&str]) -> ParsedReply {
    let text = cut_at_end_marker(text, end_markers);
    let (reasoning, rest) = split_thinking(text);
    let (content, tool_calls) = extract_tool_calls(&rest);
    ParsedReply {
        reasoning,
        content: content.trim().to_owned(),
        tool_calls,
    }
}

impl ParsedReply {
    /// The OpenAI assistant message. `content` is null when the reply is only tool calls
    /// (as OpenAI sends it), `""` when the reply is empty.
    pub fn to_openai_message(&self) -> Value {
        let mut msg = Map::new();
        msg.insert("role".into(), json!("assistant"));
        let content = if self.content.is_empty() && !self.tool_calls.is_empty() {
            Value::Null
        } else {
            Value::String(self.content.clone())
        };
        msg.insert("content".into(), content);
        if let Some(reasoning) = &self.reasoning {
            msg.insert("reasoning_content".into(), json!(reasoning));
        }
        if !self.tool_calls.is_empty() {
            let calls = self
                .tool_calls
                .iter()
                .map(|c| {
                    json!({
                        "id": c.id,
                        "type": "function",
                        "function": {"name": c.name, "arguments": c.arguments},
                    })
                })
                .collect();
            msg.insert("tool_calls".into(), Value::Array(calls));
        }
        Value::Object(msg)
    }

    /// `"tool_calls"` when there are tool calls, else `fallback` (`"stop"` or `"length"`).
    pub fn finish_reason<'a>(&self, fallback: &'a str) -> &'a str {
        if self.tool_calls.is_empty() {
            fallback
        } else {
            "tool_calls"
        }
    }
}

fn cut_at_end_marker<'t>(text: &'t str, end_markers: &[&str]) -> &'t str {
    let end = end_markers
        .iter()
        .filter(|m| !m.is_empty())
        .filter_map(|m| text.find(m))
        .min()
        .unwrap_or(text.len());
    &text[..end]
}

/// Splits thinking from the rest; returns the joined reasoning and the text outside it.
fn split_thinking(text: &str) -> (Option<String>, String) {
    let mut pieces = Vec::new();
    let mut outside = String::new();
    let mut rest = text;
    if let Some(close) = rest.find(THINK_CLOSE)
        && !rest[..close].contains(THINK_OPEN)
    {
        pieces.push(&rest[..close]);
        rest = &rest[close + THINK_CLOSE.len()..];
    }
    while let Some(open) = rest.find(THINK_OPEN) {
        outside.push_str(&rest[..open]);
        let inside = &rest[open + THINK_OPEN.len()..];
        match inside.find(THINK_CLOSE) {
            Some(close) => {
                pieces.push(&inside[..close]);
                rest = &inside[close + THINK_CLOSE.len()..];
            }
            None => {
                pieces.push(inside);
                rest = "";
            }
        }
    }
    outside.push_str(rest);
    let reasoning = pieces
        .iter()
        .map(|p| p.trim())
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join("\n");
    ((!reasoning.is_empty()).then_some(reasoning), outside)
}

/// Removes every readable tool-call block from `text`, in order of appearance.
fn extract_tool_calls(text: &str) -> (String, Vec<ToolCall>) {
    let mut content = String::new();
    let mut calls = Vec::new();
    let mut rest = text;
    loop {
        let next = [(QWEN_OPEN, QWEN_CLOSE), (KIMI_OPEN, KIMI_CLOSE)]
            .into_iter()
            .filter_map(|(open, close)| rest.find(open).map(|at| (at, open, close)))
            .min_by_key(|(at, _, _)| *at);
        let Some((start, open, close)) = next else {
            break;
        };
        content.push_str(&rest[..start]);
        let after = &rest[start + open.len()..];
        let Some(len) = after.find(close) else {
            // Unclosed (cut off by the token limit): kept as text.
            content.push_str(&rest[start..]);
            rest = "";
            break;
        };
        let body = &after[..len];
        let parsed = if open == QWEN_OPEN {
            parse_qwen(body)
        } else {
            parse_kimi(body)
        };
        match parsed {
            Some((name, arguments)) => calls.push(ToolCall {
                id: new_call_id(),
                name,
                arguments,
            }),
            None => content.push_str(&rest[start..start + open.len() + len + close.len()]),
        }
        rest = &after[len + close.len()..];
    }
    content.push_str(rest);
    for marker in KIMI_SECTION {
        content = content.replace(marker, "");
    }
    (content, calls)
}

/// `{"name": …, "arguments": …}`; the name may also be `tool_name` or `function.name`,
/// the arguments `function.arguments` or `parameters` (Llama-style).
fn parse_qwen(body: &str) -> Option<(String, String)> {
    let value: Value = serde_json::from_str(body.trim()).ok()?;
    let obj = value.as_object()?;
    let function = obj.get("function").and_then(Value::as_object);
    let name = [
        obj.get("name"),
        obj.get("tool_name"),
        function.and_then(|f| f.get("name")),
    ]
    .into_iter()
    .flatten()
    .find_map(Value::as_str)?;
    let arguments = [
        obj.get("arguments"),
        function.and_then(|f| f.get("arguments")),
        obj.get("parameters"),
    ]
    .into_iter()
    .flatten()
    .find(|v| !v.is_null());
    Some((normalize_tool_name(name)?, arguments_text(arguments)?))
}

/// `functions.NAME:IDX<|tool_call_argument_begin|>{json}`.
fn parse_kimi(body: &str) -> Option<(String, String)> {
    let (name, args) = body.split_once(KIMI_ARGS)?;
    let args = args.trim();
    let arguments = if args.is_empty() {
        None
    } else {
        Some(serde_json::from_str::<Value>(args).ok()?)
    };
    Some((
        normalize_tool_name(name)?,
        arguments_text(arguments.as_ref())?,
    ))
}

/// Arguments as JSON object text: an object is serialised, a string is kept when it is
/// itself a JSON object's text, absent/null/blank means no arguments (`{}`). Anything
/// else (a string that is not an object's JSON, a number, a list) makes the block
/// unreadable as a call, so it stays in the content rather than run with invented
/// arguments.
fn arguments_text(arguments: Option<&Value>) -> Option<String> {
    match arguments {
        None | Some(Value::Null) => Some("{}".to_owned()),
        Some(obj @ Value::Object(_)) => serde_json::to_string(obj).ok(),
        Some(Value::String(s)) if s.trim().is_empty() => Some("{}".to_owned()),
        Some(Value::String(s)) => serde_json::from_str::<Value>(s)
            .ok()
            .filter(Value::is_object)
            .map(|_| s.trim().to_owned()),
        Some(_) => None,
    }
}

/// `functions.exec:0` → `exec`: drops a trailing `:N` call index and a leading
/// `functions.`/`functions_`, then takes the last dotted segment that is not a number.
/// `None` when nothing is left.
fn normalize_tool_name(raw: &str) -> Option<String> {
    let mut name = raw.trim();
    if let Some((head, index)) = name.rsplit_once(':')
        && !index.is_empty()
        && index.bytes().all(|b| b.is_ascii_digit())
    {
        name = head;
    }
    let name = name
        .strip_prefix("functions.")
        .or_else(|| name.strip_prefix("functions_"))
        .unwrap_or(name);
    name.split('.')
        .map(str::trim)
        .rfind(|s| !s.is_empty() && !s.bytes().all(|b| b.is_ascii_digit()))
        .map(str::to_owned)
}

/// `call_` + 16 hex digits: a per-process counter hashed with std's randomly keyed
/// SipHash, so ids differ across calls, replies and restarts without a RNG dependency.
fn new_call_id() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut hasher = RandomState::new().build_hasher();
    hasher.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    format!("call_{:016x}", hasher.finish())
}
