//! Which backend to use (`rl.backend`), with which key and base URL, from the
//! configuration and environment as the reference resolved them:
//!
//! - an explicit `tinker`, `mint` or `weaver` wins;
//! - `auto` (or empty) picks Weaver when a `WEAVER_*` variable is set or a configured base
//!   URL's host contains "weaver"; else MinT when a `MINT_*` variable is set, a key starts
//!   with `sk-mint-`, or a base URL's host contains "mint"; else Tinker;
//! - the key is `rl.api_key`, else the legacy `rl.tinker_api_key`, else the environment in
//!   the chosen backend's order (MinT: `MINT_API_KEY` then `TINKER_API_KEY`; Weaver:
//!   `WEAVER_API_KEY` then `TINKER_API_KEY`; Tinker: `TINKER_API_KEY` then `MINT_API_KEY`);
//!   the base URL follows the same order, then the backend's default.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::backend::Backend;
use crate::error::LearnError;
use crate::retry::RetryPolicy;
use crate::tinker::{MINT_DEFAULT_BASE_URL, TINKER_DEFAULT_BASE_URL, TinkerClient, TinkerConfig};
use crate::weaver::{WEAVER_DEFAULT_BASE_URL, WeaverClient, WeaverConfig};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BackendKind {
    Tinker,
    Mint,
    Weaver,
}

impl BackendKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Tinker => "tinker",
            Self::Mint => "mint",
            Self::Weaver => "weaver",
        }
    }

    /// The name used in messages to the user.
    pub fn display_name(self) -> &'static str {
        match self {
            Self::Tinker => "Tinker",
            Self::Mint => "MinT",
            Self::Weaver => "Weaver",
        }
    }

    fn default_base_url(self) -> &'static str {
        match self {
            Self::Tinker => TINKER_DEFAULT_BASE_URL,
            Self::Mint => MINT_DEFAULT_BASE_URL,
            Self::Weaver => WEAVER_DEFAULT_BASE_URL,
        }
    }

    /// Environment prefixes consulted for the key and base URL, in order.
    fn env_order(self) -> [&'static str; 2] {
        match self {
            Self::Tinker => ["TINKER", "MINT"],
            Self::Mint => ["MINT", "TINKER"],
            Self::Weaver => ["WEAVER", "TINKER"],
        }
    }
}

/// Plain inputs: the `rl.*` settings and the relevant environment variables.
#[derive(Debug, Clone, Default)]
pub struct BackendSettings {
    /// `rl.backend`: `auto` (or empty), `tinker`, `mint` or `weaver`.
    pub backend: String,
    /// `rl.api_key`.
    pub api_key: Option<String>,
    /// `rl.base_url`.
    pub base_url: Option<String>,
    /// Legacy `rl.tinker_api_key`.
    pub tinker_api_key: Option<String>,
    /// Legacy `rl.tinker_base_url`.
    pub tinker_base_url: Option<String>,
    /// `TINKER_*`, `MINT_*` and `WEAVER_*` variables (`*_API_KEY`, `*_BASE_URL`).
    pub env: BTreeMap<String, String>,
}

impl BackendSettings {
    /// Copies the six backend variables from the process environment into `env`.
    pub fn with_process_env(mut self) -> Self {
        for prefix in ["TINKER", "MINT", "WEAVER"] {
            for suffix in ["API_KEY", "BASE_URL"] {
                let name = format!("{prefix}_{suffix}");
                if let Ok(v) = std::env::var(&name) {
                    self.env.insert(name, v);
                }
            }
        }
        self
    }

    fn env(&self, prefix: &str, suffix: &str) -> Option<&str> {
        nonempty(
            self.env
                .get(&format!("{prefix}_{suffix}"))
                .map(String::as_str),
        )
    }
}

/// The resolved backend. `Debug` leaves the key out.
#[derive(Clone, PartialEq, Eq)]
pub struct BackendChoice {
    pub kind: BackendKind,
    pub base_url: String,
    pub api_key: String,
}

impl std::fmt::Debug for BackendChoice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BackendChoice")
            .field("kind", &self.kind)
            .field("base_url", &self.base_url)
            .finish_non_exhaustive()
    }
}

impl BackendChoice {
    /// Connects the chosen backend (session and heartbeat included).
    pub async fn connect(&self, policy: RetryPolicy) -> Result<Arc<dyn Backend>, LearnError> {
        Ok(match self.kind {
            BackendKind::Tinker | BackendKind::Mint => Arc::new(
                TinkerClient::connect(TinkerConfig {
                    kind: self.kind,
                    base_url: self.base_url.clone(),
                    api_key: self.api_key.clone(),
                    policy,
                })
                .await?,
            ),
            BackendKind::Weaver => Arc::new(
                WeaverClient::connect(WeaverConfig {
                    base_url: self.base_url.clone(),
                    api_key: self.api_key.clone(),
                    policy,
                })
                .await?,
            ),
        })
    }
}

fn nonempty(s: Option<&str>) -> Option<&str> {
    s.map(str::trim).filter(|s| !s.is_empty())
}

fn host_contains(url: Option<&str>, needle: &str) -> bool {
    url.and_then(|u| reqwest::Url::parse(u.trim()).ok())
        .and_then(|u| u.host_str().map(str::to_ascii_lowercase))
        .is_some_and(|h| h.contains(needle))
}

pub fn pick_backend(s: &BackendSettings) -> Result<BackendChoice, LearnError> {
    let cfg_key = nonempty(s.api_key.as_deref()).or(nonempty(s.tinker_api_key.as_deref()));
    let cfg_url = nonempty(s.base_url.as_deref()).or(nonempty(s.tinker_base_url.as_deref()));
    let kind = match s.backend.trim().to_ascii_lowercase().as_str() {
        "tinker" => BackendKind::Tinker,
        "mint" => BackendKind::Mint,
        "weaver" => BackendKind::Weaver,
        "" | "auto" => {
            let urls = [cfg_url, s.env("TINKER", "BASE_URL")];
            let has_env = |p: &str| s.env(p, "API_KEY").is_some() || s.env(p, "BASE_URL").is_some();
            let keys = [
                cfg_key,
                s.env("TINKER", "API_KEY"),
                s.env("MINT", "API_KEY"),
            ];
            if has_env("WEAVER") || urls.iter().any(|u| host_contains(*u, "weaver")) {
                BackendKind::Weaver
            } else if has_env("MINT")
                || keys.iter().flatten().any(|k| k.starts_with("sk-mint-"))
                || urls.iter().any(|u| host_contains(*u, "mint"))
            {
                BackendKind::Mint
            } else {
                BackendKind::Tinker
            }
        }
        other => {
            return Err(LearnError::invalid(
                "rl.backend",
                format!("`{other}` (expected auto, tinker, mint or weaver)"),
            ));
        }
    };
    let order = kind.env_order();
    let api_key = cfg_key
        .or_else(|| order.iter().find_map(|p| s.env(p, "API_KEY")))
        .ok_or_else(|| {
            LearnError::invalid(
                "rl.api_key",
                format!(
                    "no {} API key: set rl.api_key (or {}_API_KEY)",
                    kind.display_name(),
                    order[0]
                ),
            )
        })?;
    let base_url = cfg_url
        .or_else(|| order.iter().find_map(|p| s.env(p, "BASE_URL")))
        .unwrap_or(kind.default_base_url());
    Ok(BackendChoice {
        kind,
        base_url: base_url.trim_end_matches('/').to_owned(),
        api_key: api_key.to_owned(),
    })
}
