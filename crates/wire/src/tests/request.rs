use crate::WireError;
use crate::anthropic::MessagesRequest;
use crate::openai::ChatRequest;
use crate::translate::{
    DEFAULT_MAX_TOKENS, anthropic_request_to_openai, openai_request_to_anthropic,
};
use serde_json::{Value, json};

fn o2a(v: Value) -> Value {
    let req: ChatRequest = serde_json::from_value(v).unwrap();
    serde_json::to_value(openai_request_to_anthropic(req).unwrap()).unwrap()
}

fn a2o(v: Value) -> Value {
    let req: MessagesRequest = serde_json::from_value(v).unwrap();
    serde_json::to_value(anthropic_request_to_openai(req).unwrap()).unwrap()
}

#[test]
fn anthropic_to_openai_full() {
    let out = a2o(json!({
        "model": "claude-x",
        "max_tokens": 1000,
        "system": [{"type": "text", "text": "You are A."}, {"type": "text", "text": "Be nice.", "cache_control": {"type": "ephemeral"}}],
        "messages": [
            {"role": "user", "content": "hello"},
            {"role": "system", "content": "mid-conversation note"},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "let me think", "signature": "s"},
                {"type": "text", "text": "Checking."},
                {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {"path": "a.txt"}},
                {"type": "tool_use", "id": "toolu_2", "name": "read", "input": {"path": "b.txt"}}
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "AAA"},
                {"type": "tool_result", "tool_use_id": "toolu_2", "is_error": true,
                 "content": [{"type": "text", "text": "not found"}, {"type": "image", "source": {"type": "url", "url": "https://x/e.png"}}]},
                {"type": "text", "text": "and this"},
                {"type": "image", "source": {"type": "base64", "media_type": "image/jpeg", "data": "QUJD"}}
            ]}
        ],
        "stop_sequences": ["END"],
        "temperature": 0.5,
        "top_p": 0.9,
        "stream": true,
        "metadata": {"user_id": "u-1"},
        "tools": [
            {"name": "read", "description": "Read a file", "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}}},
            {"name": "noschema"},
            {"type": "web_search_20250305", "name": "web_search"}
        ],
        "tool_choice": {"type": "tool", "name": "read", "disable_parallel_tool_use": true},
        "thinking": {"type": "enabled", "budget_tokens": 500},
        "top_k": 3
    }));
    assert_eq!(
        out,
        json!({
            "model": "claude-x",
            "messages": [
                {"role": "system", "content": "You are A.\n\nBe nice."},
                {"role": "user", "content": "hello"},
                {"role": "system", "content": "mid-conversation note"},
                {"role": "assistant", "content": "Checking.", "tool_calls": [
                    {"id": "toolu_1", "type": "function", "function": {"name": "read", "arguments": "{\"path\":\"a.txt\"}"}},
                    {"id": "toolu_2", "type": "function", "function": {"name": "read", "arguments": "{\"path\":\"b.txt\"}"}}
                ]},
                {"role": "tool", "content": "AAA", "tool_call_id": "toolu_1"},
                {"role": "tool", "content": "Error: not found", "tool_call_id": "toolu_2"},
                {"role": "user", "content": [
                    {"type": "image_url", "image_url": {"url": "https://x/e.png"}},
                    {"type": "text", "text": "and this"},
                    {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,QUJD"}}
                ]}
            ],
            "stream": true,
            "stream_options": {"include_usage": true},
            "max_tokens": 1000,
            "temperature": 0.5,
            "top_p": 0.9,
            "stop": ["END"],
            "tools": [
                {"type": "function", "function": {"name": "read", "description": "Read a file", "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}},
                {"type": "function", "function": {"name": "noschema", "parameters": {"type": "object", "properties": {}}}}
            ],
            "tool_choice": {"type": "function", "function": {"name": "read"}},
            "parallel_tool_calls": false,
            "user": "u-1"
        })
    );
}

#[test]
fn anthropic_tool_choice_variants() {
    for (a, o) in [
        (json!({"type": "auto"}), json!("auto")),
        (json!({"type": "any"}), json!("required")),
        (json!({"type": "none"}), json!("none")),
    ] {
        let out = a2o(json!({
            "model": "m", "max_tokens": 5,
            "messages": [{"role": "user", "content": "x"}],
            "tools": [{"name": "f", "input_schema": {"type": "object"}}],
            "tool_choice": a
        }));
        assert_eq!(out["tool_choice"], o);
        assert!(out.get("parallel_tool_calls").is_none());
        assert!(out.get("stream_options").is_none());
    }
}

#[test]
fn anthropic_raw_input_restores_arguments() {
    let out = a2o(json!({
        "model": "m", "max_tokens": 5,
        "messages": [{"role": "assistant", "content": [
            {"type": "tool_use", "id": "t", "name": "f", "input": {"_raw": "{broken"}}
        ]}]
    }));
    assert_eq!(
        out["messages"][0]["tool_calls"][0]["function"]["arguments"],
        "{broken"
    );
    assert!(out["messages"][0].get("content").is_none());
}

#[test]
fn anthropic_empty_messages_is_an_error() {
    let req: MessagesRequest =
        serde_json::from_value(json!({"model": "m", "max_tokens": 1, "messages": []})).unwrap();
    assert!(matches!(
        anthropic_request_to_openai(req),
        Err(WireError::EmptyMessages)
    ));
}

#[test]
fn openai_to_anthropic_full() {
    let out = o2a(json!({
        "model": "gpt-x",
        "messages": [
            {"role": "system", "content": "Sys one."},
            {"role": "developer", "content": [{"type": "text", "text": "Dev two."}]},
            {"role": "user", "content": "first"},
            {"role": "user", "content": [
                {"type": "text", "text": "second", "cache_control": {"type": "ephemeral"}},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBO"}},
                {"type": "image_url", "image_url": {"url": "https://example.com/cat.jpg"}}
            ]},
            {"role": "assistant", "content": "", "reasoning_content": "hidden", "tool_calls": [
                {"id": "call_abc", "type": "function", "function": {"name": "exec", "arguments": "{\"cmd\":\"ls\"}"}},
                {"id": "call_def", "type": "function", "function": {"name": "exec", "arguments": "not json"}},
                {"id": "call_ghi", "type": "function", "function": {"name": "noargs", "arguments": ""}}
            ]},
            {"role": "tool", "tool_call_id": "callabc", "content": "file.txt"},
            {"role": "tool", "tool_call_id": "call_ghi", "content": "done"},
            {"role": "tool", "tool_call_id": "mystery", "content": "Error: boom"},
            {"role": "user", "content": "thanks"},
            {"role": "assistant", "content": "You're welcome."}
        ],
        "max_completion_tokens": 300,
        "max_tokens": 100,
        "temperature": 1.5,
        "top_p": 0.5,
        "stop": "STOP",
        "stream": true,
        "stream_options": {"include_usage": true},
        "user": "someone",
        "tools": [{"type": "function", "function": {"name": "exec", "description": "Run", "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}}}},
                  {"type": "function", "function": {"name": "noargs"}}],
        "tool_choice": "required",
        "parallel_tool_calls": false,
        "frequency_penalty": 0.2
    }));
    assert_eq!(
        out,
        json!({
            "model": "gpt-x",
            "messages": [
                {"role": "user", "content": [
                    {"type": "text", "text": "first"},
                    {"type": "text", "text": "second", "cache_control": {"type": "ephemeral"}},
                    {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBO"}},
                    {"type": "image", "source": {"type": "url", "url": "https://example.com/cat.jpg"}}
                ]},
                {"role": "assistant", "content": [
                    {"type": "tool_use", "id": "call_abc", "name": "exec", "input": {"cmd": "ls"}},
                    {"type": "tool_use", "id": "call_def", "name": "exec", "input": {"_raw": "not json"}},
                    {"type": "tool_use", "id": "call_ghi", "name": "noargs", "input": {}}
                ]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "call_abc", "content": "file.txt"},
                    {"type": "tool_result", "tool_use_id": "call_ghi", "content": "done"},
                    {"type": "tool_result", "tool_use_id": "call_def", "content": "boom", "is_error": true},
                    {"type": "text", "text": "thanks"}
                ]},
                {"role": "assistant", "content": "You're welcome."}
            ],
            "system": "Sys one.\n\nDev two.",
            "max_tokens": 300,
            "stop_sequences": ["STOP"],
            "stream": true,
            "temperature": 1,
            "tools": [
                {"name": "exec", "description": "Run", "input_schema": {"type": "object", "properties": {"cmd": {"type": "string"}}}},
                {"name": "noargs", "input_schema": {"type": "object", "properties": {}}}
            ],
            "tool_choice": {"type": "any", "disable_parallel_tool_use": true},
            "metadata": {"user_id": "someone"}
        })
    );
}

#[test]
fn openai_defaults_and_tool_choice_variants() {
    let base = |tc: Value| {
        o2a(json!({
            "model": "m",
            "messages": [{"role": "user", "content": "x"}],
            "tools": [{"type": "function", "function": {"name": "f"}}],
            "tool_choice": tc,
            "max_tokens": 7
        }))
    };
    assert_eq!(base(json!("auto"))["tool_choice"], json!({"type": "auto"}));
    assert_eq!(base(json!("none"))["tool_choice"], json!({"type": "none"}));
    assert_eq!(
        base(json!({"type": "function", "function": {"name": "f"}}))["tool_choice"],
        json!({"type": "tool", "name": "f"})
    );
    assert_eq!(base(json!("auto"))["max_tokens"], 7);
    let out = o2a(
        json!({"model": "m", "messages": [{"role": "user", "content": "x"}], "tool_choice": "auto", "top_p": 0.3}),
    );
    assert_eq!(out["max_tokens"], DEFAULT_MAX_TOKENS);
    assert!(out.get("tool_choice").is_none(), "no tools, no tool_choice");
    assert_eq!(out["top_p"], 0.3);
}

#[test]
fn unanswered_tool_calls_get_a_result_and_orphans_become_text() {
    let out = o2a(json!({
        "model": "m",
        "messages": [
            {"role": "tool", "tool_call_id": "early", "content": "orphan"},
            {"role": "assistant", "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}},
                {"id": "b", "type": "function", "function": {"name": "f", "arguments": "{}"}}
            ]},
            {"role": "tool", "tool_call_id": "zzz", "content": "first by position"},
            {"role": "user", "content": "go on"},
            {"role": "assistant", "content": "ok"}
        ]
    }));
    assert_eq!(
        out["messages"],
        json!([
            {"role": "user", "content": "Tool result (early):\norphan"},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "a", "name": "f", "input": {}},
                {"type": "tool_use", "id": "b", "name": "f", "input": {}}
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "a", "content": "first by position"},
                {"type": "tool_result", "tool_use_id": "b", "content": "No result was provided for this tool call.", "is_error": true},
                {"type": "text", "text": "go on", "cache_control": {"type": "ephemeral"}}
            ]},
            {"role": "assistant", "content": "ok"}
        ])
    );
}

