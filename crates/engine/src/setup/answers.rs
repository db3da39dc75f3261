//! What setup asks, and its starting point: the config as it is now.

use super::SetupError;
use crate::agents;
use crate::config::{ClawType, Config, LlmApi, Mode};
use crate::paths::Paths;
use crate::providers::{self, Preset};
use crate::secrets::{Secret, SecretSource, SecretStore};
use crate::wiring::LLM_KEY;

/// Everything setup writes. `Debug` shows the key masked (it is a [`Secret`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Answers {
    /// A preset name (`custom` for anything else); written as `llm.provider`.
    pub provider: String,
    pub api_base: String,
    pub api: LlmApi,
    pub model: String,
    /// A new key for `llm.api_key`; `None` keeps the stored one.
    pub api_key: Option<Secret>,
    pub mode: Mode,
    /// Agents to connect, first one recorded as `claw_type`; empty means none.
    pub agents: Vec<String>,
    /// `wechat.enabled`: OpenClaw's WeChat channel (only with OpenClaw as the agent).
    pub wechat: bool,
}

/// The answers the config gives now, and what setup should say about them.
#[derive(Debug, Clone)]
pub struct Current {
    pub answers: Answers,
    /// A provider is configured (`llm.api_base` is set).
    pub configured: bool,
    /// Where the stored `llm.api_key` is, if there is one.
    pub key_source: Option<SecretSource>,
}

/// Defaults for every question from the config as it is. Blocking: reads the keychain.
pub fn current(paths: &Paths, store: &SecretStore) -> Result<Current, SetupError> {
    let loaded = Config::load(paths)?;
    let config = &loaded.config;
    let llm = &config.llm;
    let configured = !llm.api_base.trim().is_empty();
    // The named preset while its base is still the preset's; an edited base makes it custom.
    let preset = providers::find(&llm.provider)
        .filter(|p| p.name != "custom" && providers::same_base(p.api_base, &llm.api_base))
        .or_else(|| providers::configured(config));
    let provider = preset.map_or("custom", |p| p.name).to_owned();
    let key_source = match store.lookup(LLM_KEY)? {
        Some((_, source)) => Some(source),
        None => loaded
            .legacy_secrets
            .contains_key(LLM_KEY)
            .then_some(SecretSource::Config),
    };
    let agents = match config.chosen_agent() {
        Some(agent) => vec![agent.name().to_owned()],
        None => Vec::new(),
    };
    Ok(Current {
        answers: Answers {
            provider,
            api_base: llm.api_base.clone(),
            api: llm.api,
            model: llm.model_id.clone(),
            api_key: None,
            mode: config.mode,
            agents,
            wechat: config.wechat.enabled,
        },
        configured,
        key_source,
    })
}

/// Checks the answers before anything is written; returns the chosen preset.
pub fn validate(answers: &Answers) -> Result<&'static Preset, SetupError> {
    let preset = providers::find(&answers.provider).ok_or_else(|| {
        let names: Vec<_> = providers::PRESETS.iter().map(|p| p.name).collect();
        invalid(
            "provider",
            format!(
                "unknown provider `{}`; one of: {}",
                answers.provider,
                names.join(", ")
            ),
        )
    })?;
    if answers.api_base.trim().is_empty() {
        return Err(invalid(
            "api_base",
            format!("provider `{}` needs a base URL", preset.name),
        ));
    }
    if providers::host_of(&answers.api_base).is_none() {
        return Err(invalid(
            "api_base",
            format!("`{}` is not an http(s) URL", answers.api_base),
        ));
    }
    if answers.model.trim().is_empty() {
        return Err(invalid("model", "a model id is needed".into()));
    }
    if answers
        .api_key
        .as_ref()
        .is_some_and(|k| k.expose().trim().is_empty())
    {
        return Err(invalid("api_key", "the key is empty".into()));
    }
    // Setup points agents at the proxy; a plugin-mode agent is connected on its own.
    let names: Vec<&str> = agents::names()
        .into_iter()
        .filter(|n| matches!(agents::mode(n), Ok(agents::Mode::Proxy)))
        .collect();
    for agent in &answers.agents {
        if matches!(agents::mode(agent), Ok(agents::Mode::Plugin)) {
            return Err(invalid(
                "agents",
                format!(
                    "{agent} runs MetaClaw as a plugin: connect it with `metaclaw agent connect {agent} --plugin`"
                ),
            ));
        }
        if agent == ClawType::None.name() || !names.contains(&agent.as_str()) {
            return Err(invalid(
                "agents",
                format!("unknown agent `{agent}`; one of: {}", names.join(", ")),
            ));
        }
    }
    if answers.wechat
        && !answers
            .agents
            .iter()
            .any(|a| a == ClawType::Openclaw.name())
    {
        return Err(invalid(
            "wechat",
            "WeChat works only with OpenClaw: choose openclaw as the agent, or leave WeChat off"
                .into(),
        ));
    }
    Ok(preset)
}

fn invalid(field: &'static str, message: String) -> SetupError {
    SetupError::Invalid { field, message }
}
