//! Anthropic messages wire types.

use crate::de::{self, StrOrSeq};
use crate::{Role, WireError};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Number, Value};
use std::borrow::Cow;

pub type Extra = Map<String, Value>;

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct MessagesRequest {
    #[serde(default)]
    pub model: String,
    pub messages: Vec<Message>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system: Option<System>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_sequences: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<Number>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_p: Option<Number>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<Tool>>,
    /// `{"type":"auto"|"any"|"none"}` or `{"type":"tool","name"}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
    #[serde(flatten)]
    pub extra: Extra,
}

impl MessagesRequest {
    /// Parses a request body; errors name the JSON path, e.g. `messages[3].content`.
    pub fn from_slice(body: &[u8]) -> Result<Self, WireError> {
        WireError::parse(body)
    }
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Metadata {
    /// Claude Code puts a JSON string here that holds its `session_id`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_id: Option<String>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// Top-level system prompt: a string or an array of (text) blocks.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum System {
    Text(String),
    Blocks(Vec<ContentBlock>),
}

impl<'de> Deserialize<'de> for System {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(
            match de::str_or_seq(d, "a string or an array of text blocks")? {
                StrOrSeq::Str(s) => System::Text(s),
                StrOrSeq::Seq(v) => System::Blocks(v),
            },
        )
    }
}

impl System {
    /// The text blocks joined with `sep`.
    pub fn text(&self, sep: &str) -> Cow<'_, str> {
        match self {
            System::Text(s) => Cow::Borrowed(s),
            System::Blocks(blocks) => join_text(blocks, sep),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    pub content: Content,
    #[serde(flatten)]
    pub extra: Extra,
}

/// Message content: a plain string or an array of blocks.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Content {
    Text(String),
    Blocks(Vec<ContentBlock>),
}

impl Default for Content {
    fn default() -> Self {
        Content::Text(String::new())
    }
}

impl<'de> Deserialize<'de> for Content {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(
            match de::str_or_seq(d, "a string or an array of content blocks")? {
                StrOrSeq::Str(s) => Content::Text(s),
                StrOrSeq::Seq(v) => Content::Blocks(v),
            },
        )
    }
}

impl Content {
    /// The text blocks joined with `sep`; other blocks are skipped.
    pub fn text(&self, sep: &str) -> Cow<'_, str> {
        match self {
            Content::Text(s) => Cow::Borrowed(s),
            Content::Blocks(blocks) => join_text(blocks, sep),
        }
    }
}

fn join_text<'a>(blocks: &'a [ContentBlock], sep: &str) -> Cow<'a, str> {
    let mut texts = blocks.iter().filter_map(ContentBlock::as_text);
    match (texts.next(), texts.next()) {
        (None, _) => Cow::Borrowed(""),
        (Some(one), None) => Cow::Borrowed(one),
        (Some(a), Some(b)) => {
            let mut s = String::with_capacity(a.len() + b.len() + sep.len());
            s.push_str(a);
            s.push_str(sep);
            s.push_str(b);
            for t in texts {
                s.push_str(sep);
                s.push_str(t);
            }
            Cow::Owned(s)
        }
    }
}

/// A content block. Unknown block types (`document`, `server_tool_use`, …) are kept as is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum ContentBlock {
    #[serde(rename = "text")]
    Text {
        text: String,
        #[serde(flatten)]
        extra: Extra,
    },
    #[serde(rename = "image")]
    Image {
        source: ImageSource,
        #[serde(flatten)]
        extra: Extra,
    },
    #[serde(rename = "tool_use")]
    ToolUse {
        id: String,
        name: String,
        #[serde(default)]
        input: Value,
        #[serde(flatten)]
        extra: Extra,
    },
    #[serde(rename = "tool_result")]
    ToolResult {
        tool_use_id: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        content: Option<Content>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        is_error: Option<bool>,
        #[serde(flatten)]
        extra: Extra,
    },
    #[serde(rename = "thinking")]
    Thinking {
        thinking: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signature: Option<String>,
        #[serde(flatten)]
        extra: Extra,
    },
    #[serde(rename = "redacted_thinking")]
    RedactedThinking {
        data: String,
        #[serde(flatten)]
        extra: Extra,
    },
    #[serde(untagged)]
    Other(Value),
}

impl ContentBlock {
    pub fn text(text: impl Into<String>) -> Self {
        ContentBlock::Text {
            text: text.into(),
            extra: Extra::new(),
        }
    }

    pub fn as_text(&self) -> Option<&str> {
        match self {
            ContentBlock::Text { text, .. } => Some(text),
            _ => None,
        }
    }
}

/// Image source: `{"type":"base64","media_type","data"}` or `{"type":"url","url"}`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ImageSource {
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub media_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Tool {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_schema: Option<Value>,
    #[serde(flatten)]
    pub extra: Extra,
}