#[test]
fn legacy_function_messages_and_missing_ids() {
    let out = o2a(json!({
        "model": "m",
        "messages": [
            {"role": "user", "content": "x"},
            {"role": "assistant", "content": null, "function_call": {"name": "f", "arguments": "{\"a\":1}"}},
            {"role": "function", "name": "f", "content": "42"}
        ]
    }));
    assert_eq!(
        out["messages"][1]["content"],
        json!([{"type": "tool_use", "id": "toolu_1_0", "name": "f", "input": {"a": 1}}])
    );
    assert_eq!(
        out["messages"][2]["content"],
        json!([{"type": "tool_result", "tool_use_id": "toolu_1_0", "content": "42",
            "cache_control": {"type": "ephemeral"}}])
    );
}

#[test]
fn empty_content_makes_no_block_and_empty_request_errors() {
    let out = o2a(json!({
        "model": "m",
        "messages": [
            {"role": "user", "content": ""},
            {"role": "user", "content": []},
            {"role": "user", "content": "real"},
            {"role": "assistant", "content": ""}
        ]
    }));
    assert_eq!(
        out["messages"],
        json!([{"role": "user", "content": [
            {"type": "text", "text": "real", "cache_control": {"type": "ephemeral"}}
        ]}])
    );
    for messages in [
        json!([]),
        json!([{"role": "system", "content": "s"}]),
        json!([{"role": "user", "content": ""}]),
    ] {
        let req: ChatRequest =
            serde_json::from_value(json!({"model": "m", "messages": messages})).unwrap();
        assert!(matches!(
            openai_request_to_anthropic(req),
            Err(WireError::EmptyMessages)
        ));
    }
}

