//! Upstream Anthropic events → OpenAI chunks for the client.

use super::ids::input_to_arguments;
use super::{finish_reason_from_anthropic, unix_now, usage_to_openai};
use crate::Role;
use crate::anthropic::{self, BlockDelta, ContentBlock, StreamEvent};
use crate::openai::{ChatChunk, ChunkChoice, Delta, FunctionCallDelta, ToolCallDelta};
use serde_json::{Map, Value, json};
use std::collections::HashMap;

/// Turns upstream Anthropic events into OpenAI chunks that share one id. The caller writes
/// the final `data: [DONE]`.
#[derive(Debug)]
pub struct AnthropicToOpenAiStream {
    include_usage: bool,
    id: String,
    model: String,
    created: u64,
    role_sent: bool,
    finish_sent: bool,
    usage_sent: bool,
    /// OpenAI tool-call index of each `tool_use` block, by block index.
    tool_index: HashMap<u32, u32>,
    tool_calls: u32,
    usage: anthropic::Usage,
    /// Whether the upstream has reported any usage yet.
    usage_known: bool,
}

impl AnthropicToOpenAiStream {
    pub fn new(include_usage: bool) -> Self {
        AnthropicToOpenAiStream {
            include_usage,
            id: "chatcmpl-stream".to_owned(),
            model: String::new(),
            created: unix_now(),
            role_sent: false,
            finish_sent: false,
            usage_sent: false,
            tool_index: HashMap::new(),
            tool_calls: 0,
            usage: anthropic::Usage::default(),
            usage_known: false,
        }
    }

    /// The usage the upstream reported so far, in its own terms (cache writes included,
    /// which an OpenAI client's usage has no field for).
    pub fn upstream_usage(&self) -> Option<&anthropic::Usage> {
        self.usage_known.then_some(&self.usage)
    }

    pub fn push(&mut self, event: StreamEvent) -> Vec<ChatChunk> {
        let mut out = Vec::new();
        match event {
            StreamEvent::MessageStart { message, .. } => {
                self.id = format!("chatcmpl-{}", message.id);
                self.model = message.model;
                self.usage = message.usage;
                self.usage_known = true;
                self.ensure_role(&mut out);
            }
            StreamEvent::ContentBlockStart {
                index,
                content_block,
                ..
            } => match content_block {
                ContentBlock::Text { text, .. } => self.content(text, &mut out),
                ContentBlock::Thinking { thinking, .. } => self.reasoning(thinking, &mut out),
                ContentBlock::ToolUse {
                    id, name, input, ..
                } => {
                    let tool = self.tool_calls;
                    self.tool_calls += 1;
                    self.tool_index.insert(index, tool);
                    // The API starts with `{}` and streams the input; a full input is kept.
                    let arguments = match &input {
                        Value::Object(m) if m.is_empty() => String::new(),
                        _ => input_to_arguments(&input),
                    };
                    let call = ToolCallDelta {
                        index: tool,
                        id: Some(id),
                        kind: Some("function".to_owned()),
                        function: Some(FunctionCallDelta {
                            name: Some(name),
                            arguments: Some(arguments),
                            extra: Map::new(),
                        }),
                        extra: Map::new(),
                    };
                    self.tool_delta(call, &mut out);
                }
                _ => {}
            },
            StreamEvent::ContentBlockDelta { index, delta, .. } => match delta {
                BlockDelta::TextDelta { text, .. } => self.content(text, &mut out),
                BlockDelta::ThinkingDelta { thinking, .. } => self.reasoning(thinking, &mut out),
                BlockDelta::InputJsonDelta { partial_json, .. } => {
                    if let Some(&tool) = self.tool_index.get(&index)
                        && !partial_json.is_empty()
                    {
                        let call = ToolCallDelta {
                            index: tool,
                            function: Some(FunctionCallDelta {
                                arguments: Some(partial_json),
                                ..Default::default()
                            }),
                            ..Default::default()
                        };
                        self.tool_delta(call, &mut out);
                    }
                }
                _ => {}
            },
            StreamEvent::MessageDelta { delta, usage, .. } => {
                if let Some(u) = &usage {
                    self.usage.merge(u);
                    self.usage_known = true;
                }
                if let Some(reason) = delta.stop_reason {
                    self.finish_chunk(finish_reason_from_anthropic(&reason), &mut out);
                }
            }
            StreamEvent::MessageStop { .. } => self.usage_chunk(&mut out),
            StreamEvent::Error { error, .. } => {
                // OpenAI SDKs raise on a chunk that carries `error`.
                let mut chunk = self.chunk(Vec::new());
                chunk.extra.insert(
                    "error".to_owned(),
                    json!({"message": error.message, "type": error.kind, "code": null}),
                );
                out.push(chunk);
            }
            _ => {}
        }
        out
    }

    /// Ends a stream the upstream cut short: finish reason and usage if not yet sent.
    pub fn finish(&mut self) -> Vec<ChatChunk> {
        let mut out = Vec::new();
        if !self.finish_sent {
            self.ensure_role(&mut out);
            let reason = if self.tool_calls > 0 {
                "tool_calls"
            } else {
                "stop"
            };
            self.finish_chunk(reason, &mut out);
        }
        self.usage_chunk(&mut out);
        out
    }

    fn chunk(&self, choices: Vec<ChunkChoice>) -> ChatChunk {
        ChatChunk {
            id: self.id.clone(),
            object: "chat.completion.chunk".to_owned(),
            created: self.created,
            model: self.model.clone(),
            choices,
            usage: None,
            extra: Map::new(),
        }
    }

    fn delta_chunk(&self, delta: Delta, finish_reason: Option<&str>) -> ChatChunk {
        self.chunk(vec![ChunkChoice {
            index: 0,
            delta,
            finish_reason: finish_reason.map(str::to_owned),
            extra: Map::new(),
        }])
    }

    fn ensure_role(&mut self, out: &mut Vec<ChatChunk>) {
        if self.role_sent {
            return;
        }
        self.role_sent = true;
        let delta = Delta {
            role: Some(Role::Assistant),
            content: Some(String::new()),
            ..Default::default()
        };
        out.push(self.delta_chunk(delta, None));
    }

    fn content(&mut self, text: String, out: &mut Vec<ChatChunk>) {
        if text.is_empty() {
            return;
        }
        self.ensure_role(out);
        let delta = Delta {
            content: Some(text),
            ..Default::default()
        };
        out.push(self.delta_chunk(delta, None));
    }

    fn reasoning(&mut self, text: String, out: &mut Vec<ChatChunk>) {
        if text.is_empty() {
            return;
        }
        self.ensure_role(out);
        let delta = Delta {
            reasoning_content: Some(text),
            ..Default::default()
        };
        out.push(self.delta_chunk(delta, None));
    }

    fn tool_delta(&mut self, call: ToolCallDelta, out: &mut Vec<ChatChunk>) {
        self.ensure_role(out);
        let delta = Delta {
            tool_calls: Some(vec![call]),
            ..Default::default()
        };
        out.push(self.delta_chunk(delta, None));
    }

    fn finish_chunk(&mut self, reason: &str, out: &mut Vec<ChatChunk>) {
        if self.finish_sent {
            return;
        }
        self.finish_sent = true;
        out.push(self.delta_chunk(Delta::default(), Some(reason)));
    }

    fn usage_chunk(&mut self, out: &mut Vec<ChatChunk>) {
        if !self.include_usage || self.usage_sent {
            return;
        }
        self.usage_sent = true;
        let mut chunk = self.chunk(Vec::new());
        chunk.usage = Some(usage_to_openai(&self.usage));
        out.push(chunk);
    }
}
