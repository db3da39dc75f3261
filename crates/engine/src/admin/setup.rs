//! `/api/setup`: the setup screen — the answers the config gives now (never a key), writing
//! new answers the way `metaclaw setup` does (`setup::apply`: each key through
//! `config::set`, the key into the keychain), and a test request through MetaClaw's own
//! proxy once the engine runs with them.

use std::sync::Arc;
use std::time::Instant;

use axum::body::Bytes;
use axum::extract::State;
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{Value, json};

use super::api_error::{ApiError, Invalid};
use super::routes::AdminState;
use super::settings::{Staged, sentence};
use crate::config::{self, Config, LlmApi, Mode};
use crate::paths::Paths;
use crate::secrets::{Secret, SecretStore};
use crate::setup::{self, Answers, SetupError};
use crate::wiring::LLM_KEY;

/// The reply shown after a successful test is cut to this many characters.
const REPLY_CHARS: usize = 200;

const MODES: &[(Mode, &str, &str)] = &[
    (
        Mode::SkillsOnly,
        "Skills only",
        "Proxy, skills and memory. Recommended; needs no GPU or RL account.",
    ),
    (
        Mode::Rl,
        "Reinforcement learning",
        "Also learns weights from your sessions; needs an RL backend key.",
    ),
    (
        Mode::Madmax,
        "MadMax",
        "Like reinforcement learning, with training only in idle, sleep or meeting windows.",
    ),
];

pub fn router() -> Router<Arc<AdminState>> {
    Router::new()
        .route("/api/setup", get(show))
        .route("/api/setup/apply", post(apply))
        .route("/api/setup/verify", post(verify))
}

async fn show(State(state): State<Arc<AdminState>>) -> Result<Json<Value>, ApiError> {
    let home = state.home.clone();
    // Keychain and file reads block.
    let read = tokio::task::spawn_blocking(move || -> Result<Value, ApiError> {
        let paths = Paths::new(&home)?;
        let store = SecretStore::open(&paths)?;
        let current = setup::current(&paths, &store).map_err(ApiError::internal)?;
        let config = Config::load(&paths)?.config;
        // Unknown reads as not connected: the screen then offers to connect.
        let calendar_connected = crate::calendar::is_connected(&store).unwrap_or(false);
        let a = &current.answers;
        Ok(json!({
            "configured": current.configured,
            "answers": {
                "provider": a.provider,
                "api_base": a.api_base,
                "api": api_name(a.api),
                "model": a.model,
                "mode": a.mode.to_string(),
                "agents": a.agents,
                "wechat": a.wechat,
            },
            "key": {
                "stored": current.key_source.is_some(),
                "source": current.key_source.map(|s| s.to_string()),
            },
            "modes": MODES.iter().map(|(m, label, description)| json!({
                "name": m.to_string(),
                "label": label,
                "description": description,
            })).collect::<Vec<_>>(),
            "windows": {
                "sleep_start": config.scheduler.sleep_start.to_string(),
                "sleep_end": config.scheduler.sleep_end.to_string(),
                "calendar": {
                    "enabled": config.scheduler.calendar.enabled,
                    "connected": calendar_connected,
                },
            },
        }))
    })
    .await??;
    Ok(Json(read))
}

fn api_name(api: LlmApi) -> &'static str {
    match api {
        LlmApi::Openai => "openai",
        LlmApi::Anthropic => "anthropic",
    }
}

/// Deliberately not `Debug`: it holds the key as typed.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
struct ApplyBody {
    provider: Option<String>,
    api_base: Option<String>,
    api: Option<String>,
    model: Option<String>,
    api_key: Option<String>,
    mode: Option<String>,
    agents: Vec<String>,
    /// Absent keeps `wechat.enabled` as it is.
    wechat: Option<bool>,
    sleep_start: Option<String>,
    sleep_end: Option<String>,
}

fn needed(field: &str, value: Option<String>) -> Result<String, Invalid> {
    value
        .map(|v| v.trim().to_owned())
        .filter(|v| !v.is_empty())
        .ok_or_else(|| Invalid {
            field: field.to_owned(),
            message: format!("{field} is needed."),
        })
}

