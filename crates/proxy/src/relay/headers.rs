//! Response headers: MetaClaw's own, and the upstream ones clients rely on (rate limits, retry).

use axum::http::{HeaderMap, HeaderName, HeaderValue};

/// Upstream headers worth passing through: retry hints, request ids, rate-limit state.
fn passes(name: &str) -> bool {
    name == "retry-after"
        || name == "retry-after-ms"
        || name == "x-should-retry"
        || name == "x-request-id"
        || name == "request-id"
        || name.starts_with("x-ratelimit-")
        || name.starts_with("anthropic-ratelimit-")
        || name == "openai-processing-ms"
}

pub fn passthrough(upstream: &reqwest::header::HeaderMap, out: &mut HeaderMap) {
    for (name, value) in upstream {
        if passes(name.as_str())
            && let (Ok(n), Ok(v)) = (
                HeaderName::from_bytes(name.as_str().as_bytes()),
                HeaderValue::from_bytes(value.as_bytes()),
            )
        {
            out.insert(n, v);
        }
    }
}

pub fn metaclaw(out: &mut HeaderMap, overhead_ms: f64, session_id: &str) {
    if let Ok(v) = HeaderValue::from_str(&format!("{overhead_ms:.3}")) {
        out.insert("x-metaclaw-overhead-ms", v);
    }
    if let Ok(v) = HeaderValue::from_str(session_id) {
        out.insert("x-metaclaw-session-id", v);
    }
}
