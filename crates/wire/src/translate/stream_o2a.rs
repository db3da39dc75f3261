//! Upstream OpenAI chunks → Anthropic stream events for the client.

use super::{stop_reason_from_openai, usage_to_anthropic};
use crate::anthropic::{
    BlockDelta, ContentBlock, DeltaUsage, MessageDeltaBody, MessagesResponse, StreamEvent,
};
use crate::openai::{self, ChatChunk};
use serde_json::{Map, Value};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Text,
    Thinking,
    /// A tool call, by its OpenAI tool-call index.
    Tool(u32),
}

/// Turns upstream OpenAI chunks into a valid Anthropic event sequence: `message_start`,
/// blocks with increasing indexes, `message_delta` (stop reason and usage), `message_stop`.
#[derive(Debug)]
pub struct OpenAiToAnthropicStream {
    model: String,
    started: bool,
    ended: bool,
    open: Option<Kind>,
    next_index: u32,
    tool_blocks: u32,
    stop_reason: Option<&'static str>,
    usage: Option<openai::Usage>,
}

impl OpenAiToAnthropicStream {
    /// `model` is the name reported to the client.
    pub fn new(model: String) -> Self {
        OpenAiToAnthropicStream {
            model,
            started: false,
            ended: false,
            open: None,
            next_index: 0,
            tool_blocks: 0,
            stop_reason: None,
            usage: None,
        }
    }

    /// The usage the upstream reported, once its usage chunk arrived.
    pub fn upstream_usage(&self) -> Option<&openai::Usage> {
        self.usage.as_ref()
    }

    pub fn push(&mut self, chunk: ChatChunk) -> Vec<StreamEvent> {
        let mut out = Vec::new();
        if self.ended {
            return out;
        }
        if !self.started {
            self.start(&chunk.id, chunk.usage.as_ref(), &mut out);
        }
        if let Some(u) = chunk.usage {
            self.usage = Some(u);
        }
        for choice in chunk.choices.into_iter().filter(|c| c.index == 0) {
            let delta = choice.delta;
            if let Some(r) = delta.reasoning().filter(|r| !r.is_empty()) {
                let thinking = r.to_owned();
                self.ensure_block(Kind::Thinking, None, &mut out);
                out.push(block_delta(
                    self.next_index - 1,
                    BlockDelta::ThinkingDelta {
                        thinking,
                        extra: Map::new(),
                    },
                ));
            }
            if let Some(text) = delta.content.filter(|t| !t.is_empty()) {
                self.ensure_block(Kind::Text, None, &mut out);
                out.push(block_delta(
                    self.next_index - 1,
                    BlockDelta::TextDelta {
                        text,
                        extra: Map::new(),
                    },
                ));
            }
            for call in delta.tool_calls.unwrap_or_default() {
                let function = call.function.unwrap_or_default();
                let start = (call.id, function.name);
                self.ensure_block(Kind::Tool(call.index), Some(start), &mut out);
                if let Some(args) = function.arguments.filter(|a| !a.is_empty()) {
                    out.push(block_delta(
                        self.next_index - 1,
                        BlockDelta::InputJsonDelta {
                            partial_json: args,
                            extra: Map::new(),
                        },
                    ));
                }
            }
            if let Some(reason) = choice.finish_reason {
                self.close_block(&mut out);
                self.stop_reason = Some(stop_reason_from_openai(&reason));
            }
        }
        // OpenAI sends usage in a chunk after the one with `finish_reason`; end once both
        // are known so the client is not kept waiting for the upstream to close.
        if self.stop_reason.is_some() && self.usage.is_some() {
            self.end(&mut out);
        }
        out
    }

    /// Closes whatever is open; ends the message if the upstream never did.
    pub fn finish(&mut self) -> Vec<StreamEvent> {
        let mut out = Vec::new();
        if self.ended {
            return out;
        }
        if !self.started {
            self.start("", None, &mut out);
        }
        self.end(&mut out);
        out
    }

    fn start(&mut self, id: &str, usage: Option<&openai::Usage>, out: &mut Vec<StreamEvent>) {
        self.started = true;
        let usage = usage.map(usage_to_anthropic).unwrap_or_default();
        out.push(StreamEvent::MessageStart {
            message: MessagesResponse {
                id: if id.is_empty() {
                    "msg_stream".to_owned()
                } else {
                    id.to_owned()
                },
                model: self.model.clone(),
                usage,
                ..Default::default()
            },
            extra: Map::new(),
        });
    }

    /// Opens a block of `kind` unless it is the one already open.
    fn ensure_block(
        &mut self,
        kind: Kind,
        tool: Option<(Option<String>, Option<String>)>,
        out: &mut Vec<StreamEvent>,
    ) {
        if self.open == Some(kind) {
            return;
        }
        self.close_block(out);
        let content_block = match kind {
            Kind::Text => ContentBlock::text(""),
            Kind::Thinking => ContentBlock::Thinking {
                thinking: String::new(),
                signature: Some(String::new()),
                extra: Map::new(),
            },
            Kind::Tool(i) => {
                let (id, name) = tool.unwrap_or_default();
                self.tool_blocks += 1;
                ContentBlock::ToolUse {
                    id: id
                        .filter(|s| !s.is_empty())
                        .unwrap_or_else(|| format!("toolu_{i}")),
                    name: name.unwrap_or_default(),
                    input: Value::Object(Map::new()),
                    extra: Map::new(),
                }
            }
        };
        out.push(StreamEvent::ContentBlockStart {
            index: self.next_index,
            content_block,
            extra: Map::new(),
        });
        self.next_index += 1;
        self.open = Some(kind);
    }

    fn close_block(&mut self, out: &mut Vec<StreamEvent>) {
        if self.open.take().is_some() {
            out.push(StreamEvent::ContentBlockStop {
                index: self.next_index - 1,
                extra: Map::new(),
            });
        }
    }

    fn end(&mut self, out: &mut Vec<StreamEvent>) {
        self.close_block(out);
        self.ended = true;
        let mut stop_reason = self.stop_reason.unwrap_or("end_turn");
        if self.tool_blocks > 0 && stop_reason == "end_turn" {
            stop_reason = "tool_use";
        }
        let usage = match &self.usage {
            Some(u) => {
                let a = usage_to_anthropic(u);
                DeltaUsage {
                    input_tokens: Some(a.input_tokens),
                    output_tokens: Some(a.output_tokens),
                    cache_read_input_tokens: a.cache_read_input_tokens,
                    ..Default::default()
                }
            }
            None => DeltaUsage {
                output_tokens: Some(0),
                ..Default::default()
            },
        };
        out.push(StreamEvent::MessageDelta {
            delta: MessageDeltaBody {
                stop_reason: Some(stop_reason.to_owned()),
                ..Default::default()
            },
            usage: Some(usage),
            extra: Map::new(),
        });
        out.push(StreamEvent::MessageStop { extra: Map::new() });
    }
}

fn block_delta(index: u32, delta: BlockDelta) -> StreamEvent {
    StreamEvent::ContentBlockDelta {
        index,
        delta,
        extra: Map::new(),
    }
}
