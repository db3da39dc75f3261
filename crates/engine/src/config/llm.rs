//! `llm:` — the user's upstream provider and its fallbacks.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::de;

/// Wire protocol spoken to an upstream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LlmApi {
    #[default]
    Openai,
    Anthropic,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AuthMethod {
    #[default]
    ApiKey,
    OauthToken,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LlmConfig {
    /// Wizard preset name (`custom`, `openrouter`, `kimi`, …); informational.
    pub provider: String,
    pub api: LlmApi,
    pub auth_method: AuthMethod,
    /// Empty: not configured yet.
    #[serde(deserialize_with = "de::url")]
    pub api_base: String,
    pub model_id: String,
    #[serde(deserialize_with = "de::positive")]
    pub connect_timeout_secs: u64,
    #[serde(deserialize_with = "de::positive")]
    pub first_byte_timeout_secs: u64,
    #[serde(deserialize_with = "de::positive")]
    pub request_timeout_secs: u64,
    /// Tried in order when the primary fails before any byte reached the client.
    pub fallbacks: Vec<Fallback>,
    pub extra_headers: BTreeMap<String, String>,
    pub bedrock_region: String,
}

impl Default for LlmConfig {
    fn default() -> Self {
        Self {
            provider: "custom".into(),
            api: LlmApi::Openai,
            auth_method: AuthMethod::ApiKey,
            api_base: String::new(),
            model_id: String::new(),
            connect_timeout_secs: 10,
            first_byte_timeout_secs: 120,
            request_timeout_secs: 600,
            fallbacks: Vec::new(),
            extra_headers: BTreeMap::new(),
            bedrock_region: "us-east-1".into(),
        }
    }
}

/// One further upstream; its key is the secret `llm.fallbacks.<name>.api_key`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fallback {
    #[serde(deserialize_with = "fallback_name")]
    pub name: String,
    #[serde(default)]
    pub api: LlmApi,
    #[serde(deserialize_with = "de::url")]
    pub api_base: String,
    #[serde(default)]
    pub model_id: String,
}

impl Fallback {
    /// The secret-store account holding this fallback's key.
    pub fn key_account(&self) -> String {
        format!("llm.fallbacks.{}.api_key", self.name)
    }
}

/// The name becomes part of a dotted key and an environment variable name.
fn fallback_name<'d, D: serde::Deserializer<'d>>(d: D) -> Result<String, D::Error> {
    d.deserialize_str(de::CheckedStr(|name| {
        let ok = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if ok {
            Ok(())
        } else {
            Err(format!(
                "a fallback name must be letters, digits, `_` or `-`, got `{name}`"
            ))
        }
    }))
}
