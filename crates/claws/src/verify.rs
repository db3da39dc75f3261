//! Sends the request the agent's own config would make — same base, key, model, protocol
//! — so "connected" means the agent can really talk to MetaClaw, and a failure says which
//! side is wrong in plain words.

use std::error::Error as _;
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::{Value, json};

use crate::target::{Endpoint, Protocol};

/// A request that went through.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Verified {
    pub protocol: Protocol,
    pub url: String,
    pub status: u16,
    /// The model the reply says answered, when it says.
    pub model: Option<String>,
    pub elapsed_ms: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VerifyError {
    #[error(
        "MetaClaw is not running on {address} (connection refused): start it, then verify again"
    )]
    NotRunning { address: String },
    #[error("cannot reach {url}: {detail}")]
    Unreachable { url: String, detail: String },
    #[error(
        "the key in {agent}'s config is not MetaClaw's proxy key ({url} answered {status}): connect {agent} again"
    )]
    WrongKey {
        agent: String,
        url: String,
        status: u16,
    },
    #[error("{url} answered 404: the base in the config is not MetaClaw's ({hint})")]
    NotFound { url: String, hint: String },
    #[error("MetaClaw answered {status} at {url}: {message}")]
    Server {
        url: String,
        status: u16,
        message: String,
    },
    #[error("{url} answered {status}: {message}")]
    Rejected {
        url: String,
        status: u16,
        message: String,
    },
    #[error("{url} did not answer within {}: is MetaClaw busy or its upstream slow?", human(*after_ms))]
    Timeout { url: String, after_ms: u64 },
    #[error("the config's base `{base}` is not a usable URL")]
    BadBase { base: String },
}

/// Sends one tiny request exactly as the agent would.
pub async fn verify(endpoint: &Endpoint, timeout: Duration) -> Result<Verified, VerifyError> {
    verify_agent("the agent", endpoint, timeout).await
}

/// [`verify`], naming `agent` in the errors.
pub async fn verify_agent(
    agent: &str,
    endpoint: &Endpoint,
    timeout: Duration,
) -> Result<Verified, VerifyError> {
    let base = endpoint.base.trim_end_matches('/');
    if !(base.starts_with("http://") || base.starts_with("https://")) {
        return Err(VerifyError::BadBase {
            base: endpoint.base.clone(),
        });
    }
    let (url, body) = match endpoint.protocol {
        Protocol::OpenAi => (
            format!("{base}/chat/completions"),
            json!({
                "model": endpoint.model,
                "messages": [{"role": "user", "content": "ping"}],
                "max_tokens": 1,
            }),
        ),
        Protocol::Anthropic => (
            format!("{base}/v1/messages"),
            json!({
                "model": endpoint.model,
                "messages": [{"role": "user", "content": "ping"}],
                "max_tokens": 1,
            }),
        ),
    };

    let mut builder = reqwest::Client::builder().timeout(timeout);
    // MetaClaw is local: a system HTTP proxy must not intercept (or see) this request.
    if is_loopback(base) {
        builder = builder.no_proxy();
    }
    let client = builder.build().map_err(|e| VerifyError::Unreachable {
        url: url.clone(),
        detail: e.to_string(),
    })?;
    // A connection test is not a conversation: MetaClaw records it as a side turn and never
    // learns from it (providers ignore the headers).
    let mut req = client
        .post(&url)
        .header("content-type", "application/json")
        .header("x-turn-type", "side")
        .header("x-session-id", "metaclaw-connection-test")
        .body(body.to_string());
    req = match endpoint.protocol {
        Protocol::OpenAi => req.header("authorization", format!("Bearer {}", endpoint.api_key)),
        Protocol::Anthropic => req
            .header("x-api-key", &endpoint.api_key)
            .header("anthropic-version", "2023-06-01"),
    };

    let started = Instant::now();
    let resp = req
        .send()
        .await
        .map_err(|e| send_error(&url, base, &e, timeout))?;
    let status = resp.status().as_u16();
    let text = match resp.text().await {
        Ok(t) => t,
        Err(e) if e.is_timeout() => {
            return Err(VerifyError::Timeout {
                url,
                after_ms: millis(timeout),
            });
        }
        Err(_) => String::new(),
    };
    let elapsed_ms = millis(started.elapsed());
    match status {
        200..=299 => Ok(Verified {
            protocol: endpoint.protocol,
            url,
            status,
            model: serde_json::from_str::<Value>(&text)
                .ok()
                .and_then(|v| v.get("model").and_then(Value::as_str).map(str::to_owned)),
            elapsed_ms,
        }),
        401 | 403 => Err(VerifyError::WrongKey {
            agent: agent.to_owned(),
            url,
            status,
        }),
        404 => Err(VerifyError::NotFound {
            url,
            hint: match endpoint.protocol {
                Protocol::OpenAi => "an OpenAI base ends in /v1".into(),
                Protocol::Anthropic => "an Anthropic base has no /v1".into(),
            },
        }),
        500..=599 => Err(VerifyError::Server {
            url,
            status,
            message: error_message(&text),
        }),
        _ => Err(VerifyError::Rejected {
            url,
            status,
            message: error_message(&text),
        }),
    }
}

