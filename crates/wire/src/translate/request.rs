//! Request translation in both directions.

use super::DEFAULT_MAX_TOKENS;
use super::ids::{PendingToolUses, arguments_to_input, parse_data_url, tool_call};
use crate::anthropic::{self, Content, ContentBlock, ImageSource};
use crate::openai::{self, ChatMessage, ContentPart, MessageContent, ToolCall};
use crate::{Role, WireError};
use serde_json::{Map, Number, Value, json};

/// Prefix that carries Anthropic's `is_error` through OpenAI tool messages.
const ERROR_PREFIX: &str = "Error: ";

/// Result given to a `tool_use` that the client never answered: Anthropic rejects a
/// conversation where a tool call has no result in the next user turn.
const MISSING_RESULT: &str = "No result was provided for this tool call.";

/// Anthropic messages request → OpenAI chat request.
pub fn anthropic_request_to_openai(
    req: anthropic::MessagesRequest,
) -> Result<openai::ChatRequest, WireError> {
    if req.messages.is_empty() {
        return Err(WireError::EmptyMessages);
    }
    let mut messages = Vec::with_capacity(req.messages.len() + 1);
    if let Some(system) = &req.system {
        let text = system.text("\n\n");
        if !text.is_empty() {
            messages.push(ChatMessage::new(Role::System, text.into_owned()));
        }
    }
    for m in req.messages {
        match m.role {
            Role::User => push_user(m.content, &mut messages),
            Role::Assistant => messages.push(assistant_to_openai(m.content)),
            // Claude Code sends `role: "system"` inside `messages`; it stays in place.
            role if role.is_system() => {
                messages.push(ChatMessage::new(role, m.content.text("\n\n").into_owned()));
            }
            role => messages.push(ChatMessage::new(role, m.content.text("\n").into_owned())),
        }
    }

    let tools: Vec<openai::Tool> = req
        .tools
        .unwrap_or_default()
        .into_iter()
        .filter(is_client_tool)
        .map(|t| openai::Tool {
            kind: "function".to_owned(),
            function: Some(openai::FunctionDef {
                name: t.name,
                description: t.description,
                parameters: Some(t.input_schema.unwrap_or_else(empty_schema)),
                extra: Map::new(),
            }),
            extra: Map::new(),
        })
        .collect();
    let (tool_choice, parallel_tool_calls) = match (&req.tool_choice, tools.is_empty()) {
        (Some(tc), false) => tool_choice_to_openai(tc),
        _ => (None, None),
    };
    let stream = req.stream;
    Ok(openai::ChatRequest {
        model: req.model,
        messages,
        stream,
        // Usage is needed for the Anthropic `message_delta` the client expects.
        stream_options: (stream == Some(true)).then(|| openai::StreamOptions {
            include_usage: Some(true),
            extra: Map::new(),
        }),
        max_tokens: req.max_tokens,
        max_completion_tokens: None,
        temperature: req.temperature,
        top_p: req.top_p,
        stop: req.stop_sequences.map(openai::Stop::Many),
        tools: (!tools.is_empty()).then_some(tools),
        tool_choice,
        parallel_tool_calls,
        user: req.metadata.and_then(|m| m.user_id),
        extra: Map::new(),
    })
}

/// Server tools (`web_search_20250305`, …) run inside Anthropic and have no OpenAI form.
fn is_client_tool(t: &anthropic::Tool) -> bool {
    match t.extra.get("type").and_then(Value::as_str) {
        None | Some("custom") => true,
        Some(_) => false,
    }
}

fn empty_schema() -> Value {
    json!({"type": "object", "properties": {}})
}

fn tool_choice_to_openai(tc: &Value) -> (Option<Value>, Option<bool>) {
    let choice = match tc.get("type").and_then(Value::as_str) {
        Some("auto") => Some(json!("auto")),
        Some("any") => Some(json!("required")),
        Some("none") => Some(json!("none")),
        Some("tool") => tc
            .get("name")
            .map(|name| json!({"type": "function", "function": {"name": name}})),
        _ => None,
    };
    let disable_parallel = tc.get("disable_parallel_tool_use").and_then(Value::as_bool);
    (choice, disable_parallel.filter(|d| *d).map(|_| false))
}

