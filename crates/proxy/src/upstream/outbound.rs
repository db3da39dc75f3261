//! The body and URL sent to one upstream: the client's body with only MetaClaw's changes when
//! the protocols match, a translation when they differ.

use bytes::Bytes;
use metaclaw_wire::{anthropic, openai, translate};
use serde::Deserialize;
use serde_json::Value;

use crate::config::UpstreamConfig;
use crate::error::ApiError;
use crate::pipeline::normalize;
use crate::seams::Protocol;

/// The JSON body to forward for `client`'s request to `upstream`.
///
/// `request` is borrowed mutably only to swap the model in and back out, so a fallback
/// upstream sees the client's body again without a deep copy of a 60 KB prompt.
pub fn body(
    client: Protocol,
    upstream: &UpstreamConfig,
    request: &mut Value,
) -> Result<Bytes, ApiError> {
    if client == upstream.protocol {
        if client == Protocol::Anthropic && normalize::has_system_messages(request) {
            // Rare (Claude Code reminders): repair a copy so a fallback sees the original.
            let mut copy = request.clone();
            if let Some(obj) = copy.as_object_mut() {
                normalize::anthropic_system_messages(obj);
            }
            return with_model(&mut copy, upstream.model.as_deref(), |v| encode(client, v));
        }
        return with_model(request, upstream.model.as_deref(), |v| encode(client, v));
    }
    let mut translated = match client {
        Protocol::Anthropic => {
            let req = anthropic::MessagesRequest::deserialize(&*request).map_err(|e| {
                ApiError::bad_request(client, format!("invalid Anthropic request: {e}"))
            })?;
            let mut out = translate::anthropic_request_to_openai(req)
                .map_err(|e| ApiError::bad_request(client, e.to_string()))?;
            if out.stream == Some(true) {
                // The Anthropic client is owed usage in `message_delta`; ask the upstream for it.
                out.extra.insert(
                    "stream_options".into(),
                    serde_json::json!({"include_usage": true}),
                );
            }
            to_value(client, &out)?
        }
        Protocol::Openai => {
            let req = openai::ChatRequest::deserialize(&*request).map_err(|e| {
                ApiError::bad_request(client, format!("invalid OpenAI request: {e}"))
            })?;
            let out = translate::openai_request_to_anthropic(req)
                .map_err(|e| ApiError::bad_request(client, e.to_string()))?;
            to_value(client, &out)?
        }
    };
    with_model(&mut translated, upstream.model.as_deref(), |v| {
        encode(client, v)
    })
}

fn with_model<T>(request: &mut Value, model: Option<&str>, f: impl FnOnce(&Value) -> T) -> T {
    let (Some(model), Some(obj)) = (model, request.as_object_mut()) else {
        return f(request);
    };
    let previous = obj.insert("model".into(), Value::String(model.to_string()));
    let out = f(request);
    if let Some(obj) = request.as_object_mut() {
        match previous {
            Some(p) => obj.insert("model".into(), p),
            None => obj.remove("model"),
        };
    }
    out
}

fn encode(client: Protocol, v: &Value) -> Result<Bytes, ApiError> {
    serde_json::to_vec(v)
        .map(Bytes::from)
        .map_err(|e| ApiError::bad_request(client, format!("could not encode the request: {e}")))
}

fn to_value<T: serde::Serialize>(client: Protocol, v: &T) -> Result<Value, ApiError> {
    serde_json::to_value(v)
        .map_err(|e| ApiError::bad_request(client, format!("could not encode the request: {e}")))
}

/// The endpoint URL for a turn (or for token counting, Anthropic only).
pub fn url(upstream: &UpstreamConfig, count_tokens: bool) -> String {
    let base = upstream.base_url.trim_end_matches('/');
    match upstream.protocol {
        Protocol::Openai => format!("{base}/chat/completions"),
        Protocol::Anthropic => {
            let messages = if base.ends_with("/v1") {
                format!("{base}/messages")
            } else {
                format!("{base}/v1/messages")
            };
            if count_tokens {
                format!("{messages}/count_tokens")
            } else {
                messages
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn up(protocol: Protocol, base: &str, model: Option<&str>) -> UpstreamConfig {
        UpstreamConfig {
            name: "primary".into(),
            protocol,
            base_url: base.into(),
            model: model.map(str::to_string),
            api_key: None,
            extra_headers: vec![],
        }
    }

    #[test]
    fn same_protocol_keeps_unknown_fields_and_restores_model() {
        let mut req = json!({"model":"client-m","thinking":{"type":"enabled"},"context_management":{"x":1},
            "max_tokens":5,"messages":[{"role":"user","content":"hi"}]});
        let u = up(Protocol::Anthropic, "http://h", Some("real-m"));
        let out: Value =
            serde_json::from_slice(&body(Protocol::Anthropic, &u, &mut req).unwrap()).unwrap();
        assert_eq!(out["model"], "real-m");
        assert_eq!(out["thinking"]["type"], "enabled");
        assert_eq!(out["context_management"]["x"], 1);
        assert_eq!(
            req["model"], "client-m",
            "the client's body is intact for a fallback"
        );
    }

    #[test]
    fn urls() {
        assert_eq!(
            url(&up(Protocol::Openai, "http://h/v1/", None), false),
            "http://h/v1/chat/completions"
        );
        assert_eq!(
            url(
                &up(Protocol::Anthropic, "https://api.anthropic.com", None),
                false
            ),
            "https://api.anthropic.com/v1/messages"
        );
        assert_eq!(
            url(&up(Protocol::Anthropic, "http://h/v1", None), true),
            "http://h/v1/messages/count_tokens"
        );
    }
}
