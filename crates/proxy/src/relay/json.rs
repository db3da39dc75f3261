//! Whole (non-streaming) replies and upstream errors.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use metaclaw_wire::{anthropic, openai, translate};
use serde_json::Value;
use tokio::time::Instant;

use super::headers;
use super::record::Draft;
use crate::error::{ApiError, ErrorKind};
use crate::seams::{Protocol, ReplyCapture, TokenUsage};
use crate::state::AppState;
use crate::upstream::send::Answered;

pub async fn respond(state: &AppState, answered: Answered, mut draft: Draft) -> Response {
    let status = answered.response.status();
    let up_headers = answered.response.headers().clone();
    let remaining = state
        .config
        .request_timeout
        .saturating_sub(draft.arrived.elapsed());
    let read = read_body(
        answered.response,
        state.config.first_byte_timeout,
        remaining,
    );
    let body = match read.await {
        Ok(b) => b,
        Err(BodyError::Broke(e)) => {
            let err = ApiError::new(
                draft.client_protocol,
                StatusCode::BAD_GATEWAY,
                ErrorKind::Upstream,
                format!("upstream `{}` broke off its reply: {e}", draft.upstream),
            );
            return fail(state, draft, err);
        }
        Err(BodyError::Stalled(idle)) => {
            let err = ApiError::new(
                draft.client_protocol,
                StatusCode::GATEWAY_TIMEOUT,
                ErrorKind::Timeout,
                format!(
                    "upstream `{}` stopped sending its reply for {} s (llm.first_byte_timeout_secs)",
                    draft.upstream,
                    idle.as_secs()
                ),
            );
            return fail(state, draft, err);
        }
        Err(BodyError::TooSlow) => {
            let err = ApiError::new(
                draft.client_protocol,
                StatusCode::GATEWAY_TIMEOUT,
                ErrorKind::Timeout,
                format!(
                    "upstream `{}` did not finish within llm.request_timeout_secs ({} s)",
                    draft.upstream,
                    state.config.request_timeout.as_secs()
                ),
            );
            return fail(state, draft, err);
        }
    };
    let t_post = Instant::now();
    let (out_status, out_body, error) = if status.is_success() {
        match convert_success(&draft, body) {
            Ok((b, usage)) => {
                draft.figures.upstream_usage = usage;
                (status, b, None)
            }
            Err(e) => {
                return fail(state, draft, e);
            }
        }
    } else {
        let (b, message) = convert_error(&draft, status, state.redactor.bytes(body));
        state.stats.error(&message);
        (status, b, Some(message))
    };
    draft.overhead += t_post.elapsed();
    let mut resp = (out_status, out_body.clone()).into_response();
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    headers::passthrough(&up_headers, resp.headers_mut());
    headers::metaclaw(resp.headers_mut(), draft.overhead_ms(), &draft.session_id);
    state
        .metrics
        .overhead_seconds
        .observe(draft.overhead.as_secs_f64());
    let first = Some(Instant::now());
    draft.finish(
        ReplyCapture::Json(out_body),
        out_status.as_u16(),
        error,
        first,
    );
    resp
}

enum BodyError {
    Broke(reqwest::Error),
    /// Nothing arrived for this long.
    Stalled(std::time::Duration),
    /// The whole-request deadline passed.
    TooSlow,
}

/// Reads a whole reply; an upstream that sends its headers and then nothing more is given up
/// on after `idle`, as a stream is, instead of holding the agent for the whole deadline.
async fn read_body(
    mut response: reqwest::Response,
    idle: std::time::Duration,
    total: std::time::Duration,
) -> Result<Bytes, BodyError> {
    let deadline = Instant::now() + total;
    let mut body = Vec::new();
    loop {
        let wait = idle.min(deadline.saturating_duration_since(Instant::now()));
        match tokio::time::timeout(wait, response.chunk()).await {
            Ok(Ok(Some(chunk))) => body.extend_from_slice(&chunk),
            Ok(Ok(None)) => return Ok(Bytes::from(body)),
            Ok(Err(e)) => return Err(BodyError::Broke(e)),
            Err(_) if Instant::now() >= deadline => return Err(BodyError::TooSlow),
            Err(_) => return Err(BodyError::Stalled(idle)),
        }
    }
}

