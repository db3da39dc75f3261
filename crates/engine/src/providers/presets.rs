//! The providers the setup window offers: base URL, wire protocol and a starting model, all
//! editable by the user afterwards.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::config::{Config, LlmApi, OpenRouterConfig};

/// One provider the user can pick. `api_base` is empty only for `custom`, where the user
/// supplies base, protocol and model.
#[derive(Debug, Clone, Serialize)]
pub struct Preset {
    /// The `llm.provider` value.
    pub name: &'static str,
    pub label: &'static str,
    pub api_base: &'static str,
    pub api: LlmApi,
    pub default_model: &'static str,
    pub key_required: bool,
}

/// Names and defaults follow the reference's presets (`control.md` §3.3, HEAD); where HEAD
/// had no default model the comment says where the one here comes from.
pub const PRESETS: &[Preset] = &[
    Preset {
        name: "kimi",
        label: "Kimi (Moonshot)",
        api_base: "https://api.moonshot.cn/v1",
        api: LlmApi::Openai,
        default_model: "moonshotai/Kimi-K2.5",
        key_required: true,
    },
    Preset {
        name: "qwen",
        label: "Qwen (DashScope)",
        api_base: "https://dashscope.aliyuncs.com/compatible-mode/v1",
        api: LlmApi::Openai,
        default_model: "qwen-plus",
        key_required: true,
    },
    Preset {
        name: "openai",
        label: "OpenAI",
        api_base: "https://api.openai.com/v1",
        api: LlmApi::Openai,
        default_model: "gpt-4o",
        key_required: true,
    },
    Preset {
        name: "minimax",
        label: "MiniMax",
        api_base: "https://api.minimax.chat/v1",
        api: LlmApi::Openai,
        // HEAD left it empty; the previous version's default, MiniMax's current flagship.
        default_model: "MiniMax-M2.7",
        key_required: true,
    },
    Preset {
        name: "novita",
        label: "Novita AI",
        api_base: "https://api.novita.ai/v3/openai",
        api: LlmApi::Openai,
        // HEAD left it empty; the previous version's default, a model Novita hosts.
        default_model: "moonshotai/kimi-k2.5",
        key_required: true,
    },
    Preset {
        name: "openrouter",
        label: "OpenRouter",
        api_base: "https://openrouter.ai/api/v1",
        api: LlmApi::Openai,
        // HEAD left it empty; the previous version's default, listed by OpenRouter.
        default_model: "google/gemini-2.5-pro",
        key_required: true,
    },
    Preset {
        name: "volcengine",
        label: "Volcengine Ark (Doubao)",
        api_base: "https://ark.cn-beijing.volces.com/api/v3",
        api: LlmApi::Openai,
        default_model: "doubao-seed-2-0-pro-260215",
        key_required: true,
    },
    Preset {
        name: "anthropic",
        label: "Anthropic",
        api_base: "https://api.anthropic.com",
        api: LlmApi::Anthropic,
        // The reference's Claude default (its OAuth flow); not in its API-key presets.
        default_model: "claude-sonnet-4-6",
        key_required: true,
    },
    // Local servers, for a machine's own model; with the agents running MetaClaw as their
    // plugin (they keep their own provider and login), this model serves learning alone.
    Preset {
        name: "ollama",
        label: "Ollama (local)",
        api_base: "http://127.0.0.1:11434/v1",
        api: LlmApi::Openai,
        // Ollama's library; any model pulled into it works.
        default_model: "qwen2.5:7b",
        key_required: false,
    },
    Preset {
        name: "lmstudio",
        label: "LM Studio (local)",
        api_base: "http://127.0.0.1:1234/v1",
        api: LlmApi::Openai,
        // LM Studio serves whichever model is loaded under the id it shows.
        default_model: "qwen2.5-7b-instruct",
        key_required: false,
    },
    Preset {
        name: "custom",
        label: "Custom (OpenAI- or Anthropic-compatible)",
        api_base: "",
        api: LlmApi::Openai,
        default_model: "",
        // Local servers (Ollama, vLLM, LM Studio) usually take no key.
        key_required: false,
    },
];

/// The preset called `name` (case-insensitive).
pub fn find(name: &str) -> Option<&'static Preset> {
    PRESETS
        .iter()
        .find(|p| p.name.eq_ignore_ascii_case(name.trim()))
}

/// The preset the current `llm.*` corresponds to: the one with `llm.api_base` as its base,
/// else `custom`. `llm.provider` is not consulted: it is informational and may be stale
/// after a hand edit, while the base is what the proxy uses. `None` before any setup.
pub fn configured(config: &Config) -> Option<&'static Preset> {
    let base = &config.llm.api_base;
    if base.trim().is_empty() {
        return None;
    }
    PRESETS
        .iter()
        .find(|p| !p.api_base.is_empty() && same_base(p.api_base, base))
        .or_else(|| find("custom"))
}

/// Base URLs compared without a trailing slash or case differences in scheme and host.
pub fn same_base(a: &str, b: &str) -> bool {
    a.trim()
        .trim_end_matches('/')
        .eq_ignore_ascii_case(b.trim().trim_end_matches('/'))
}