/// A user turn: each `tool_result` becomes a `tool` message (OpenAI wants them right after
/// the assistant's calls), the remaining blocks one user message after them.
fn push_user(content: Content, out: &mut Vec<ChatMessage>) {
    let blocks = match content {
        Content::Text(s) => return out.push(ChatMessage::new(Role::User, s)),
        Content::Blocks(blocks) => blocks,
    };
    let mut parts = Vec::new();
    for block in blocks {
        match block {
            ContentBlock::Text { text, .. } if !text.is_empty() => {
                parts.push(ContentPart::text(text));
            }
            ContentBlock::Image { source, .. } => parts.extend(image_to_part(source)),
            ContentBlock::ToolResult {
                tool_use_id,
                content,
                is_error,
                ..
            } => {
                let mut text = String::new();
                if is_error == Some(true) {
                    text.push_str(ERROR_PREFIX);
                }
                match content {
                    Some(Content::Text(s)) => text.push_str(&s),
                    Some(Content::Blocks(blocks)) => {
                        let mut first = true;
                        for b in blocks {
                            match b {
                                ContentBlock::Text { text: t, .. } => {
                                    if !first {
                                        text.push('\n');
                                    }
                                    text.push_str(&t);
                                    first = false;
                                }
                                // Tool messages are text-only; images follow as user content.
                                ContentBlock::Image { source, .. } => {
                                    parts.extend(image_to_part(source));
                                }
                                _ => {}
                            }
                        }
                    }
                    None => {}
                }
                out.push(ChatMessage {
                    role: Role::Tool,
                    content: Some(MessageContent::Text(text)),
                    tool_call_id: Some(tool_use_id),
                    ..Default::default()
                });
            }
            _ => {}
        }
    }
    if !parts.is_empty() {
        out.push(ChatMessage {
            role: Role::User,
            content: Some(parts_to_content(parts)),
            ..Default::default()
        });
    }
}

fn parts_to_content(mut parts: Vec<ContentPart>) -> MessageContent {
    if parts.len() == 1
        && let Some(ContentPart::Text { extra, .. }) = parts.first()
        && extra.is_empty()
        && let Some(ContentPart::Text { text, .. }) = parts.pop()
    {
        return MessageContent::Text(text);
    }
    MessageContent::Parts(parts)
}

fn image_to_part(source: ImageSource) -> Option<ContentPart> {
    let url = match source.kind.as_str() {
        "base64" => format!(
            "data:{};base64,{}",
            source.media_type.as_deref().unwrap_or("image/png"),
            source.data.as_deref().unwrap_or_default()
        ),
        "url" => source.url?,
        _ => return None,
    };
    Some(ContentPart::ImageUrl {
        image_url: openai::ImageUrl {
            url,
            detail: None,
            extra: Map::new(),
        },
        extra: Map::new(),
    })
}

/// An assistant turn: text blocks joined, `tool_use` blocks as `tool_calls`. Thinking is
/// dropped: OpenAI-compatible servers neither accept nor need it in history.
fn assistant_to_openai(content: Content) -> ChatMessage {
    let blocks = match content {
        Content::Text(s) => return ChatMessage::new(Role::Assistant, s),
        Content::Blocks(blocks) => blocks,
    };
    let mut text = String::new();
    let mut calls = Vec::new();
    for block in blocks {
        match block {
            ContentBlock::Text { text: t, .. } => {
                if !text.is_empty() && !t.is_empty() {
                    text.push('\n');
                }
                text.push_str(&t);
            }
            ContentBlock::ToolUse {
                id, name, input, ..
            } => calls.push(tool_call(id, name, &input)),
            _ => {}
        }
    }
    ChatMessage {
        role: Role::Assistant,
        content: (!text.is_empty() || calls.is_empty()).then_some(MessageContent::Text(text)),
        tool_calls: (!calls.is_empty()).then_some(calls),
        ..Default::default()
    }
}