/// The answers (without the key), the key, and the sleep hours as `config::set` changes.
type Parsed = (Answers, Option<Secret>, Vec<(String, String)>);

/// `wechat_now`: `wechat.enabled` as the config has it, for a body that does not say.
fn parse(body: ApplyBody, wechat_now: bool) -> Result<Parsed, Invalid> {
    let api = match needed("api", body.api)?.as_str() {
        "openai" => LlmApi::Openai,
        "anthropic" => LlmApi::Anthropic,
        other => {
            return Err(Invalid {
                field: "api".into(),
                message: format!("api must be openai or anthropic, not `{other}`."),
            });
        }
    };
    let mode_text = needed("mode", body.mode)?;
    let mode = Mode::parse(&mode_text).ok_or_else(|| Invalid {
        field: "mode".into(),
        message: format!("mode must be skills_only, rl or madmax, not `{mode_text}`."),
    })?;
    let answers = Answers {
        provider: needed("provider", body.provider)?,
        api_base: needed("api_base", body.api_base)?,
        api,
        model: needed("model", body.model)?,
        api_key: None,
        mode,
        agents: body.agents,
        wechat: body.wechat.unwrap_or(wechat_now),
    };
    // Absent or empty keeps the stored key.
    let key = body
        .api_key
        .map(|k| k.trim().to_owned())
        .filter(|k| !k.is_empty())
        .map(Secret::new);
    let mut hours = Vec::new();
    for (key, value) in [
        ("scheduler.sleep_start", body.sleep_start),
        ("scheduler.sleep_end", body.sleep_end),
    ] {
        if let Some(v) = value {
            if config::TimeOfDay::parse(&v).is_none() {
                let field = key.trim_start_matches("scheduler.");
                return Err(Invalid {
                    field: field.into(),
                    message: format!("{field} must be a time HH:MM (00:00 to 23:59), not `{v}`."),
                });
            }
            hours.push((key.to_owned(), v.trim().to_owned()));
        }
    }
    Ok((answers, key, hours))
}

async fn apply(State(state): State<Arc<AdminState>>, body: Bytes) -> Result<Json<Value>, ApiError> {
    let body: ApplyBody = serde_json::from_slice(&body).map_err(|e| {
        ApiError::BadRequest(format!(
            "the body must be {{provider, api_base, api, model, api_key?, mode, agents, wechat?, sleep_start?, sleep_end?}}: {e}"
        ))
    })?;
    let (answers, key, hours) =
        parse(body, state.config.wechat.enabled).map_err(ApiError::Invalid)?;
    let home = state.home.clone();
    let written =
        tokio::task::spawn_blocking(move || write(&home, &answers, key.as_ref(), &hours)).await??;
    Ok(Json(written))
}

/// Everything is written to a staged copy first, so a refused answer writes nothing; then
/// the copy replaces the file and the key goes to the keychain (the file is put back if
/// the keychain refuses). Blocking.
fn write(
    home: &std::path::Path,
    answers: &Answers,
    key: Option<&Secret>,
    hours: &[(String, String)],
) -> Result<Value, ApiError> {
    let paths = Paths::new(home)?;
    let store = SecretStore::open(&paths)?;
    // The key is checked with the answers, though it is written only at the end.
    let checked = Answers {
        api_key: key.cloned(),
        ..answers.clone()
    };
    setup::validate(&checked).map_err(setup_failure)?;
    let staged = Staged::new(&paths).map_err(ApiError::internal)?;
    let applied = setup::apply(&staged.paths, &store, answers).map_err(setup_failure)?;
    let mut written: Vec<String> = applied
        .written
        .iter()
        .filter_map(|o| match o {
            config::SetOutcome::Written { key, .. } => Some(key.clone()),
            config::SetOutcome::Secret { .. } => None,
        })
        .collect();
    written.extend(staged.set_all(&store, hours)?);
    let changed = staged.commit(&paths)?;
    let key_state = match key {
        Some(k) => {
            if let Err(e) = config::set(&paths, LLM_KEY, k.expose(), &store) {
                staged.restore(&paths);
                return Err(ApiError::Internal(format!("cannot store the API key: {e}")));
            }
            "stored"
        }
        None => match store.get(LLM_KEY) {
            Ok(Some(_)) => "kept",
            _ => "none",
        },
    };
    Ok(json!({
        "written": written,
        "key": key_state,
        "restart_required": changed || key.is_some(),
    }))
}