#[test]
fn a_translated_request_gets_cache_breakpoints_on_stable_parts_only() {
    // OpenClaw's shape: the user's stamped message, then its internal-context envelope.
    let out = o2a(json!({
        "model": "m",
        "tools": [
            {"type": "function", "function": {"name": "a", "parameters": {"type": "object"}}},
            {"type": "function", "function": {"name": "b", "parameters": {"type": "object"}}}
        ],
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "[Thu 2026-12-03 17:38 UTC] weather in Rome?"},
            {"role": "user", "content": "<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>\nnone\n<<<END_OPENCLAW_INTERNAL_CONTEXT>>>"}
        ]
    }));
    let eph = json!({"type": "ephemeral"});
    assert!(out["tools"][0].get("cache_control").is_none());
    assert_eq!(out["tools"][1]["cache_control"], eph);
    assert_eq!(out["system"][0]["text"], "Be brief.");
    assert_eq!(out["system"][0]["cache_control"], eph);
    let blocks = out["messages"][0]["content"].as_array().unwrap();
    assert_eq!(blocks.len(), 2, "{out}");
    // On the user's own words, not on the envelope that next turn's history will lack.
    assert_eq!(blocks[0]["cache_control"], eph, "{out}");
    assert!(blocks[1].get("cache_control").is_none(), "{out}");
    let breakpoints = out.to_string().matches("cache_control").count();
    assert_eq!(breakpoints, 3);

    // In a tool round, the results after the user's message are cached too.
    let round = o2a(json!({
        "model": "m",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "read the file"},
            {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function",
                "function": {"name": "read", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "contents"}
        ]
    }));
    assert_eq!(
        round["messages"][0]["content"][0]["cache_control"], eph,
        "{round}"
    );
    assert_eq!(round["messages"][2]["content"][0]["type"], "tool_result");
    assert_eq!(
        round["messages"][2]["content"][0]["cache_control"], eph,
        "{round}"
    );
    assert_eq!(round.to_string().matches("cache_control").count(), 3);

    // A client that placed its own breakpoints keeps exactly those.
    let own = o2a(json!({"model": "m", "messages": [
        {"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}]},
        {"role": "assistant", "content": "yo"},
        {"role": "user", "content": "again"}
    ]}));
    assert_eq!(own.to_string().matches("cache_control").count(), 1, "{own}");
}