/// OpenAI chat request → Anthropic messages request. The result alternates roles, and
/// every `tool_result` answers a `tool_use` of the assistant turn right before it.
pub fn openai_request_to_anthropic(
    req: openai::ChatRequest,
) -> Result<anthropic::MessagesRequest, WireError> {
    let mut system = String::new();
    let mut turns = Turns::default();
    for (i, m) in req.messages.into_iter().enumerate() {
        match &m.role {
            role if role.is_system() => {
                if let Some(c) = &m.content {
                    let text = c.text("\n");
                    if !text.is_empty() {
                        if !system.is_empty() {
                            system.push_str("\n\n");
                        }
                        system.push_str(&text);
                    }
                }
            }
            Role::Assistant => turns.push_assistant(assistant_to_blocks(m, i)),
            Role::Tool | Role::Function => turns.push_tool_result(m),
            Role::Other(r) if r == "toolResult" => turns.push_tool_result(m),
            _ => turns.push(Role::User, user_to_blocks(m.content)),
        }
    }
    let messages = turns.finish();
    if messages.is_empty() {
        return Err(WireError::EmptyMessages);
    }

    let tools: Vec<anthropic::Tool> = req
        .tools
        .unwrap_or_default()
        .into_iter()
        .filter_map(|t| t.function)
        .map(|f| anthropic::Tool {
            name: f.name,
            description: f.description,
            input_schema: Some(f.parameters.unwrap_or_else(empty_schema)),
            extra: Map::new(),
        })
        .collect();
    let tool_choice = if tools.is_empty() {
        None
    } else {
        tool_choice_to_anthropic(req.tool_choice.as_ref(), req.parallel_tool_calls)
    };
    let stop: Vec<String> = req
        .stop
        .map(openai::Stop::into_vec)
        .unwrap_or_default()
        .into_iter()
        .filter(|s| !s.trim().is_empty())
        .collect();
    // OpenAI allows temperatures up to 2, Anthropic up to 1.
    let temperature = req.temperature.map(|t| match t.as_f64() {
        Some(v) if v > 1.0 => Number::from(1),
        _ => t,
    });
    // Recent Claude models reject `temperature` and `top_p` together.
    let top_p = if temperature.is_some() {
        None
    } else {
        req.top_p
    };
    let mut out = anthropic::MessagesRequest {
        model: req.model,
        messages,
        system: (!system.is_empty()).then_some(anthropic::System::Text(system)),
        max_tokens: Some(
            req.max_completion_tokens
                .or(req.max_tokens)
                .unwrap_or(DEFAULT_MAX_TOKENS),
        ),
        stop_sequences: (!stop.is_empty()).then_some(stop),
        stream: req.stream,
        temperature,
        top_p,
        tools: (!tools.is_empty()).then_some(tools),
        tool_choice,
        metadata: req.user.map(|u| anthropic::Metadata {
            user_id: Some(u),
            extra: Map::new(),
        }),
        extra: Map::new(),
    };
    super::cache::add_breakpoints(&mut out);
    Ok(out)
}

fn tool_choice_to_anthropic(tc: Option<&Value>, parallel: Option<bool>) -> Option<Value> {
    let mut choice = match tc {
        Some(Value::String(s)) => match s.as_str() {
            "required" => json!({"type": "any"}),
            "none" => json!({"type": "none"}),
            _ => json!({"type": "auto"}),
        },
        Some(obj @ Value::Object(_)) => {
            let name = obj.pointer("/function/name").or_else(|| obj.get("name"));
            match name {
                Some(name) => json!({"type": "tool", "name": name}),
                None => json!({"type": "auto"}),
            }
        }
        _ if parallel == Some(false) => json!({"type": "auto"}),
        _ => return None,
    };
    if parallel == Some(false)
        && let Value::Object(m) = &mut choice
        && m.get("type").and_then(Value::as_str) != Some("none")
    {
        m.insert("disable_parallel_tool_use".to_owned(), Value::Bool(true));
    }
    Some(choice)
}

fn user_to_blocks(content: Option<MessageContent>) -> Vec<ContentBlock> {
    match content {
        None => Vec::new(),
        Some(MessageContent::Text(s)) if s.is_empty() => Vec::new(),
        Some(MessageContent::Text(s)) => vec![ContentBlock::text(s)],
        Some(MessageContent::Parts(parts)) => parts.into_iter().filter_map(part_to_block).collect(),
    }
}

fn part_to_block(part: ContentPart) -> Option<ContentBlock> {
    match part {
        ContentPart::Text { text, mut extra } if !text.is_empty() => {
            // Only `cache_control` has a meaning on the Anthropic side.
            let mut kept = Map::new();
            if let Some(cc) = extra.remove("cache_control") {
                kept.insert("cache_control".to_owned(), cc);
            }
            Some(ContentBlock::Text { text, extra: kept })
        }
        ContentPart::ImageUrl { image_url, .. } => {
            let source = match parse_data_url(&image_url.url) {
                Some((media, data)) => ImageSource {
                    kind: "base64".to_owned(),
                    media_type: Some(media.to_owned()),
                    data: Some(data.to_owned()),
                    ..Default::default()
                },
                None => ImageSource {
                    kind: "url".to_owned(),
                    url: Some(image_url.url),
                    ..Default::default()
                },
            };
            Some(ContentBlock::Image {
                source,
                extra: Map::new(),
            })
        }
        _ => None,
    }
}

