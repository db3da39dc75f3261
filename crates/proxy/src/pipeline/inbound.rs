//! Reading and checking the client's request body before anything else touches it.

use axum::body::Body;
use axum::body::HttpBody as _;
use axum::http::StatusCode;
use http_body_util::{BodyExt, LengthLimitError, Limited};
use serde_json::{Map, Value};

use crate::error::{ApiError, ErrorKind};
use crate::seams::Protocol;

/// Reads the whole body, refusing more than `limit` bytes with a 413. The body is gathered
/// into one buffer sized from its length as it arrives, so a large body is held once, not as
/// chunks plus a copy.
pub async fn read_body(
    protocol: Protocol,
    body: Body,
    limit: usize,
) -> Result<bytes::Bytes, ApiError> {
    let mut body = Limited::new(body, limit);
    let expected = usize::try_from(body.size_hint().lower()).unwrap_or(limit);
    let mut buf = bytes::BytesMut::with_capacity(expected.min(limit));
    while let Some(frame) = body.frame().await {
        match frame {
            Ok(frame) => {
                if let Ok(data) = frame.into_data() {
                    buf.extend_from_slice(&data);
                }
            }
            Err(e) if e.downcast_ref::<LengthLimitError>().is_some() => {
                return Err(ApiError::new(
                    protocol,
                    StatusCode::PAYLOAD_TOO_LARGE,
                    ErrorKind::TooLarge,
                    format!(
                        "request body is larger than proxy.max_body_mb ({} MB)",
                        limit / (1024 * 1024)
                    ),
                ));
            }
            Err(e) => {
                return Err(ApiError::bad_request(
                    protocol,
                    format!("could not read the request body: {e}"),
                ));
            }
        }
    }
    Ok(buf.freeze())
}

/// Parses the body as a JSON object and checks the fields the proxy relies on.
pub fn parse(protocol: Protocol, bytes: &[u8]) -> Result<Map<String, Value>, ApiError> {
    if bytes.is_empty() {
        return Err(ApiError::bad_request(
            protocol,
            "request body is empty; expected a JSON object",
        ));
    }
    let value: Value = serde_json::from_slice(bytes).map_err(|e| {
        ApiError::bad_request(protocol, format!("request body is not valid JSON: {e}"))
    })?;
    let Value::Object(map) = value else {
        return Err(ApiError::bad_request(
            protocol,
            "request body must be a JSON object",
        ));
    };
    validate(protocol, &map)?;
    Ok(map)
}

fn validate(protocol: Protocol, map: &Map<String, Value>) -> Result<(), ApiError> {
    let bad = |m: String| ApiError::bad_request(protocol, m);
    if let Some(model) = map.get("model")
        && !model.is_string()
    {
        return Err(bad("`model` must be a string".into()));
    }
    if protocol == Protocol::Anthropic && !map.get("model").is_some_and(Value::is_string) {
        return Err(bad("`model` is required".into()));
    }
    if let Some(stream) = map.get("stream")
        && !(stream.is_boolean() || stream.is_null())
    {
        return Err(bad("`stream` must be true or false".into()));
    }
    let messages = match map.get("messages") {
        Some(Value::Array(m)) if !m.is_empty() => m,
        Some(Value::Array(_)) => return Err(bad("`messages` must not be empty".into())),
        Some(_) => return Err(bad("`messages` must be an array".into())),
        None => return Err(bad("`messages` is required".into())),
    };
    for (i, m) in messages.iter().enumerate() {
        let Some(obj) = m.as_object() else {
            return Err(bad(format!("messages[{i}] must be an object")));
        };
        match obj.get("role") {
            Some(Value::String(_)) => {}
            Some(_) => return Err(bad(format!("messages[{i}].role must be a string"))),
            None => return Err(bad(format!("messages[{i}].role is required"))),
        }
        match obj.get("content") {
            None | Some(Value::Null | Value::String(_) | Value::Array(_)) => {}
            Some(_) => {
                return Err(bad(format!(
                    "messages[{i}].content must be a string or an array of content parts"
                )));
            }
        }
    }
    if let Some(sys) = map.get("system")
        && !(sys.is_string() || sys.is_array() || sys.is_null())
    {
        return Err(bad(
            "`system` must be a string or an array of text blocks".into()
        ));
    }
    if let Some(tools) = map.get("tools")
        && !(tools.is_array() || tools.is_null())
    {
        return Err(bad("`tools` must be an array".into()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(p: Protocol, body: &str) -> String {
        parse(p, body.as_bytes()).unwrap_err().message
    }

    #[test]
    fn rejects_bad_shapes_with_clear_messages() {
        assert!(err(Protocol::Openai, "").contains("empty"));
        assert!(err(Protocol::Openai, "{").contains("not valid JSON"));
        assert!(err(Protocol::Openai, "[1]").contains("JSON object"));
        assert!(err(Protocol::Openai, r#"{"messages":[]}"#).contains("must not be empty"));
        assert!(err(Protocol::Openai, r#"{"messages":"hi"}"#).contains("must be an array"));
        assert!(
            err(
                Protocol::Openai,
                r#"{"model":3,"messages":[{"role":"user","content":"x"}]}"#
            )
            .contains("`model`")
        );
        assert!(
            err(Protocol::Openai, r#"{"messages":[{"content":"x"}]}"#).contains("messages[0].role")
        );
        assert!(
            err(
                Protocol::Openai,
                r#"{"messages":[{"role":"user","content":5}]}"#
            )
            .contains("messages[0].content")
        );
        assert!(
            err(
                Protocol::Anthropic,
                r#"{"messages":[{"role":"user","content":"x"}]}"#
            )
            .contains("`model` is required")
        );
        assert!(
            err(
                Protocol::Openai,
                r#"{"stream":"yes","messages":[{"role":"user","content":"x"}]}"#
            )
            .contains("`stream`")
        );
    }

    #[test]
    fn accepts_what_real_agents_send() {
        let openclaw = r#"{"model":"m","stream":true,"messages":[
            {"role":"system","content":"S"},
            {"role":"user","content":"a"},{"role":"user","content":[{"type":"text","text":"b"}]},
            {"role":"assistant","content":null,"tool_calls":[{"id":"callabc","type":"function","function":{"name":"f","arguments":"{}"}}]},
            {"role":"tool","tool_call_id":"callabc","content":"ok"}]}"#;
        assert!(parse(Protocol::Openai, openclaw.as_bytes()).is_ok());
        let claude = r#"{"model":"m","max_tokens":10,"messages":[{"role":"system","content":"s"},{"role":"user","content":"hi"}]}"#;
        assert!(parse(Protocol::Anthropic, claude.as_bytes()).is_ok());
    }
}
