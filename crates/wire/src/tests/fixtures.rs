use crate::anthropic::{Content, ContentBlock, MessagesRequest};
use crate::openai::ChatRequest;
use crate::text::{newest_user_text_anthropic, newest_user_text_openai};
use crate::translate::{anthropic_request_to_openai, openai_request_to_anthropic};
use serde_json::{Value, json};

const OPENCLAW: &str = include_str!("../../tests/fixtures/openclaw_request.json");
const CLAUDE_CODE: &str = include_str!("../../tests/fixtures/claude_code_request.json");

#[test]
fn openclaw_request_round_trips() {
    let req = ChatRequest::from_slice(OPENCLAW.as_bytes()).unwrap();
    assert!(req.include_usage());
    assert_eq!(req.max_completion_tokens, Some(8192));
    let mut original: Value = serde_json::from_str(OPENCLAW).unwrap();
    // Documented normalisation: `content: null` on an assistant tool-call message is dropped.
    original["messages"][3]
        .as_object_mut()
        .unwrap()
        .remove("content");
    assert_eq!(serde_json::to_value(&req).unwrap(), original);
    assert_eq!(newest_user_text_openai(&req), "Great. Now read the README.");
}

#[test]
fn openclaw_request_translates() {
    let req = ChatRequest::from_slice(OPENCLAW.as_bytes()).unwrap();
    let out = serde_json::to_value(openai_request_to_anthropic(req).unwrap()).unwrap();
    assert_eq!(out["model"], "kimi-k2");
    assert_eq!(out["max_tokens"], 8192);
    assert_eq!(out["stream"], true);
    assert_eq!(out["tool_choice"], json!({"type": "auto"}));
    assert!(out.get("stream_options").is_none() && out.get("store").is_none());
    assert!(
        out["system"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("You are a personal assistant")
    );
    assert_eq!(out["system"][0]["cache_control"]["type"], "ephemeral");
    let roles: Vec<&str> = out["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(
        roles,
        [
            "user",
            "assistant",
            "user",
            "assistant",
            "user",
            "assistant",
            "user"
        ]
    );
    // The two consecutive user messages merge.
    assert_eq!(out["messages"][0]["content"].as_array().unwrap().len(), 2);
    // Rewritten ids (`callr1`) are matched back to the original ones (`call_r1`); the tool
    // round's end is a cache breakpoint.
    assert_eq!(
        out["messages"][6]["content"],
        json!([
            {"type": "tool_result", "tool_use_id": "call_r1", "content": "# Project\nA demo."},
            {"type": "tool_result", "tool_use_id": "call_r2", "content": "[package]\nname = \"demo\"",
                "cache_control": {"type": "ephemeral"}}
        ])
    );
    assert_eq!(
        out["messages"][2]["content"],
        json!([{"type": "tool_result", "tool_use_id": "callabc123", "content": "README.md\nsrc\nCargo.toml"}])
    );
    assert_eq!(
        out["messages"][4]["content"][1],
        json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}})
    );
}

#[test]
fn claude_code_request_round_trips() {
    let req = MessagesRequest::from_slice(CLAUDE_CODE.as_bytes()).unwrap();
    let original: Value = serde_json::from_str(CLAUDE_CODE).unwrap();
    assert_eq!(serde_json::to_value(&req).unwrap(), original);
    assert!(req.extra.contains_key("thinking"));
    assert!(req.extra.contains_key("context_management"));
    assert!(req.extra.contains_key("output_config"));
    let user_id = req.metadata.as_ref().unwrap().user_id.as_deref().unwrap();
    let session: Value = serde_json::from_str(user_id).unwrap();
    assert_eq!(
        session["session_id"],
        "8a6e2c1d-3b7f-4e0a-9c5d-1f2e3a4b5c6d"
    );
    assert_eq!(
        newest_user_text_anthropic(&req),
        "Also keep the style consistent."
    );
}

#[test]
fn claude_code_request_translates() {
    let req = MessagesRequest::from_slice(CLAUDE_CODE.as_bytes()).unwrap();
    let out = serde_json::to_value(anthropic_request_to_openai(req).unwrap()).unwrap();
    let messages = out["messages"].as_array().unwrap();
    let roles: Vec<&str> = messages
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(
        roles,
        ["system", "user", "assistant", "tool", "system", "user"]
    );
    assert_eq!(
        messages[0]["content"],
        "You are Claude Code, Anthropic's official CLI for Claude.\n\nYou are an interactive CLI tool that helps users with software engineering tasks."
    );
    assert_eq!(messages[2]["content"], "I'll read the file.");
    assert_eq!(
        messages[2]["tool_calls"][0]["function"]["arguments"],
        "{\"file_path\":\"/repo/src/lib.rs\"}"
    );
    assert_eq!(messages[3]["tool_call_id"], "toolu_01A09q90qw90lq917835lq9");
    assert_eq!(
        messages[4]["content"],
        "The user opened the file src/lib.rs in the IDE."
    );
    assert_eq!(out["max_tokens"], 32000);
    assert_eq!(out["stream_options"], json!({"include_usage": true}));
    assert!(out["user"].as_str().unwrap().contains("session_id"));
    for k in [
        "thinking",
        "context_management",
        "output_config",
        "metadata",
        "system",
    ] {
        assert!(
            out.get(k).is_none(),
            "{k} must not reach an OpenAI upstream"
        );
    }
    assert_eq!(out["tools"].as_array().unwrap().len(), 2);

    // And back: the system messages fold into `system`, the tool result re-attaches.
    let back = openai_request_to_anthropic(serde_json::from_value(out).unwrap()).unwrap();
    assert_eq!(back.messages.len(), 3);
    let Content::Blocks(blocks) = &back.messages[2].content else {
        panic!("blocks expected")
    };
    assert!(
        matches!(&blocks[0], ContentBlock::ToolResult { tool_use_id, .. } if tool_use_id == "toolu_01A09q90qw90lq917835lq9")
    );
    assert_eq!(blocks[1].as_text(), Some("Also keep the style consistent."));
}
