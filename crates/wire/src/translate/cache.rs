//! Prompt-cache breakpoints for requests translated from OpenAI to Anthropic.
//!
//! OpenAI-compatible providers cache prompt prefixes on their own; Anthropic caches only up
//! to `cache_control` breakpoints. An OpenAI client (OpenClaw on an `openai-completions`
//! provider) sends none, so a translated conversation was never cached. When the client set
//! no breakpoint itself, up to four are added (Anthropic's limit): after the tools, after the
//! system prompt — both the same every turn — on the newest block the user wrote (with
//! MetaClaw's block), so the next turn, which resends it unchanged, reads everything up to it
//! from the cache (Anthropic looks back from each breakpoint for an earlier cached prefix),
//! and on the conversation's last block when that comes later (a tool round's results), so
//! the next call of the tool loop reads those too, as an OpenAI provider's prefix cache would.

use serde_json::{Value, json};

use crate::anthropic::{Content, ContentBlock, MessagesRequest, System};
use crate::reader;
use crate::role::Role;

/// Adds the breakpoints unless the request already has one anywhere.
pub(super) fn add_breakpoints(req: &mut MessagesRequest) {
    if has_any(req) {
        return;
    }
    if let Some(last) = req.tools.as_mut().and_then(|t| t.last_mut()) {
        last.extra.insert("cache_control".into(), ephemeral());
    }
    if let Some(system) = req.system.take() {
        req.system = Some(match system {
            System::Text(text) => System::Blocks(vec![ContentBlock::Text {
                text,
                extra: [("cache_control".to_owned(), ephemeral())]
                    .into_iter()
                    .collect(),
            }]),
            System::Blocks(mut blocks) => {
                mark_last_text(&mut blocks);
                System::Blocks(blocks)
            }
        });
    }
    // The newest block with the user's own words (MetaClaw's block rides on it). Not the end
    // of that message: consecutive user messages are merged into one, and an agent's trailing
    // envelope message (OpenClaw's internal context) is dropped from the history next turn,
    // so only the prefix up to the user's own block is sent again unchanged.
    let newest = req.messages.iter_mut().enumerate().rev().find(|(_, m)| {
        m.role == Role::User && !reader::own_words(&m.content.text("\n")).is_empty()
    });
    let own_at = newest.as_ref().map(|(i, _)| *i);
    if let Some((_, message)) = newest {
        let mut blocks = match std::mem::replace(&mut message.content, Content::Blocks(vec![])) {
            Content::Text(text) => vec![ContentBlock::text(text)],
            Content::Blocks(blocks) => blocks,
        };
        let own = blocks.iter_mut().rev().find_map(|b| match b {
            ContentBlock::Text { text, extra } if !reader::own_words(text).is_empty() => {
                Some(extra)
            }
            _ => None,
        });
        if let Some(extra) = own {
            extra.insert("cache_control".into(), ephemeral());
        }
        message.content = Content::Blocks(blocks);
    }
    // Only past the user's message: its own trailing envelope is dropped next turn.
    if own_at.is_some_and(|i| i + 1 < req.messages.len()) {
        mark_the_end(req);
    }
}

/// The conversation's last block, unless it is of a kind that cannot carry a breakpoint.
fn mark_the_end(req: &mut MessagesRequest) {
    let Some(last) = req.messages.last_mut() else {
        return;
    };
    if let Content::Blocks(blocks) = &mut last.content
        && let Some(
            ContentBlock::Text { extra, .. }
            | ContentBlock::Image { extra, .. }
            | ContentBlock::ToolUse { extra, .. }
            | ContentBlock::ToolResult { extra, .. },
        ) = blocks.last_mut()
    {
        extra.entry("cache_control").or_insert_with(ephemeral);
    }
}

fn ephemeral() -> Value {
    json!({"type": "ephemeral"})
}

fn mark_last_text(blocks: &mut [ContentBlock]) {
    if let Some(ContentBlock::Text { extra, .. }) = blocks
        .iter_mut()
        .rev()
        .find(|b| matches!(b, ContentBlock::Text { .. }))
    {
        extra.insert("cache_control".into(), ephemeral());
    }
}

fn has_any(req: &MessagesRequest) -> bool {
    let in_blocks = |blocks: &[ContentBlock]| {
        blocks.iter().any(|b| match b {
            ContentBlock::Text { extra, .. }
            | ContentBlock::Image { extra, .. }
            | ContentBlock::ToolUse { extra, .. }
            | ContentBlock::ToolResult { extra, .. } => extra.contains_key("cache_control"),
            _ => false,
        })
    };
    let tools = req
        .tools
        .iter()
        .flatten()
        .any(|t| t.extra.contains_key("cache_control"));
    let system = matches!(&req.system, Some(System::Blocks(b)) if in_blocks(b));
    let messages = req
        .messages
        .iter()
        .any(|m| matches!(&m.content, Content::Blocks(b) if in_blocks(b)));
    tools || system || messages
}
