//! Which model a background job talks to, resolved from config and the secret store.

use std::time::Duration;

use metaclaw_proxy::seams::Protocol;

use crate::config::{Config, LlmApi, ModelProvider};
use crate::secrets::{Secret, SecretStore};
use crate::wiring::LLM_KEY;

/// Secret account of the evolver model's key.
pub const EVOLVER_KEY: &str = "skills.evolver_api_key";
/// Secret account of the memory extraction model's key.
pub const EXTRACTOR_KEY: &str = "memory.extractor_api_key";
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

/// Where a job's base URL came from; the more specific the level, the smaller.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Level {
    /// The job's own keys (`skills.evolver_*`, `memory.extractor_*`).
    Own,
    /// The reference implementation's `rl.evolver_*` (evolver only).
    Rl,
    Llm,
}

/// One level's settings: base URL, model, secret account.
struct Settings<'a> {
    base: &'a str,
    model: &'a str,
    key: &'a str,
}

/// Resolves a background job's model: its own settings, then (for the evolver) the
/// reference's `rl.*`, then the main LLM. `api` is the job's `*_api` key (empty inherits).
///
/// The model and key are taken only from the level the base URL came from or a more
/// specific one: a model name for one provider is meaningless at another, and the main key
/// must never be sent to a different host. So a job's model alone switches the main
/// provider to another model, while a job's base URL alone resolves nothing.
fn job_endpoint(
    config: &Config,
    secrets: &SecretStore,
    api: &str,
    own: Settings<'_>,
    rl: Option<Settings<'_>>,
) -> Option<Endpoint> {
    let llm = &config.llm;
    let main = Settings {
        base: &llm.api_base,
        model: &llm.model_id,
        key: LLM_KEY,
    };
    let levels = [
        (Level::Own, Some(own)),
        (Level::Rl, rl),
        (Level::Llm, Some(main)),
    ];
    let (level, base) = levels
        .iter()
        .find_map(|(l, s)| s.as_ref().and_then(|s| non_empty(s.base)).map(|b| (*l, b)))?;
    let allowed = || {
        levels
            .iter()
            .filter(move |(l, _)| *l <= level)
            .filter_map(|(_, s)| s.as_ref())
    };
    let model = allowed().find_map(|s| non_empty(s.model))?;
    let api_key = allowed().find_map(|s| secret(secrets, s.key));
    let protocol = match api {
        "openai" => Protocol::Openai,
        "anthropic" => Protocol::Anthropic,
        // The reference's evolver spoke the OpenAI protocol.
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

/// The evolver's endpoint: `skills.evolver_*`, then the reference's `rl.evolver_*`, then the
/// main LLM (see [`job_endpoint`]). `None` when no base URL or model resolves. Blocking:
/// reads the secret store.
pub fn evolver_endpoint(config: &Config, secrets: &SecretStore) -> Option<Endpoint> {
    let (skills, rl) = (&config.skills, &config.rl);
    let own = Settings {
        base: &skills.evolver_api_base,
        model: &skills.evolver_model,
        key: EVOLVER_KEY,
    };
    // Bedrock, the reference's other evolver provider, is not supported here.
    let rl = (rl.evolver_provider == ModelProvider::Openai).then_some(Settings {
        base: &rl.evolver_api_base,
        model: &rl.evolver_model,
        key: RL_EVOLVER_KEY,
    });
    job_endpoint(config, secrets, &skills.evolver_api, own, rl)
}

/// The memory extraction model: `memory.extractor_*`, then the main LLM. `None` when no
/// base URL or model resolves (the rule-based extractor is then used). Blocking.
pub fn extractor_endpoint(config: &Config, secrets: &SecretStore) -> Option<Endpoint> {
    let memory = &config.memory;
    let own = Settings {
        base: &memory.extractor_api_base,
        model: &memory.extractor_model,
        key: EXTRACTOR_KEY,
    };
    job_endpoint(config, secrets, &memory.extractor_api, own, None)
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
