//! Plays a conversation against a server (the fake directly, or MetaClaw) and reads the
//! prompt-cache figures of every reply as the client sees them.

use std::net::SocketAddr;

use anyhow::{Context, Result, bail};
use bytes::Bytes;
use http::{Method, Request, header};
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use serde_json::Value;
use tokio::net::TcpStream;

/// Which wire protocol the client speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    OpenAi,
    Anthropic,
}

impl Api {
    pub fn label(self) -> &'static str {
        match self {
            Api::OpenAi => "openai",
            Api::Anthropic => "anthropic",
        }
    }
}

/// One model call as the client saw it.
#[derive(Debug, Clone, Default)]
pub struct Call {
    /// The whole prompt, cache reads and writes included (`None`: no usage reached the client).
    pub prompt: Option<u64>,
    pub read: u64,
    pub write: u64,
    /// The SSE body exactly as received.
    pub body: Bytes,
}

/// Where to send, and as whom.
pub struct Target {
    pub addr: SocketAddr,
    pub key: String,
    /// Sent as `X-Claude-Code-Session-Id` by Anthropic clients (Claude Code's own header).
    pub session: String,
}

/// Sends every request in order; each must succeed.
pub async fn play(target: &Target, api: Api, requests: &[Value]) -> Result<Vec<Call>> {
    let mut calls = Vec::with_capacity(requests.len());
    for body in requests {
        let raw = send(target, api, body).await?;
        calls.push(read_usage(api, raw));
    }
    Ok(calls)
}

async fn send(target: &Target, api: Api, body: &Value) -> Result<Bytes> {
    let tcp = TcpStream::connect(target.addr)
        .await
        .with_context(|| format!("connecting to {}", target.addr))?;
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tcp)).await?;
    tokio::spawn(async move {
        // Ends when the connection closes; errors surface on the request.
        let _ = conn.await;
    });
    let req = Request::builder()
        .method(Method::POST)
        .header(header::HOST, target.addr.to_string())
        .header(header::CONTENT_TYPE, "application/json");
    let req = match api {
        Api::OpenAi => req
            .uri("/v1/chat/completions")
            .header(header::AUTHORIZATION, format!("Bearer {}", target.key)),
        Api::Anthropic => req
            .uri("/v1/messages?beta=true")
            .header("x-api-key", &target.key)
            .header("anthropic-version", "2023-06-01")
            .header("x-claude-code-session-id", &target.session),
    };
    let resp = sender
        .send_request(req.body(Full::new(Bytes::from(body.to_string())))?)
        .await?;
    let status = resp.status();
    let bytes = resp.into_body().collect().await?.to_bytes();
    if !status.is_success() {
        bail!("HTTP {status}: {}", String::from_utf8_lossy(&bytes));
    }
    Ok(bytes)
}

/// The usage in an SSE body: OpenAI's final usage chunk, or Anthropic's `message_start`
/// usage updated by `message_delta`.
pub fn read_usage(api: Api, body: Bytes) -> Call {
    let mut call = Call::default();
    let text = String::from_utf8_lossy(&body).into_owned();
    for data in text.lines().filter_map(|l| l.strip_prefix("data:")) {
        let Ok(v) = serde_json::from_str::<Value>(data.trim()) else {
            continue;
        };
        let num = |u: &Value, k: &str| u.get(k).and_then(Value::as_u64);
        match api {
            Api::OpenAi => {
                if let Some(u) = v.get("usage").filter(|u| u.is_object()) {
                    call.prompt = num(u, "prompt_tokens");
                    call.read = u
                        .pointer("/prompt_tokens_details/cached_tokens")
                        .and_then(Value::as_u64)
                        .unwrap_or(0);
                }
            }
            Api::Anthropic => {
                let u = v.pointer("/message/usage").or_else(|| v.get("usage"));
                if let Some(u) = u.filter(|u| u.is_object()) {
                    call.read = num(u, "cache_read_input_tokens").unwrap_or(call.read);
                    call.write = num(u, "cache_creation_input_tokens").unwrap_or(call.write);
                    if let Some(input) = num(u, "input_tokens") {
                        call.prompt = Some(input + call.read + call.write);
                    }
                }
            }
        }
    }
    call.body = body;
    call
}

/// Cache reads over all prompt tokens of the calls (0 when none reported usage).
pub fn read_share(calls: &[Call]) -> f64 {
    let prompt: u64 = calls.iter().filter_map(|c| c.prompt).sum();
    let read: u64 = calls.iter().map(|c| c.read).sum();
    if prompt == 0 {
        0.0
    } else {
        read as f64 / prompt as f64
    }
}
