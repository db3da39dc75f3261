#![no_main]
//! OpenAI → Anthropic → OpenAI on arbitrary parseable requests: never panics, the
//! Anthropic side always alternates roles and answers every tool call it has to.

use libfuzzer_sys::fuzz_target;
use metaclaw_wire::anthropic::{Content, ContentBlock};
use metaclaw_wire::{Role, openai::ChatRequest, translate};

fuzz_target!(|data: &[u8]| {
    let Ok(req) = ChatRequest::from_slice(data) else {
        return;
    };
    let Ok(anth) = translate::openai_request_to_anthropic(req) else {
        return;
    };
    assert!(!anth.messages.is_empty());
    for pair in anth.messages.windows(2) {
        assert_ne!(pair[0].role, pair[1].role, "roles must alternate");
    }
    for (i, m) in anth.messages.iter().enumerate() {
        let Content::Blocks(blocks) = &m.content else {
            continue;
        };
        assert!(!blocks.is_empty(), "empty content");
        for b in blocks {
            if let ContentBlock::ToolResult { tool_use_id, .. } = b {
                assert_eq!(m.role, Role::User);
                let prev = &anth.messages[i - 1];
                let Content::Blocks(prev_blocks) = &prev.content else {
                    panic!("tool_result without a preceding tool_use");
                };
                assert!(prev_blocks.iter().any(
                    |p| matches!(p, ContentBlock::ToolUse { id, .. } if id == tool_use_id)
                ));
            }
        }
    }
    let back = translate::anthropic_request_to_openai(anth).expect("non-empty request");
    assert!(!back.messages.is_empty());
});