fn assistant_to_blocks(m: ChatMessage, msg_index: usize) -> Vec<ContentBlock> {
    let mut blocks = user_to_blocks(m.content);
    let mut calls = m.tool_calls.unwrap_or_default();
    // Legacy `function_call` is a single tool call without an id.
    if let Some(fc) = m.extra.get("function_call")
        && let Ok(function) = serde_json::from_value::<openai::FunctionCall>(fc.clone())
    {
        calls.push(ToolCall {
            function,
            ..Default::default()
        });
    }
    for (j, call) in calls.into_iter().enumerate() {
        let id = if call.id.is_empty() {
            format!("toolu_{msg_index}_{j}")
        } else {
            call.id
        };
        blocks.push(ContentBlock::ToolUse {
            id,
            name: call.function.name,
            input: arguments_to_input(&call.function.arguments),
            extra: Map::new(),
        });
    }
    blocks
}

/// Builds alternating Anthropic turns, tracking which tool calls still await results.
#[derive(Default)]
struct Turns {
    turns: Vec<(Role, Vec<ContentBlock>)>,
    pending: PendingToolUses,
}

impl Turns {
    fn push(&mut self, role: Role, blocks: Vec<ContentBlock>) {
        if blocks.is_empty() {
            return;
        }
        match self.turns.last_mut() {
            Some((last, existing)) if *last == role => existing.extend(blocks),
            _ => self.turns.push((role, blocks)),
        }
    }

    fn push_assistant(&mut self, blocks: Vec<ContentBlock>) {
        if blocks.is_empty() {
            return;
        }
        if matches!(self.turns.last(), Some((Role::User, _))) {
            self.answer_missing();
        }
        for b in &blocks {
            if let ContentBlock::ToolUse { id, .. } = b {
                self.pending.push(id.clone());
            }
        }
        self.push(Role::Assistant, blocks);
    }

    fn push_tool_result(&mut self, m: ChatMessage) {
        let id = m
            .tool_call_id
            .or_else(|| {
                m.extra
                    .get("toolCallId")
                    .and_then(Value::as_str)
                    .map(str::to_owned)
            })
            .unwrap_or_default();
        let blocks = user_to_blocks(m.content);
        let text_only = blocks.iter().all(|b| b.as_text().is_some());
        let mut is_error = None;
        let content = if text_only {
            let mut text = anthropic::Content::Blocks(blocks).text("\n").into_owned();
            if let Some(rest) = text.strip_prefix(ERROR_PREFIX) {
                text = rest.to_owned();
                is_error = Some(true);
            }
            (!text.is_empty()).then_some(Content::Text(text))
        } else {
            Some(Content::Blocks(blocks))
        };
        let claimed = self.pending.claim(&id);
        let block = match claimed {
            Some(tool_use_id) => ContentBlock::ToolResult {
                tool_use_id,
                content,
                is_error,
                extra: Map::new(),
            },
            // No call to answer: keep the result as text rather than lose it.
            None => {
                let body = content.as_ref().map(|c| c.text("\n")).unwrap_or_default();
                let prefix = if is_error == Some(true) {
                    ERROR_PREFIX
                } else {
                    ""
                };
                ContentBlock::text(format!("Tool result ({id}):\n{prefix}{body}"))
            }
        };
        self.push(Role::User, vec![block]);
    }

    /// Gives every unanswered call of the previous assistant turn a result in the current
    /// user turn.
    fn answer_missing(&mut self) {
        let missing = self.pending.take_unanswered();
        if missing.is_empty() {
            return;
        }
        if let Some((Role::User, blocks)) = self.turns.last_mut() {
            blocks.extend(missing.into_iter().map(|id| ContentBlock::ToolResult {
                tool_use_id: id,
                content: Some(Content::Text(MISSING_RESULT.to_owned())),
                is_error: Some(true),
                extra: Map::new(),
            }));
        }
    }

    fn finish(mut self) -> Vec<anthropic::Message> {
        if matches!(self.turns.last(), Some((Role::User, _))) {
            self.answer_missing();
        }
        self.turns
            .into_iter()
            .map(|(role, mut blocks)| {
                // Anthropic wants tool results before any other content of a user turn.
                if role == Role::User {
                    blocks.sort_by_key(|b| !matches!(b, ContentBlock::ToolResult { .. }));
                }
                anthropic::Message {
                    role,
                    content: blocks_to_content(blocks),
                    extra: Map::new(),
                }
            })
            .collect()
    }
}

fn blocks_to_content(mut blocks: Vec<ContentBlock>) -> Content {
    if blocks.len() == 1
        && let Some(ContentBlock::Text { extra, .. }) = blocks.first()
        && extra.is_empty()
        && let Some(ContentBlock::Text { text, .. }) = blocks.pop()
    {
        return Content::Text(text);
    }
    Content::Blocks(blocks)
}
