//! `claw_type`, `openrouter:` and `wechat:` — agent wiring and provider extras.

use serde::{Deserialize, Serialize};

use super::de;

/// Which agent MetaClaw wires to the proxy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClawType {
    #[default]
    Openclaw,
    Copaw,
    Ironclaw,
    Picoclaw,
    Zeroclaw,
    Nanoclaw,
    Nemoclaw,
    Hermes,
    None,
}

impl ClawType {
    /// The adapter's name, as `metaclaw agent connect NAME` takes it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Openclaw => "openclaw",
            Self::Copaw => "copaw",
            Self::Ironclaw => "ironclaw",
            Self::Picoclaw => "picoclaw",
            Self::Zeroclaw => "zeroclaw",
            Self::Nanoclaw => "nanoclaw",
            Self::Nemoclaw => "nemoclaw",
            Self::Hermes => "hermes",
            Self::None => "none",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OpenRouterRoute {
    #[default]
    Fallback,
    Price,
    Throughput,
    Latency,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DataPolicy {
    /// The provider's default.
    #[default]
    #[serde(rename = "")]
    Default,
    Deny,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct OpenRouterConfig {
    pub app_name: String,
    #[serde(deserialize_with = "de::url")]
    pub app_url: String,
    pub route: OpenRouterRoute,
    pub fallback_models: Vec<String>,
    pub data_policy: DataPolicy,
}

impl Default for OpenRouterConfig {
    fn default() -> Self {
        Self {
            app_name: "MetaClaw".into(),
            app_url: String::new(),
            route: OpenRouterRoute::Fallback,
            fallback_models: Vec::new(),
            data_policy: DataPolicy::Default,
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct WechatConfig {
    #[serde(deserialize_with = "de::flexible_bool")]
    pub enabled: bool,
}