fn send_error(url: &str, base: &str, e: &reqwest::Error, timeout: Duration) -> VerifyError {
    if e.is_timeout() {
        return VerifyError::Timeout {
            url: url.to_owned(),
            after_ms: millis(timeout),
        };
    }
    let mut source = e.source();
    while let Some(s) = source {
        if let Some(io) = s.downcast_ref::<std::io::Error>()
            && io.kind() == std::io::ErrorKind::ConnectionRefused
        {
            return VerifyError::NotRunning {
                address: address_of(base),
            };
        }
        source = s.source();
    }
    let mut detail = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        detail = format!("{detail}: {s}");
        source = s.source();
    }
    VerifyError::Unreachable {
        url: url.to_owned(),
        detail,
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

fn human(ms: u64) -> String {
    if ms < 1000 {
        format!("{ms} ms")
    } else {
        format!("{} s", ms / 1000)
    }
}

/// `host:port` of a base URL, for messages.
fn address_of(base: &str) -> String {
    let rest = base.split_once("://").map_or(base, |(_, r)| r);
    rest.split('/').next().unwrap_or(rest).to_owned()
}

fn is_loopback(base: &str) -> bool {
    let addr = address_of(base);
    let host = addr
        .rsplit_once(':')
        .filter(|(_, port)| port.chars().all(|c| c.is_ascii_digit()))
        .map_or(addr.as_str(), |(h, _)| h);
    matches!(host, "localhost" | "[::1]") || host.starts_with("127.")
}

/// The error message out of an OpenAI or Anthropic error body, else the body itself
/// (shortened).
fn error_message(body: &str) -> String {
    let from_json = serde_json::from_str::<Value>(body).ok().and_then(|v| {
        let err = v.get("error").unwrap_or(&v);
        err.get("message")
            .and_then(Value::as_str)
            .or_else(|| err.as_str())
            .map(str::to_owned)
    });
    let msg = from_json.unwrap_or_else(|| body.trim().to_owned());
    if msg.is_empty() {
        return "no error message".into();
    }
    let mut chars = msg.chars();
    let short: String = chars.by_ref().take(300).collect();
    if chars.next().is_some() {
        format!("{short}…")
    } else {
        short
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]
    use super::*;

    #[test]
    fn error_messages_come_out_of_either_protocol() {
        assert_eq!(
            error_message(r#"{"error":{"message":"upstream down","type":"x"}}"#),
            "upstream down"
        );
        assert_eq!(
            error_message(
                r#"{"type":"error","error":{"type":"api_error","message":"overloaded"}}"#
            ),
            "overloaded"
        );
        assert_eq!(error_message(r#"{"error":"plain"}"#), "plain");
        assert_eq!(error_message("Bad Gateway"), "Bad Gateway");
        assert_eq!(error_message(""), "no error message");
    }

    #[test]
    fn loopback_and_address() {
        assert_eq!(address_of("http://127.0.0.1:30000/v1"), "127.0.0.1:30000");
        assert!(is_loopback("http://127.0.0.1:30000/v1"));
        assert!(is_loopback("http://localhost:1"));
        assert!(!is_loopback("https://api.openai.com/v1"));
    }
}