/// OpenRouter's attribution headers for `api_base` (none for other hosts). The rule of
/// `wiring::extra_headers`, which sends them to the proxy's upstream; a test keeps the two
/// in step.
pub fn attribution_headers(api_base: &str, openrouter: &OpenRouterConfig) -> Vec<(String, String)> {
    if !api_base.contains("openrouter.ai") {
        return Vec::new();
    }
    let title = if openrouter.app_name.is_empty() {
        "MetaClaw".to_string()
    } else {
        openrouter.app_name.clone()
    };
    let mut out = vec![("X-Title".to_string(), title)];
    if !openrouter.app_url.is_empty() {
        out.push(("HTTP-Referer".into(), openrouter.app_url.clone()));
    }
    out
}

/// A preset as the UI sees it: the static fields plus the headers it would send now.
#[derive(Debug, Clone, Serialize)]
pub struct PresetView {
    #[serde(flatten)]
    pub preset: &'static Preset,
    pub extra_headers: BTreeMap<String, String>,
}

impl Preset {
    pub fn view(&'static self, config: &Config) -> PresetView {
        PresetView {
            preset: self,
            extra_headers: attribution_headers(self.api_base, &config.openrouter)
                .into_iter()
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::paths::Paths;
    use crate::secrets::{BackendChoice, SecretStore};

    #[test]
    fn every_hosted_preset_has_an_https_base_and_a_key_and_local_ones_loopback() {
        let names: Vec<_> = PRESETS.iter().map(|p| p.name).collect();
        assert_eq!(
            names,
            [
                "kimi",
                "qwen",
                "openai",
                "minimax",
                "novita",
                "openrouter",
                "volcengine",
                "anthropic",
                "ollama",
                "lmstudio",
                "custom"
            ]
        );
        for p in PRESETS.iter().filter(|p| p.name != "custom") {
            let url = reqwest::Url::parse(p.api_base).unwrap();
            let local = ["ollama", "lmstudio"].contains(&p.name);
            if local {
                // A server on this machine: plain HTTP on loopback, no key.
                assert_eq!(url.scheme(), "http", "{}", p.name);
                assert_eq!(url.host_str(), Some("127.0.0.1"), "{}", p.name);
                assert!(!p.key_required, "{}", p.name);
            } else {
                assert_eq!(url.scheme(), "https", "{}", p.name);
                assert!(url.host_str().is_some(), "{}", p.name);
                assert!(p.key_required, "{}", p.name);
            }
            assert!(!p.api_base.ends_with('/'), "{}", p.name);
            assert!(!p.default_model.is_empty(), "{}", p.name);
            assert!(!p.label.is_empty());
        }
        let custom = find("custom").unwrap();
        assert!(custom.api_base.is_empty() && custom.default_model.is_empty());
        assert_eq!(find("anthropic").unwrap().api, LlmApi::Anthropic);
        assert_eq!(find(" OpenAI ").unwrap().name, "openai");
        assert!(find("bedrock").is_none());
    }

    #[test]
    fn only_openrouter_gets_attribution_headers() {
        let config = Config::default();
        for p in PRESETS {
            let headers = p.view(&config).extra_headers;
            if p.name == "openrouter" {
                assert_eq!(headers.get("X-Title").map(String::as_str), Some("MetaClaw"));
            } else {
                assert!(headers.is_empty(), "{}", p.name);
            }
        }
        let or = OpenRouterConfig {
            app_url: "https://example.org".into(),
            ..OpenRouterConfig::default()
        };
        let h = attribution_headers("https://openrouter.ai/api/v1", &or);
        assert!(h.contains(&("HTTP-Referer".into(), "https://example.org".into())));
    }

    /// The proxy's upstream (built by `wiring`) and the connection test send the same headers.
    #[test]
    fn attribution_headers_match_what_the_proxy_sends() {
        let home = tempfile::tempdir().unwrap();
        let secrets = SecretStore::new(&Paths::new(home.path()).unwrap(), BackendChoice::File);
        for app_url in ["", "https://example.org"] {
            let mut config = Config::default();
            config.llm.api_base = "https://openrouter.ai/api/v1".into();
            config.openrouter.app_url = app_url.into();
            let proxy = crate::wiring::proxy_config(&config, &secrets, None).unwrap();
            assert_eq!(
                proxy.upstreams[0].extra_headers,
                attribution_headers(&config.llm.api_base, &config.openrouter)
            );
        }
    }

    #[test]
    fn the_configured_preset_is_found_by_name_then_base() {
        let mut config = Config::default();
        assert!(configured(&config).is_none());
        config.llm.api_base = "https://openrouter.ai/api/v1/".into();
        assert_eq!(configured(&config).unwrap().name, "openrouter");
        config.llm.provider = "kimi".into();
        assert_eq!(
            configured(&config).unwrap().name,
            "openrouter",
            "base wins over a stale name"
        );
        config.llm.api_base = "http://localhost:11434/v1".into();
        assert_eq!(configured(&config).unwrap().name, "custom");
    }
}
