//! Shared fixtures for the store's integration tests.

use metaclaw_store::NewTurn;

pub fn turn(session: &str, turn_type: &str, at_ms: i64) -> NewTurn {
    NewTurn {
        session_id: session.to_owned(),
        turn_type: turn_type.to_owned(),
        scope: "default".to_owned(),
        client_protocol: "openai".to_owned(),
        upstream_protocol: "anthropic".to_owned(),
        upstream: "primary".to_owned(),
        model: "m".to_owned(),
        request_json: r#"{"messages":[]}"#.to_owned(),
        reply_json: Some(r#"{"ok":true}"#.to_owned()),
        status: 200,
        error: None,
        input_tokens: Some(10),
        output_tokens: Some(5),
        cache_read_tokens: None,
        cache_write_tokens: None,
        overhead_ms: 0.5,
        ttft_ms: Some(12.0),
        total_ms: 40.0,
        created_at_ms: at_ms,
        skill_generation: 0,
        injected_skills: Vec::new(),
        injected_memories: Vec::new(),
        injected_tokens: None,
        block_tokens: None,
        held_out: false,
    }
}