fn setup_failure(e: SetupError) -> ApiError {
    match e {
        SetupError::Invalid { field, message } => ApiError::Invalid(Invalid {
            field: field.to_owned(),
            message: format!("{field}: {message}."),
        }),
        SetupError::Config(e) => ApiError::Invalid(sentence("config", &e)),
        other => ApiError::internal(other),
    }
}

/// A test request through MetaClaw's own proxy, with the proxy key, as an agent sends it;
/// always 200 with `ok` saying how it went.
async fn verify(State(state): State<Arc<AdminState>>) -> Json<Value> {
    let mut config = state.config.clone();
    let port = state.proxy.config.bind.port();
    if port != 0 {
        config.proxy.port = port;
    }
    let home = state.home.clone();
    let endpoint = tokio::task::spawn_blocking(move || {
        let paths = Paths::new(&home)?;
        let store = SecretStore::open(&paths)?;
        setup::proxy_endpoint(&config, &store).map_err(ApiError::internal)
    })
    .await;
    let endpoint = match endpoint {
        Ok(Ok(e)) => e,
        Ok(Err(e)) => return failed(&format!("Cannot read MetaClaw's proxy key: {e}")),
        Err(e) => return failed(&e.to_string()),
    };
    Json(send(&endpoint).await)
}

/// The test's answer is always 200: `ok` says how it went.
fn failed(message: &str) -> Json<Value> {
    Json(json!({"ok": false, "error": message}))
}

async fn send(endpoint: &setup::Endpoint) -> Value {
    let fail = |message: String| json!({"ok": false, "error": message});
    let http = match reqwest::Client::builder()
        .no_proxy()
        .timeout(crate::agents::VERIFY_TIMEOUT)
        .build()
    {
        Ok(c) => c,
        Err(e) => return fail(format!("Cannot build an HTTP client: {e}")),
    };
    let url = format!("{}/chat/completions", endpoint.base.trim_end_matches('/'));
    let started = Instant::now();
    let sent = http
        .post(&url)
        .bearer_auth(&endpoint.api_key)
        .header("content-type", "application/json")
        .body(
            json!({
                "model": endpoint.model,
                "messages": [{"role": "user", "content": "Reply with one short sentence: is this connection working?"}],
                "max_tokens": 40,
            })
            .to_string(),
        )
        .send()
        .await;
    let resp = match sent {
        Ok(r) => r,
        Err(e) if e.is_timeout() => {
            return fail(
                "Network problem: no answer within a minute; the provider may be slow or unreachable."
                    .into(),
            );
        }
        Err(e) => {
            return fail(format!(
                "Network problem: MetaClaw's proxy did not answer ({e})."
            ));
        }
    };
    let status = resp.status().as_u16();
    let text = resp.text().await.unwrap_or_default();
    let body: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
    let latency_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    let message = body
        .pointer("/error/message")
        .and_then(Value::as_str)
        .unwrap_or("no details")
        .to_owned();
    match status {
        200..=299 => {
            let reply: String = body
                .pointer("/choices/0/message/content")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .chars()
                .take(REPLY_CHARS)
                .collect();
            let model = body
                .get("model")
                .and_then(Value::as_str)
                .unwrap_or(&endpoint.model);
            json!({"ok": true, "model": model, "reply": reply, "latency_ms": latency_ms})
        }
        401 | 403 => fail(format!(
            "Authentication problem: the provider refused the API key (HTTP {status}). Check the key in Setup."
        )),
        404 => fail(format!(
            "Model problem: the provider does not know model `{}` or the base URL is wrong (HTTP 404): {message}",
            endpoint.model
        )),
        503 => fail(format!("No provider is configured yet: {message}")),
        500..=599 => fail(format!(
            "Network problem: MetaClaw could not get an answer from the provider (HTTP {status}): {message}"
        )),
        _ => fail(format!(
            "The provider refused the test request (HTTP {status}): {message}"
        )),
    }
}
