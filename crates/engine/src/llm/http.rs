//! One JSON POST to a model API: URLs, auth headers, timeout, and turning failures into
//! [`LlmError`]s.

use metaclaw_proxy::seams::Protocol;
use serde_json::Value;

use super::calls::{self, Purpose, Usage};
use super::endpoint::Endpoint;
use super::error::{LlmError, origin, transport_reason, upstream_message};

const ANTHROPIC_VERSION: &str = "2023-06-01";

/// `{base}/{path}`. Anthropic bases are usually given without `/v1` (the proxy accepts both),
/// OpenAI-compatible bases with it, as in `crates/proxy/src/upstream/outbound.rs`.
pub(super) fn url(ep: &Endpoint, path: &str) -> String {
    let base = ep.base_url.trim_end_matches('/');
    match ep.protocol {
        Protocol::Anthropic if !base.ends_with("/v1") => format!("{base}/v1/{path}"),
        _ => format!("{base}/{path}"),
    }
}

/// A non-2xx answer: status and the upstream's message.
pub(super) struct Rejected {
    pub status: u16,
    pub message: String,
}

impl Rejected {
    pub fn into_error(self, ep: &Endpoint) -> LlmError {
        LlmError::Status {
            model: ep.model.clone(),
            host: origin(&ep.base_url),
            status: self.status,
            message: self.message,
        }
    }
}

/// Posts `body` and parses the JSON reply. `Ok(Err(_))` is an HTTP error answer, which some
/// callers retry differently; `Err(_)` is everything else. Every call is counted in the
/// learning ledger under `purpose`, with the tokens its answer reports.
pub(super) async fn post_json(
    http: &reqwest::Client,
    ep: &Endpoint,
    path: &str,
    body: &Value,
    purpose: Purpose,
) -> Result<Result<Value, Rejected>, LlmError> {
    let answer = send(http, ep, path, body).await;
    match &answer {
        Ok(Ok(reply)) => calls::record(purpose, true, Usage::of(reply)),
        _ => calls::record(purpose, false, Usage::default()),
    }
    answer
}

async fn send(
    http: &reqwest::Client,
    ep: &Endpoint,
    path: &str,
    body: &Value,
) -> Result<Result<Value, Rejected>, LlmError> {
    let mut req = http
        .post(url(ep, path))
        .timeout(ep.timeout)
        .header("content-type", "application/json")
        .body(body.to_string());
    let key = ep.api_key.as_ref().map(|k| k.expose());
    req = match (ep.protocol, key) {
        (Protocol::Openai, Some(k)) => req.bearer_auth(k),
        (Protocol::Anthropic, k) => {
            let req = req.header("anthropic-version", ANTHROPIC_VERSION);
            match k {
                Some(k) => req.header("x-api-key", k),
                None => req,
            }
        }
        (Protocol::Openai, None) => req,
    };
    for (name, value) in &ep.extra_headers {
        req = req.header(name, value);
    }
    let resp = req.send().await.map_err(|e| transport(ep, e))?;
    let status = resp.status();
    let bytes = resp.bytes().await.map_err(|e| transport(ep, e))?;
    if !status.is_success() {
        return Ok(Err(Rejected {
            status: status.as_u16(),
            message: upstream_message(&bytes, key),
        }));
    }
    serde_json::from_slice(&bytes)
        .map(Ok)
        .map_err(|e| malformed(ep, format!("not JSON: {e}")))
}

pub(super) fn malformed(ep: &Endpoint, reason: impl Into<String>) -> LlmError {
    LlmError::Malformed {
        model: ep.model.clone(),
        host: origin(&ep.base_url),
        reason: reason.into(),
    }
}

fn transport(ep: &Endpoint, err: reqwest::Error) -> LlmError {
    let (model, host) = (ep.model.clone(), origin(&ep.base_url));
    if err.is_timeout() {
        LlmError::Timeout {
            model,
            host,
            secs: ep.timeout.as_secs(),
        }
    } else {
        LlmError::Network {
            model,
            host,
            reason: transport_reason(err),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn ep(protocol: Protocol, base: &str) -> Endpoint {
        Endpoint {
            protocol,
            base_url: base.into(),
            model: "m".into(),
            api_key: None,
            extra_headers: Vec::new(),
            timeout: Duration::from_secs(1),
        }
    }

    #[test]
    fn urls_follow_the_proxy() {
        let u = |p, b| url(&ep(p, b), "x");
        assert_eq!(u(Protocol::Openai, "http://h/v1/"), "http://h/v1/x");
        assert_eq!(
            u(Protocol::Anthropic, "https://a.com"),
            "https://a.com/v1/x"
        );
        assert_eq!(u(Protocol::Anthropic, "http://h/v1"), "http://h/v1/x");
    }
}
