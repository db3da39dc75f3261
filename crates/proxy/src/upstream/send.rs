//! Sending a turn upstream, trying `llm.fallbacks` in order when an upstream fails before any
//! byte reached the client (connect error, timeout, 429, 5xx).

use std::time::Duration;

use axum::http::HeaderMap;
use bytes::Bytes;
use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, HeaderName, HeaderValue};
use serde_json::Value;
use tokio::time::Instant;

use super::outbound;
use crate::config::UpstreamConfig;
use crate::error::{ApiError, ErrorKind};
use crate::seams::Protocol;
use crate::state::AppState;

const DEFAULT_ANTHROPIC_VERSION: &str = "2023-06-01";

/// An upstream that answered (with any status).
pub struct Answered {
    pub response: reqwest::Response,
    pub upstream: usize,
    /// The body as forwarded, for the recorder.
    pub forwarded: Bytes,
    /// Time spent building upstream bodies (MetaClaw's overhead, not the network's).
    pub prep: Duration,
}

/// Every upstream failed without an HTTP answer.
pub struct Unreachable {
    pub error: ApiError,
    pub upstream: usize,
    pub forwarded: Bytes,
    pub prep: Duration,
}

pub async fn send(
    state: &AppState,
    client: Protocol,
    client_headers: &HeaderMap,
    request: &mut Value,
    count_tokens: bool,
) -> Result<Answered, Unreachable> {
    let upstreams = &state.config.upstreams;
    let mut last: Option<Unreachable> = None;
    let mut prep = Duration::ZERO;
    for (i, upstream) in upstreams.iter().enumerate() {
        let t = Instant::now();
        let built = outbound::body(client, upstream, request);
        prep += t.elapsed();
        let forwarded = match built {
            Ok(b) => b,
            Err(error) => {
                return Err(Unreachable {
                    error,
                    upstream: i,
                    forwarded: Bytes::new(),
                    prep,
                });
            }
        };
        let has_next = i + 1 < upstreams.len();
        let req = state
            .http
            .post(outbound::url(upstream, count_tokens))
            .headers(headers(client, upstream, client_headers))
            .body(forwarded.clone());
        match tokio::time::timeout(state.config.first_byte_timeout, req.send()).await {
            Ok(Ok(response)) => {
                let status = response.status();
                if has_next && (status.as_u16() == 429 || status.is_server_error()) {
                    tracing::warn!(upstream = %upstream.name, %status, "upstream failed; trying the next one");
                    state.metrics.upstream_failure(&upstream.name, "status");
                    state.metrics.fallbacks.inc();
                    continue;
                }
                if i > 0 {
                    tracing::info!(upstream = %upstream.name, "served by fallback upstream");
                }
                return Ok(Answered {
                    response,
                    upstream: i,
                    forwarded,
                    prep,
                });
            }
            Ok(Err(e)) => {
                let reason = if e.is_connect() { "connect" } else { "network" };
                state.metrics.upstream_failure(&upstream.name, reason);
                let message = format!(
                    "could not reach upstream `{}` ({}): {}",
                    upstream.name,
                    upstream.base_url,
                    error_chain(&e)
                );
                let message = state.redactor.text(&message).into_owned();
                tracing::warn!(upstream = %upstream.name, error = %message, "upstream unreachable");
                last = Some(Unreachable {
                    error: ApiError::new(
                        client,
                        axum::http::StatusCode::BAD_GATEWAY,
                        ErrorKind::Upstream,
                        message,
                    ),
                    upstream: i,
                    forwarded,
                    prep,
                });
            }
            Err(_) => {
                state.metrics.upstream_failure(&upstream.name, "timeout");
                let message = format!(
                    "upstream `{}` sent no response within {} s",
                    upstream.name,
                    state.config.first_byte_timeout.as_secs_f64()
                );
                tracing::warn!(upstream = %upstream.name, "upstream timed out before the first byte");
                last = Some(Unreachable {
                    error: ApiError::new(
                        client,
                        axum::http::StatusCode::GATEWAY_TIMEOUT,
                        ErrorKind::Timeout,
                        message,
                    ),
                    upstream: i,
                    forwarded,
                    prep,
                });
            }
        }
        if has_next {
            state.metrics.fallbacks.inc();
        }
    }
    Err(last.unwrap_or_else(|| Unreachable {
        error: ApiError::new(
            client,
            axum::http::StatusCode::SERVICE_UNAVAILABLE,
            ErrorKind::NotConfigured,
            "no LLM provider is configured: run `metaclaw setup`, or `metaclaw config set llm.api_base <url>` and `metaclaw config set llm.api_key <key>`",
        ),
        upstream: 0,
        forwarded: Bytes::new(),
        prep,
    }))
}

/// reqwest's top-level message is vague ("error sending request"); the cause says why.
fn error_chain(e: &reqwest::Error) -> String {
    let mut out = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        out.push_str(": ");
        out.push_str(&s.to_string());
        source = s.source();
    }
    out
}

/// Upstream headers: the upstream's own key (never the client's), protocol headers, extras.
fn headers(
    client: Protocol,
    upstream: &UpstreamConfig,
    client_headers: &HeaderMap,
) -> reqwest::header::HeaderMap {
    let mut h = reqwest::header::HeaderMap::new();
    h.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    match upstream.protocol {
        Protocol::Openai => {
            if let Some(key) = &upstream.api_key
                && let Ok(v) = HeaderValue::from_str(&format!("Bearer {key}"))
            {
                h.insert(AUTHORIZATION, v);
            }
        }
        Protocol::Anthropic => {
            if let Some(key) = &upstream.api_key
                && let Ok(v) = HeaderValue::from_str(key)
            {
                h.insert("x-api-key", v);
            }
            let from_client = |name: &str| {
                (client == Protocol::Anthropic)
                    .then(|| client_headers.get(name))
                    .flatten()
                    .and_then(|v| HeaderValue::from_bytes(v.as_bytes()).ok())
            };
            h.insert(
                "anthropic-version",
                from_client("anthropic-version")
                    .unwrap_or(HeaderValue::from_static(DEFAULT_ANTHROPIC_VERSION)),
            );
            if let Some(beta) = from_client("anthropic-beta") {
                h.insert("anthropic-beta", beta);
            }
        }
    }
    for (k, v) in &upstream.extra_headers {
        if let (Ok(k), Ok(v)) = (
            HeaderName::from_bytes(k.as_bytes()),
            HeaderValue::from_str(v),
        ) {
            h.insert(k, v);
        }
    }
    h
}