/// Records a failed turn and answers the client with MetaClaw's error.
pub fn fail(state: &AppState, draft: Draft, mut err: ApiError) -> Response {
    err.message = state.redactor.text(&err.message).into_owned();
    state.stats.error(&err.message);
    let status = err.status.as_u16();
    let message = err.message.clone();
    let mut resp = err.into_response();
    headers::metaclaw(resp.headers_mut(), draft.overhead_ms(), &draft.session_id);
    draft.finish(ReplyCapture::None, status, Some(message), None);
    resp
}

/// The reply in the client's protocol, and the upstream's usage when the reply was
/// translated (the client's usage then may lack a figure, such as cache writes).
fn convert_success(draft: &Draft, body: Bytes) -> Result<(Bytes, Option<TokenUsage>), ApiError> {
    let client = draft.client_protocol;
    let bad = |what: &str, e: &dyn std::fmt::Display| {
        ApiError::new(
            client,
            StatusCode::BAD_GATEWAY,
            ErrorKind::Upstream,
            format!("upstream `{}` sent an invalid {what}: {e}", draft.upstream),
        )
    };
    match (client, draft.upstream_protocol) {
        (Protocol::Openai, Protocol::Openai) => {
            // The reference added `session_id` to chat completions; agents may read it.
            let mut v: Value = serde_json::from_slice(&body).map_err(|e| bad("response", &e))?;
            if let Some(obj) = v.as_object_mut() {
                obj.insert("session_id".into(), Value::String(draft.session_id.clone()));
            }
            serde_json::to_vec(&v)
                .map(|b| (Bytes::from(b), None))
                .map_err(|e| bad("response", &e))
        }
        (Protocol::Anthropic, Protocol::Anthropic) => Ok((body, None)),
        (Protocol::Anthropic, Protocol::Openai) => {
            let r: openai::ChatResponse =
                serde_json::from_slice(&body).map_err(|e| bad("chat completion", &e))?;
            let usage = r.usage.as_ref().map(TokenUsage::from);
            let out = translate::openai_response_to_anthropic(r);
            serde_json::to_vec(&out)
                .map(|b| (Bytes::from(b), usage))
                .map_err(|e| bad("response", &e))
        }
        (Protocol::Openai, Protocol::Anthropic) => {
            let r: anthropic::MessagesResponse =
                serde_json::from_slice(&body).map_err(|e| bad("message", &e))?;
            let usage = Some(TokenUsage::from(&r.usage));
            let mut out = serde_json::to_value(translate::anthropic_response_to_openai(r))
                .map_err(|e| bad("response", &e))?;
            if let Some(obj) = out.as_object_mut() {
                obj.insert("session_id".into(), Value::String(draft.session_id.clone()));
            }
            serde_json::to_vec(&out)
                .map(|b| (Bytes::from(b), usage))
                .map_err(|e| bad("response", &e))
        }
    }
}

/// Upstream 4xx/5xx: passed through as is when the protocols match; otherwise the message is
/// carried over into the client's error shape with the same status.
fn convert_error(draft: &Draft, status: StatusCode, body: Bytes) -> (Bytes, String) {
    let message = upstream_message(&body);
    let summary = format!(
        "upstream `{}` answered {}: {}",
        draft.upstream,
        status.as_u16(),
        message
    );
    if draft.client_protocol == draft.upstream_protocol
        && serde_json::from_slice::<Value>(&body).is_ok()
    {
        return (body, summary);
    }
    let kind = match status.as_u16() {
        401 => ErrorKind::Authentication,
        403 => ErrorKind::Permission,
        404 => ErrorKind::NotFound,
        413 => ErrorKind::TooLarge,
        429 => ErrorKind::RateLimited,
        529 | 503 => ErrorKind::Overloaded,
        400..=499 => ErrorKind::InvalidRequest,
        _ => ErrorKind::Upstream,
    };
    let err = ApiError::new(draft.client_protocol, status, kind, summary.clone());
    (Bytes::from(err.body().to_string()), summary)
}

/// The human message inside either protocol's error shape, or the raw text (shortened).
pub fn upstream_message(body: &[u8]) -> String {
    if let Ok(v) = serde_json::from_slice::<Value>(body) {
        let msg = v
            .pointer("/error/message")
            .or_else(|| v.pointer("/message"))
            .or_else(|| v.pointer("/detail"))
            .and_then(Value::as_str);
        if let Some(m) = msg {
            return m.to_string();
        }
    }
    let text = String::from_utf8_lossy(body);
    let text = text.trim();
    if text.is_empty() {
        return "(empty body)".to_string();
    }
    text.chars().take(500).collect()
}