fn message_kind() -> String {
    "message".to_owned()
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MessagesResponse {
    #[serde(default)]
    pub id: String,
    #[serde(rename = "type", default = "message_kind")]
    pub kind: String,
    #[serde(default = "assistant")]
    pub role: Role,
    #[serde(default)]
    pub content: Vec<ContentBlock>,
    #[serde(default)]
    pub model: String,
    /// Always serialized (as `null` while streaming), like the API does.
    #[serde(default)]
    pub stop_reason: Option<String>,
    #[serde(default)]
    pub stop_sequence: Option<String>,
    #[serde(default)]
    pub usage: Usage,
    #[serde(flatten)]
    pub extra: Extra,
}

fn assistant() -> Role {
    Role::Assistant
}

impl Default for MessagesResponse {
    fn default() -> Self {
        MessagesResponse {
            id: String::new(),
            kind: message_kind(),
            role: Role::Assistant,
            content: Vec::new(),
            model: String::new(),
            stop_reason: None,
            stop_sequence: None,
            usage: Usage::default(),
            extra: Extra::new(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Usage {
    #[serde(default)]
    pub input_tokens: u64,
    #[serde(default)]
    pub output_tokens: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_creation_input_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_read_input_tokens: Option<u64>,
    #[serde(flatten)]
    pub extra: Extra,
}

impl Usage {
    /// Applies the fields a `message_delta` carries.
    pub fn merge(&mut self, d: &DeltaUsage) {
        if let Some(v) = d.input_tokens {
            self.input_tokens = v;
        }
        if let Some(v) = d.output_tokens {
            self.output_tokens = v;
        }
        if d.cache_read_input_tokens.is_some() {
            self.cache_read_input_tokens = d.cache_read_input_tokens;
        }
        if d.cache_creation_input_tokens.is_some() {
            self.cache_creation_input_tokens = d.cache_creation_input_tokens;
        }
    }
}

/// Usage in `message_delta`: every field optional, since clients overwrite what is present.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct DeltaUsage {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_creation_input_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_read_input_tokens: Option<u64>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// One server-sent event of a streamed message (the SSE `data` JSON).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum StreamEvent {
    #[serde(rename = "message_start")]
    MessageStart {
        message: MessagesResponse,
        #[serde(flatten)]
        extra: Extra,
    },
    #[serde(rename = "content_block_start")]
    ContentBlockStart {
        index: u32,
        content_block: ContentBlock,
        #[serde(flatten)]
        extra: Extra,
    },
    #[serde(rename = "content_block_delta")]
    ContentBlockDelta {
        index: u32,
        delta: BlockDelta,
        #[serde(flatten)]
        extra: Extra,
    },
    #[serde(rename = "content_block_stop")]
    ContentBlockStop {
        index: u32,
        #[serde(flatten)]
        extra: Extra,
    },
    #[serde(rename = "message_delta")]
    MessageDelta {
        delta: MessageDeltaBody,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        usage: Option<DeltaUsage>,
        #[serde(flatten)]
        extra: Extra,
    },
    #[serde(rename = "message_stop")]
    MessageStop {
        #[serde(flatten)]
        extra: Extra,
    },
    #[serde(rename = "ping")]
    Ping {
        #[serde(flatten)]
        extra: Extra,
    },
    #[serde(rename = "error")]
    Error {
        error: ErrorBody,
        #[serde(flatten)]
        extra: Extra,
    },
    #[serde(untagged)]
    Other(Value),
}

impl StreamEvent {
    /// The SSE `event:` name the API uses for this event.
    pub fn name(&self) -> &str {
        match self {
            StreamEvent::MessageStart { .. } => "message_start",
            StreamEvent::ContentBlockStart { .. } => "content_block_start",
            StreamEvent::ContentBlockDelta { .. } => "content_block_delta",
            StreamEvent::ContentBlockStop { .. } => "content_block_stop",
            StreamEvent::MessageDelta { .. } => "message_delta",
            StreamEvent::MessageStop { .. } => "message_stop",
            StreamEvent::Ping { .. } => "ping",
            StreamEvent::Error { .. } => "error",
            StreamEvent::Other(v) => v.get("type").and_then(Value::as_str).unwrap_or("message"),
        }
    }

    /// The event as SSE bytes: `event: <type>` and `data: <json>`.
    pub fn to_sse(&self) -> bytes::Bytes {
        let data = serde_json::to_string(self).unwrap_or_default();
        crate::sse::encode(Some(self.name()), &data)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum BlockDelta {
    #[serde(rename = "text_delta")]
    TextDelta {
        text: String,
        #[serde(flatten)]
        extra: Extra,
    },
    #[serde(rename = "input_json_delta")]
    InputJsonDelta {
        partial_json: String,
        #[serde(flatten)]
        extra: Extra,
    },
    #[serde(rename = "thinking_delta")]
    ThinkingDelta {
        thinking: String,
        #[serde(flatten)]
        extra: Extra,
    },
    #[serde(rename = "signature_delta")]
    SignatureDelta {
        signature: String,
        #[serde(flatten)]
        extra: Extra,
    },
    #[serde(untagged)]
    Other(Value),
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct MessageDeltaBody {
    /// Always serialized, like the API does.
    #[serde(default)]
    pub stop_reason: Option<String>,
    #[serde(default)]
    pub stop_sequence: Option<String>,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ErrorBody {
    #[serde(rename = "type", default)]
    pub kind: String,
    #[serde(default)]
    pub message: String,
    #[serde(flatten)]
    pub extra: Extra,
}
