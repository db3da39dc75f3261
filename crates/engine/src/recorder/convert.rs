//! `TurnRecord` → `NewTurn`, on the recorder thread: streamed replies are assembled into
//! the JSON a non-streaming call would have returned, and token usage is read from it.

use crate::clock::unix_ms;

use bytes::Bytes;
use metaclaw_proxy::seams::{Protocol, ReplyCapture, TurnRecord};
use metaclaw_store::NewTurn;
use metaclaw_wire::assemble::{
    TokenUsage, assemble_anthropic_sse, assemble_openai_sse, usage_anthropic, usage_openai,
};
use serde_json::Value;

/// How much of an unassemblable stream is kept in the error, for diagnosis.
const RAW_REPLY_LIMIT: usize = 2048;

/// Usage comes from the upstream when the proxy read it on the way (`record.figures`), else
/// from the reply as the client saw it.
pub(super) fn new_turn(record: TurnRecord) -> NewTurn {
    let figures = record.figures;
    let reply = reply(record.client_protocol, &record.reply);
    let usage = figures
        .upstream_usage
        .filter(TokenUsage::is_known)
        .unwrap_or(reply.usage);
    let error = match (record.error, reply.error) {
        (Some(turn), Some(assembly)) => Some(format!("{turn}; {assembly}")),
        (turn, assembly) => turn.or(assembly),
    };
    NewTurn {
        session_id: record.session_id,
        turn_type: record.turn_type.as_str().to_owned(),
        scope: record.scope,
        client_protocol: record.client_protocol.as_str().to_owned(),
        upstream_protocol: record.upstream_protocol.as_str().to_owned(),
        upstream: record.upstream,
        model: record.model,
        request_json: into_text(record.request),
        reply_json: reply.json,
        status: record.status,
        error,
        input_tokens: usage.input_tokens,
        output_tokens: usage.output_tokens,
        cache_read_tokens: usage.cache_read_tokens,
        cache_write_tokens: usage.cache_write_tokens,
        overhead_ms: record.overhead_ms,
        ttft_ms: record.ttft_ms,
        total_ms: record.total_ms,
        created_at_ms: unix_ms(record.started_at),
        skill_generation: record.skill_generation,
        injected_skills: record.injected_skills,
        injected_memories: figures.injected_memories,
        injected_tokens: Some(figures.injected_tokens),
        block_tokens: Some(figures.block_tokens),
        held_out: figures.held_out,
    }
}

/// The request as text, taking over its buffer when nothing else holds it (a huge request
/// is not copied once more on its way to the database).
fn into_text(request: Bytes) -> String {
    String::from_utf8(Vec::from(request))
        .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// Milliseconds since the Unix epoch (0 for a clock set before 1970).
struct Reply {
    json: Option<String>,
    usage: TokenUsage,
    error: Option<String>,
}

/// The reply is in the client's protocol: that is what the client saw.
fn reply(protocol: Protocol, capture: &ReplyCapture) -> Reply {
    let usage_of = |value: &Value| match protocol {
        Protocol::Openai => usage_openai(value),
        Protocol::Anthropic => usage_anthropic(value),
    };
    match capture {
        ReplyCapture::Json(body) => Reply {
            json: Some(String::from_utf8_lossy(body).into_owned()),
            usage: serde_json::from_slice(body)
                .map(|value| usage_of(&value))
                .unwrap_or_default(),
            error: None,
        },
        ReplyCapture::Sse(chunks) => {
            let assembled = match protocol {
                Protocol::Openai => assemble_openai_sse(chunks),
                Protocol::Anthropic => assemble_anthropic_sse(chunks),
            };
            match assembled {
                Ok(value) => Reply {
                    json: Some(value.to_string()),
                    usage: usage_of(&value),
                    error: None,
                },
                Err(e) => Reply {
                    json: None,
                    usage: TokenUsage::default(),
                    error: Some(format!(
                        "reply not assembled: {e}; raw stream: {}",
                        raw_head(chunks)
                    )),
                },
            }
        }
        ReplyCapture::None => Reply {
            json: None,
            usage: TokenUsage::default(),
            error: None,
        },
    }
}

/// The first bytes of the raw stream, as text.
fn raw_head(chunks: &[Bytes]) -> String {
    let bytes: Vec<u8> = chunks
        .iter()
        .flat_map(|c| c.iter().copied())
        .take(RAW_REPLY_LIMIT)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}
