//! Turns the user's config and secrets into what the proxy needs.

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use metaclaw_proxy::seams::Protocol;
use metaclaw_proxy::{Placement as ProxyPlacement, ProxyConfig, UpstreamConfig};

use crate::config::{Config, LlmApi, Placement};
use crate::secrets::{Secret, SecretError, SecretStore};

/// Secret account of the primary upstream's key.
pub const LLM_KEY: &str = "llm.api_key";

#[derive(Debug, thiserror::Error)]
pub enum WiringError {
    #[error("proxy.host `{0}` is not an IP address (use 127.0.0.1, ::1 or 0.0.0.0)")]
    BadHost(String),
    #[error(transparent)]
    Secret(#[from] SecretError),
}

/// Builds the proxy's config. Blocking: reads the keychain.
pub fn proxy_config(
    config: &Config,
    secrets: &SecretStore,
    proxy_key: Option<Secret>,
) -> Result<ProxyConfig, WiringError> {
    let ip: IpAddr = config
        .proxy
        .host
        .parse()
        .map_err(|_| WiringError::BadHost(config.proxy.host.clone()))?;
    let llm = &config.llm;
    let mut upstreams = Vec::new();
    if !llm.api_base.is_empty() {
        upstreams.push(UpstreamConfig {
            name: "primary".into(),
            protocol: protocol(llm.api),
            base_url: llm.api_base.clone(),
            model: non_empty(&llm.model_id),
            api_key: secrets.get(LLM_KEY)?.map(|s| s.expose().to_string()),
            extra_headers: extra_headers(config),
        });
    }
    for fb in &llm.fallbacks {
        upstreams.push(UpstreamConfig {
            name: fb.name.clone(),
            protocol: protocol(fb.api),
            base_url: fb.api_base.clone(),
            model: non_empty(&fb.model_id),
            api_key: secrets
                .get(&fb.key_account())?
                .map(|s| s.expose().to_string()),
            extra_headers: extra_headers(config),
        });
    }
    let window = if config.max_context_tokens > 0 {
        config.max_context_tokens
    } else {
        config.context_window
    };
    Ok(ProxyConfig {
        bind: SocketAddr::new(ip, config.proxy.port),
        api_key: proxy_key.map(|k| k.expose().to_string()),
        allowed_hosts: config.proxy.allowed_hosts.clone(),
        max_body_bytes: config.proxy.max_body_mb as usize * 1024 * 1024,
        upstreams,
        served_model: non_empty(&llm.model_id).unwrap_or_else(|| "metaclaw-model".into()),
        connect_timeout: Duration::from_secs(llm.connect_timeout_secs),
        first_byte_timeout: Duration::from_secs(llm.first_byte_timeout_secs),
        request_timeout: Duration::from_secs(llm.request_timeout_secs),
        connection_timeout: ProxyConfig::local(0).connection_timeout,
        session_idle_timeout: Duration::from_secs_f64(config.session.idle_timeout_minutes * 60.0),
        placement: match config.injection.placement {
            Placement::User => ProxyPlacement::User,
            Placement::System => ProxyPlacement::System,
        },
        context_window: u32::try_from(window).unwrap_or(u32::MAX),
        holdout: config.learning.holdout,
    })
}

fn protocol(api: LlmApi) -> Protocol {
    match api {
        LlmApi::Openai => Protocol::Openai,
        LlmApi::Anthropic => Protocol::Anthropic,
    }
}

fn non_empty(s: &str) -> Option<String> {
    (!s.trim().is_empty()).then(|| s.trim().to_string())
}

/// `llm.extra_headers`, plus OpenRouter's attribution headers when the base URL is OpenRouter.
fn extra_headers(config: &Config) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = config
        .llm
        .extra_headers
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    // The user's own X-Title wins over the attribution default.
    if !out.iter().any(|(k, _)| k.eq_ignore_ascii_case("x-title")) {
        out.extend(crate::providers::attribution_headers(
            &config.llm.api_base,
            &config.openrouter,
        ));
    }
    out
}
