//! `proxy:`, `session:` and `injection:` — how agents reach MetaClaw.

use serde::{Deserialize, Serialize};

use super::de;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ProxyConfig {
    pub host: String,
    #[serde(deserialize_with = "de::port")]
    pub port: u16,
    #[serde(deserialize_with = "de::max_body_mb")]
    pub max_body_mb: u32,
    /// Host header values accepted besides the loopback names.
    pub allowed_hosts: Vec<String>,
}

impl Default for ProxyConfig {
    fn default() -> Self {
        Self {
            host: "127.0.0.1".into(),
            port: 30000,
            max_body_mb: 32,
            allowed_hosts: Vec::new(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SessionConfig {
    /// Fractions allowed (`0.5` = thirty seconds), for short-lived agents and tests.
    #[serde(deserialize_with = "de::positive_minutes")]
    pub idle_timeout_minutes: f64,
}

impl Default for SessionConfig {
    fn default() -> Self {
        Self {
            idle_timeout_minutes: 30.0,
        }
    }
}

/// Where the injected context block goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Placement {
    #[default]
    User,
    System,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct InjectionConfig {
    /// Shared between skills and memories.
    pub token_budget: u32,
    pub placement: Placement,
}

impl Default for InjectionConfig {
    fn default() -> Self {
        Self {
            token_budget: 1200,
            placement: Placement::User,
        }
    }
}
