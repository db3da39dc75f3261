//! Rebuilds the complete non-streaming reply from the SSE bytes a client received, for
//! recording. A stream that was cut or ended in an error still yields what arrived, marked
//! `"incomplete": true`.

use crate::WireError;
use crate::anthropic::{BlockDelta, ContentBlock, MessagesResponse, StreamEvent};
use crate::openai::ChatChunk;
use crate::sse::{SseDecoder, SseEvent};
use crate::translate::ids::raw_input;
use bytes::Bytes;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

pub use crate::usage::{TokenUsage, usage_anthropic, usage_openai};

fn decode(chunks: &[Bytes]) -> Vec<SseEvent> {
    let mut decoder = SseDecoder::new();
    let mut events = Vec::new();
    for c in chunks {
        events.extend(decoder.push(c));
    }
    events.extend(decoder.finish());
    events
}

#[derive(Default)]
struct ChoiceAcc {
    role: Option<String>,
    content: String,
    reasoning: String,
    tools: BTreeMap<u32, ToolAcc>,
    finish_reason: Option<String>,
}

#[derive(Default)]
struct ToolAcc {
    id: String,
    kind: String,
    name: String,
    arguments: String,
}

/// OpenAI chunks → `chat.completion` JSON.
pub fn assemble_openai_sse(chunks: &[Bytes]) -> Result<Value, WireError> {
    let mut any = false;
    let (mut id, mut created, mut model) = (String::new(), 0, String::new());
    let mut choices: BTreeMap<u32, ChoiceAcc> = BTreeMap::new();
    let mut usage = None;
    let mut error = None;
    for ev in decode(chunks) {
        let data = ev.data.trim();
        if data == "[DONE]" {
            continue;
        }
        let Ok(mut chunk) = serde_json::from_str::<ChatChunk>(data) else {
            continue;
        };
        any = true;
        if id.is_empty() {
            id = chunk.id;
        }
        if created == 0 {
            created = chunk.created;
        }
        if model.is_empty() {
            model = chunk.model;
        }
        if chunk.usage.is_some() {
            usage = chunk.usage;
        }
        if let Some(e) = chunk.extra.remove("error") {
            error = Some(e);
        }
        for choice in chunk.choices {
            let acc = choices.entry(choice.index).or_default();
            let d = choice.delta;
            if let Some(r) = d.reasoning() {
                acc.reasoning.push_str(r);
            }
            if let Some(r) = d.role {
                acc.role.get_or_insert_with(|| r.as_str().to_owned());
            }
            if let Some(c) = d.content {
                acc.content.push_str(&c);
            }
            for call in d.tool_calls.unwrap_or_default() {
                let t = acc.tools.entry(call.index).or_default();
                if let Some(id) = call.id.filter(|s| !s.is_empty())
                    && t.id.is_empty()
                {
                    t.id = id;
                }
                if let Some(kind) = call.kind
                    && t.kind.is_empty()
                {
                    t.kind = kind;
                }
                if let Some(f) = call.function {
                    if let Some(name) = f.name.filter(|s| !s.is_empty())
                        && t.name.is_empty()
                    {
                        t.name = name;
                    }
                    if let Some(a) = f.arguments {
                        t.arguments.push_str(&a);
                    }
                }
            }
            if choice.finish_reason.is_some() {
                acc.finish_reason = choice.finish_reason;
            }
        }
    }
    if !any {
        return Err(WireError::EmptyStream);
    }
    let incomplete = error.is_some()
        || choices.is_empty()
        || choices.values().any(|c| c.finish_reason.is_none());
    let choices: Vec<Value> = choices
        .into_iter()
        .map(|(index, c)| {
            let mut message = Map::new();
            message.insert(
                "role".to_owned(),
                json!(c.role.as_deref().unwrap_or("assistant")),
            );
            let content = if c.content.is_empty() && !c.tools.is_empty() {
                Value::Null
            } else {
                Value::String(c.content)
            };
            message.insert("content".to_owned(), content);
            if !c.reasoning.is_empty() {
                message.insert("reasoning_content".to_owned(), Value::String(c.reasoning));
            }
            if !c.tools.is_empty() {
                let calls: Vec<Value> = c
                    .tools
                    .into_values()
                    .map(|t| {
                        let kind = if t.kind.is_empty() {
                            "function".to_owned()
                        } else {
                            t.kind
                        };
                        json!({"id": t.id, "type": kind,
                               "function": {"name": t.name, "arguments": t.arguments}})
                    })
                    .collect();
                message.insert("tool_calls".to_owned(), Value::Array(calls));
            }
            json!({"index": index, "message": message, "finish_reason": c.finish_reason})
        })
        .collect();
    let mut out = Map::new();
    out.insert("id".to_owned(), Value::String(id));
    out.insert("object".to_owned(), json!("chat.completion"));
    out.insert("created".to_owned(), json!(created));
    out.insert("model".to_owned(), Value::String(model));
    out.insert("choices".to_owned(), Value::Array(choices));
    if let Some(u) = usage {
        out.insert(
            "usage".to_owned(),
            serde_json::to_value(u).unwrap_or(Value::Null),
        );
    }
    if incomplete {
        out.insert("incomplete".to_owned(), Value::Bool(true));
    }
    if let Some(e) = error {
        out.insert("error".to_owned(), e);
    }
    Ok(Value::Object(out))
}

