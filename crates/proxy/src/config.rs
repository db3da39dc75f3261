//! What the proxy needs to know, already resolved by the engine (secrets included).

use std::net::SocketAddr;
use std::time::Duration;

use crate::seams::Protocol;

/// One LLM provider the proxy can forward to.
#[derive(Clone)]
pub struct UpstreamConfig {
    /// Shown in logs, metrics and recorded turns (`primary`, or the fallback's name).
    pub name: String,
    pub protocol: Protocol,
    /// OpenAI: the base including `/v1` (`/chat/completions` is appended).
    /// Anthropic: the host root, with or without `/v1` (`/v1/messages` is appended).
    pub base_url: String,
    /// Replaces the client's `model` when set.
    pub model: Option<String>,
    pub api_key: Option<String>,
    /// Extra headers sent on every request (OpenRouter's `HTTP-Referer`, `X-Title`, …).
    pub extra_headers: Vec<(String, String)>,
}

impl std::fmt::Debug for UpstreamConfig {
    // Hand-written so the key can never reach a log line.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UpstreamConfig")
            .field("name", &self.name)
            .field("protocol", &self.protocol)
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "****"))
            .finish()
    }
}

/// Where injected context goes (docs/skills.md, Injection).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    User,
    System,
}

#[derive(Clone)]
pub struct ProxyConfig {
    pub bind: SocketAddr,
    /// Key agents must present; `None` only on loopback.
    pub api_key: Option<String>,
    /// Host header values accepted besides the loopback names and the bind host.
    pub allowed_hosts: Vec<String>,
    pub max_body_bytes: usize,
    /// The primary upstream first, then the fallbacks in order. Empty: not configured yet.
    pub upstreams: Vec<UpstreamConfig>,
    /// Model name reported by `/v1/models` when no upstream rewrites it.
    pub served_model: String,
    pub connect_timeout: Duration,
    /// Time allowed until the upstream's response headers, and between stream chunks.
    pub first_byte_timeout: Duration,
    /// Whole-request limit for non-streaming replies.
    pub request_timeout: Duration,
    /// How long a client may take to send a request's headers, and how long a kept-alive
    /// connection may sit idle waiting for its next request.
    pub connection_timeout: Duration,
    pub session_idle_timeout: Duration,
    pub placement: Placement,
    /// Prompt budget in tokens (context window); 0 disables fitting.
    pub context_window: u32,
    /// Share of sessions (0..=0.5) served without MetaClaw's block, to compare against.
    pub holdout: f64,
}

impl std::fmt::Debug for ProxyConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProxyConfig")
            .field("bind", &self.bind)
            .field("api_key", &self.api_key.as_ref().map(|_| "****"))
            .field("allowed_hosts", &self.allowed_hosts)
            .field("max_body_bytes", &self.max_body_bytes)
            .field("upstreams", &self.upstreams)
            .field("served_model", &self.served_model)
            .finish_non_exhaustive()
    }
}

impl ProxyConfig {
    /// A loopback config with sensible timeouts, for tests and as a base for the engine.
    pub fn local(port: u16) -> Self {
        ProxyConfig {
            bind: SocketAddr::from(([127, 0, 0, 1], port)),
            api_key: None,
            allowed_hosts: Vec::new(),
            max_body_bytes: 32 * 1024 * 1024,
            upstreams: Vec::new(),
            served_model: "metaclaw-model".to_string(),
            connect_timeout: Duration::from_secs(10),
            first_byte_timeout: Duration::from_secs(120),
            request_timeout: Duration::from_secs(600),
            connection_timeout: Duration::from_secs(30),
            session_idle_timeout: Duration::from_secs(30 * 60),
            placement: Placement::User,
            context_window: 0,
            holdout: 0.0,
        }
    }
}
