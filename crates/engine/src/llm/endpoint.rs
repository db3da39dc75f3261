//! Which model a background job talks to, resolved from config and the secret store.

use std::time::Duration;

use metaclaw_proxy::seams::Protocol;

use crate::config::{Config, LlmApi, ModelProvider};
use crate::secrets::{Secret, SecretStore};
use crate::wiring::LLM_KEY;

/// Secret account of the evolver model's key.
pub const EVOLVER_KEY: &str = "skills.evolver_api_key";
/// Secret account of the embeddings API's key.
pub const EMBEDDING_KEY: &str = "skills.embedding_api_key";
/// The reference implementation's evolver key, honoured for migrated setups.
const RL_EVOLVER_KEY: &str = "rl.evolver_api_key";
/// Used when `skills.embedding_model` is empty.
pub const DEFAULT_EMBEDDING_MODEL: &str = "text-embedding-3-small";
/// Embedding calls are small; a stuck one should fail fast and fall back to lexical ranking.
const EMBEDDING_TIMEOUT: Duration = Duration::from_secs(60);

/// A model API and how to call it. `Debug` shows the key as `Secret(****)`.
#[derive(Debug, Clone)]
pub struct Endpoint {
    pub protocol: Protocol,
    /// As configured, e.g. `https://api.openai.com/v1` or `https://api.anthropic.com`.
    pub base_url: String,
    pub model: String,
    pub api_key: Option<Secret>,
    pub extra_headers: Vec<(String, String)>,
    /// Whole-request limit.
    pub timeout: Duration,
}

/// Where the evolver's base URL came from; the more specific the level, the smaller.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Level {
    Skills,
    Rl,
    Llm,
}

/// The evolver's endpoint: `skills.evolver_*`, then the reference's `rl.evolver_*`, then the
/// main LLM. `None` when no base URL or model resolves. Blocking: reads the secret store.
///
/// The model and key are taken only from the level the base URL came from or a more
/// specific one: a model name for one provider is meaningless at another, and the main key
/// must never be sent to a different host. So `skills.evolver_model` alone switches the
/// main provider to another model, while `skills.evolver_api_base` alone resolves nothing.
pub fn evolver_endpoint(config: &Config, secrets: &SecretStore) -> Option<Endpoint> {
    let (skills, rl, llm) = (&config.skills, &config.rl, &config.llm);
    // The reference's evolver spoke the OpenAI protocol; Bedrock is not supported here.
    let rl_usable = rl.evolver_provider == ModelProvider::Openai;
    let (level, base) = if let Some(b) = non_empty(&skills.evolver_api_base) {
        (Level::Skills, b)
    } else if let Some(b) = non_empty(&rl.evolver_api_base).filter(|_| rl_usable) {
        (Level::Rl, b)
    } else {
        (Level::Llm, non_empty(&llm.api_base)?)
    };
    let levels = [
        (Level::Skills, skills.evolver_model.as_str(), EVOLVER_KEY),
        (Level::Rl, rl.evolver_model.as_str(), RL_EVOLVER_KEY),
        (Level::Llm, llm.model_id.as_str(), LLM_KEY),
    ];
    let allowed = || {
        levels
            .iter()
            .filter(|(l, _, _)| *l <= level && (*l != Level::Rl || rl_usable))
    };
    let model = allowed().find_map(|(_, m, _)| non_empty(m))?;
    let api_key = allowed().find_map(|(_, _, account)| secret(secrets, account));
    let protocol = match skills.evolver_api.as_str() {
        "openai" => Protocol::Openai,
        "anthropic" => Protocol::Anthropic,
        _ if level == Level::Rl => Protocol::Openai,
        _ => protocol(llm.api),
    };
    Some(Endpoint {
        protocol,
        base_url: base,
        model,
        api_key,
        extra_headers: inherited_headers(config, level == Level::Llm),
        timeout: Duration::from_secs(llm.request_timeout_secs),
    })
}

/// The embeddings API (always the OpenAI protocol): `skills.embedding_api_base`, else the main
/// LLM's base when it speaks OpenAI. The main key goes only to the main base. `None` when no
/// base resolves. Blocking: reads the secret store.
pub fn embedding_endpoint(config: &Config, secrets: &SecretStore) -> Option<Endpoint> {
    let (skills, llm) = (&config.skills, &config.llm);
    let (inherited, base) = match non_empty(&skills.embedding_api_base) {
        Some(b) => (false, b),
        None if llm.api == LlmApi::Openai => (true, non_empty(&llm.api_base)?),
        None => return None,
    };
    let api_key = secret(secrets, EMBEDDING_KEY)
        .or_else(|| inherited.then(|| secret(secrets, LLM_KEY)).flatten());
    Some(Endpoint {
        protocol: Protocol::Openai,
        base_url: base,
        model: non_empty(&skills.embedding_model)
            .unwrap_or_else(|| DEFAULT_EMBEDDING_MODEL.to_owned()),
        api_key,
        extra_headers: inherited_headers(config, inherited),
        timeout: EMBEDDING_TIMEOUT,
    })
}

/// `llm.extra_headers` belong to the main provider's host; they follow its base URL only.
fn inherited_headers(config: &Config, inherited: bool) -> Vec<(String, String)> {
    if !inherited {
        return Vec::new();
    }
    config
        .llm
        .extra_headers
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// A missing or unreadable key is "no key": the request then fails with the provider's 401,
/// which names the problem better than a keychain error here would.
fn secret(secrets: &SecretStore, account: &str) -> Option<Secret> {
    match secrets.get(account) {
        Ok(found) => found.filter(|s| !s.expose().is_empty()),
        Err(e) => {
            tracing::warn!(account, error = %e, "cannot read a model key; calling without it");
            None
        }
    }
}

fn protocol(api: LlmApi) -> Protocol {
    match api {
        LlmApi::Openai => Protocol::Openai,
        LlmApi::Anthropic => Protocol::Anthropic,
    }
}

fn non_empty(s: &str) -> Option<String> {
    let s = s.trim();
    (!s.is_empty()).then(|| s.to_owned())
}
