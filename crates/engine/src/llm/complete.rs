//! One-shot completions: a system and a user message in, the assistant's text out.

use metaclaw_proxy::seams::Protocol;
use serde_json::{Value, json};

use super::calls::Purpose;
use super::endpoint::Endpoint;
use super::error::LlmError;
use super::http::{Rejected, malformed, post_json};

/// A request for one reply.
#[derive(Debug, Clone)]
pub struct Completion {
    pub system: String,
    pub user: String,
    pub max_tokens: u32,
    /// `(name, JSON schema)` the reply must follow. Sent as OpenAI `response_format`;
    /// Anthropic has no equivalent, so the schema goes into the system prompt instead.
    pub json_schema: Option<(String, Value)>,
}

/// Asks the endpoint's model and returns the assistant's text.
///
/// An OpenAI-compatible server that refuses `response_format` with a 400 is asked once more
/// without it (the schema is then only in the prompt), since many compatible servers do not
/// implement structured output.
pub async fn complete(
    http: &reqwest::Client,
    ep: &Endpoint,
    req: &Completion,
) -> Result<String, LlmError> {
    complete_for(Purpose::Other, http, ep, req).await
}

/// [`complete`], counted in the learning ledger under `purpose`.
pub async fn complete_for(
    purpose: Purpose,
    http: &reqwest::Client,
    ep: &Endpoint,
    req: &Completion,
) -> Result<String, LlmError> {
    match ep.protocol {
        Protocol::Openai => {
            let chat = "chat/completions";
            let first = post_json(http, ep, chat, &openai_body(ep, req, true), purpose).await?;
            let reply = match first {
                Err(r) if req.json_schema.is_some() && refuses_schema(&r) => {
                    tracing::debug!(model = %ep.model, "response_format refused; retrying without it");
                    post_json(http, ep, chat, &openai_body(ep, req, false), purpose).await?
                }
                other => other,
            };
            openai_text(ep, reply.map_err(|r| r.into_error(ep))?)
        }
        Protocol::Anthropic => {
            let reply = post_json(http, ep, "messages", &anthropic_body(ep, req), purpose).await?;
            anthropic_text(ep, reply.map_err(|r| r.into_error(ep))?)
        }
    }
}

fn refuses_schema(r: &Rejected) -> bool {
    let m = r.message.to_ascii_lowercase();
    r.status == 400 && (m.contains("response_format") || m.contains("json_schema"))
}

/// The schema spelled out for the model, for when it cannot be enforced.
fn schema_instruction(req: &Completion) -> Option<String> {
    req.json_schema.as_ref().map(|(_, schema)| {
        format!("Reply with one JSON object only, no prose or code fences, matching this JSON schema: {schema}")
    })
}

fn openai_body(ep: &Endpoint, req: &Completion, with_format: bool) -> Value {
    let system = match (with_format, schema_instruction(req)) {
        (false, Some(line)) => format!("{}\n\n{line}", req.system),
        _ => req.system.clone(),
    };
    let mut body = json!({
        "model": ep.model,
        "messages": [
            { "role": "system", "content": system },
            { "role": "user", "content": req.user },
        ],
        "max_tokens": req.max_tokens,
        "stream": false,
    });
    if let (true, Some((name, schema))) = (with_format, &req.json_schema) {
        body["response_format"] = json!({
            "type": "json_schema",
            "json_schema": { "name": name, "schema": schema, "strict": false },
        });
    }
    body
}

fn anthropic_body(ep: &Endpoint, req: &Completion) -> Value {
    let system = match schema_instruction(req) {
        Some(line) => format!("{}\n\n{line}", req.system),
        None => req.system.clone(),
    };
    json!({
        "model": ep.model,
        "max_tokens": req.max_tokens,
        "system": system,
        "messages": [{ "role": "user", "content": req.user }],
    })
}

fn openai_text(ep: &Endpoint, reply: Value) -> Result<String, LlmError> {
    reply
        .pointer("/choices/0/message/content")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| malformed(ep, "no choices[0].message.content text"))
}

/// Text blocks joined; thinking and other blocks are skipped.
fn anthropic_text(ep: &Endpoint, reply: Value) -> Result<String, LlmError> {
    let blocks = reply
        .get("content")
        .and_then(Value::as_array)
        .ok_or_else(|| malformed(ep, "no content array"))?;
    let texts: Vec<&str> = blocks
        .iter()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
        .filter_map(|b| b.get("text").and_then(Value::as_str))
        .collect();
    if texts.is_empty() {
        return Err(malformed(ep, "no text block in the content"));
    }
    Ok(texts.concat())
}
