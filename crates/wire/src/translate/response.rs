//! Non-streaming response translation in both directions.

use super::ids::{arguments_to_input, tool_call};
use super::{
    finish_reason_from_anthropic, stop_reason_from_openai, unix_now, usage_to_anthropic,
    usage_to_openai,
};
use crate::Role;
use crate::anthropic::{self, ContentBlock};
use crate::openai::{self, ChatMessage, MessageContent};
use serde_json::Map;

/// OpenAI chat response → Anthropic message. Only the first choice is used.
pub fn openai_response_to_anthropic(resp: openai::ChatResponse) -> anthropic::MessagesResponse {
    let usage = resp
        .usage
        .as_ref()
        .map(usage_to_anthropic)
        .unwrap_or_default();
    let mut content = Vec::new();
    let mut finish_reason = None;
    if let Some(choice) = resp.choices.into_iter().find(|c| c.index == 0) {
        finish_reason = choice.finish_reason;
        let m = choice.message;
        let reasoning = m.reasoning_content.or_else(|| {
            m.extra
                .get("reasoning")
                .and_then(|v| v.as_str())
                .map(str::to_owned)
        });
        if let Some(thinking) = reasoning.filter(|t| !t.is_empty()) {
            content.push(ContentBlock::Thinking {
                thinking,
                signature: Some(String::new()),
                extra: Map::new(),
            });
        }
        if let Some(c) = &m.content {
            let text = c.text("");
            if !text.is_empty() {
                content.push(ContentBlock::text(text.into_owned()));
            }
        }
        for (i, call) in m.tool_calls.unwrap_or_default().into_iter().enumerate() {
            content.push(ContentBlock::ToolUse {
                id: if call.id.is_empty() {
                    format!("toolu_{i}")
                } else {
                    call.id
                },
                name: call.function.name,
                input: arguments_to_input(&call.function.arguments),
                extra: Map::new(),
            });
        }
    }
    let has_tool_use = content
        .iter()
        .any(|b| matches!(b, ContentBlock::ToolUse { .. }));
    let mut stop_reason = stop_reason_from_openai(finish_reason.as_deref().unwrap_or("stop"));
    // Some servers report `stop` although the reply ends in tool calls.
    if has_tool_use && stop_reason == "end_turn" {
        stop_reason = "tool_use";
    }
    anthropic::MessagesResponse {
        id: resp.id,
        content,
        model: resp.model,
        stop_reason: Some(stop_reason.to_owned()),
        usage,
        ..Default::default()
    }
}

/// Anthropic message → OpenAI chat response with one choice; its id is `chatcmpl-<id>`,
/// matching what the stream translation uses.
pub fn anthropic_response_to_openai(resp: anthropic::MessagesResponse) -> openai::ChatResponse {
    let mut text = String::new();
    let mut reasoning = String::new();
    let mut calls = Vec::new();
    for block in resp.content {
        match block {
            // Joined without separator, exactly as the streamed deltas concatenate.
            ContentBlock::Text { text: t, .. } => text.push_str(&t),
            ContentBlock::Thinking { thinking, .. } => reasoning.push_str(&thinking),
            ContentBlock::ToolUse {
                id, name, input, ..
            } => calls.push(tool_call(id, name, &input)),
            _ => {}
        }
    }
    let finish_reason = resp
        .stop_reason
        .as_deref()
        .map(finish_reason_from_anthropic);
    let message = ChatMessage {
        role: Role::Assistant,
        content: (!text.is_empty() || calls.is_empty()).then_some(MessageContent::Text(text)),
        tool_calls: (!calls.is_empty()).then_some(calls),
        reasoning_content: (!reasoning.is_empty()).then_some(reasoning),
        ..Default::default()
    };
    openai::ChatResponse {
        id: format!("chatcmpl-{}", resp.id),
        object: "chat.completion".to_owned(),
        created: unix_now(),
        model: resp.model,
        choices: vec![openai::Choice {
            index: 0,
            message,
            finish_reason: Some(finish_reason.unwrap_or("stop").to_owned()),
            extra: Map::new(),
        }],
        usage: Some(usage_to_openai(&resp.usage)),
        extra: Map::new(),
    }
}