struct BlockAcc {
    block: ContentBlock,
    /// `input_json_delta` pieces of a `tool_use` block.
    json: String,
}

impl BlockAcc {
    fn new(block: ContentBlock) -> Self {
        BlockAcc {
            block,
            json: String::new(),
        }
    }

    fn apply(&mut self, delta: BlockDelta) {
        match (&mut self.block, delta) {
            (ContentBlock::Text { text, .. }, BlockDelta::TextDelta { text: t, .. }) => {
                text.push_str(&t);
            }
            (
                ContentBlock::Thinking { thinking, .. },
                BlockDelta::ThinkingDelta { thinking: t, .. },
            ) => {
                thinking.push_str(&t);
            }
            (
                ContentBlock::Thinking { signature, .. },
                BlockDelta::SignatureDelta { signature: s, .. },
            ) => {
                signature.get_or_insert_with(String::new).push_str(&s);
            }
            (ContentBlock::ToolUse { .. }, BlockDelta::InputJsonDelta { partial_json, .. }) => {
                self.json.push_str(&partial_json);
            }
            _ => {}
        }
    }

    /// Parses the streamed tool input; unparseable input is kept raw under `_raw`.
    fn finish(mut self) -> ContentBlock {
        if let ContentBlock::ToolUse { input, .. } = &mut self.block
            && !self.json.trim().is_empty()
        {
            *input = serde_json::from_str(&self.json).unwrap_or_else(|_| raw_input(&self.json));
        }
        self.block
    }
}

/// A block for a delta whose `content_block_start` never arrived.
fn block_for(delta: &BlockDelta) -> ContentBlock {
    match delta {
        BlockDelta::ThinkingDelta { .. } | BlockDelta::SignatureDelta { .. } => {
            ContentBlock::Thinking {
                thinking: String::new(),
                signature: None,
                extra: Map::new(),
            }
        }
        BlockDelta::InputJsonDelta { .. } => ContentBlock::ToolUse {
            id: String::new(),
            name: String::new(),
            input: Value::Object(Map::new()),
            extra: Map::new(),
        },
        _ => ContentBlock::text(""),
    }
}

/// Anthropic events → `message` JSON.
pub fn assemble_anthropic_sse(chunks: &[Bytes]) -> Result<Value, WireError> {
    let mut any = false;
    let mut message: Option<MessagesResponse> = None;
    let mut blocks: BTreeMap<u32, BlockAcc> = BTreeMap::new();
    let mut done: Vec<(u32, ContentBlock)> = Vec::new();
    let mut stopped = false;
    let mut error = None;
    for ev in decode(chunks) {
        let Ok(event) = serde_json::from_str::<StreamEvent>(&ev.data) else {
            continue;
        };
        if matches!(event, StreamEvent::Other(_)) {
            continue;
        }
        any = true;
        match event {
            StreamEvent::MessageStart { message: m, .. } => message = Some(m),
            StreamEvent::ContentBlockStart {
                index,
                content_block,
                ..
            } => {
                blocks.insert(index, BlockAcc::new(content_block));
            }
            StreamEvent::ContentBlockDelta { index, delta, .. } => blocks
                .entry(index)
                .or_insert_with(|| BlockAcc::new(block_for(&delta)))
                .apply(delta),
            StreamEvent::ContentBlockStop { index, .. } => {
                if let Some(acc) = blocks.remove(&index) {
                    done.push((index, acc.finish()));
                }
            }
            StreamEvent::MessageDelta { delta, usage, .. } => {
                let m = message.get_or_insert_with(MessagesResponse::default);
                if delta.stop_reason.is_some() {
                    m.stop_reason = delta.stop_reason;
                }
                if delta.stop_sequence.is_some() {
                    m.stop_sequence = delta.stop_sequence;
                }
                if let Some(u) = &usage {
                    m.usage.merge(u);
                }
            }
            StreamEvent::MessageStop { .. } => stopped = true,
            StreamEvent::Error { error: e, .. } => {
                error = Some(json!({"type": e.kind, "message": e.message}));
            }
            StreamEvent::Ping { .. } | StreamEvent::Other(_) => {}
        }
    }
    if !any {
        return Err(WireError::EmptyStream);
    }
    let incomplete = !stopped || error.is_some() || !blocks.is_empty();
    done.extend(blocks.into_iter().map(|(i, acc)| (i, acc.finish())));
    done.sort_by_key(|(i, _)| *i);
    let mut message = message.unwrap_or_default();
    message.content = done.into_iter().map(|(_, b)| b).collect();
    let mut out = match serde_json::to_value(message) {
        Ok(Value::Object(m)) => m,
        _ => Map::new(),
    };
    if incomplete {
        out.insert("incomplete".to_owned(), Value::Bool(true));
    }
    if let Some(e) = error {
        out.insert("error".to_owned(), e);
    }
    Ok(Value::Object(out))
}
