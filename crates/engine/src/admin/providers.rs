//! `/api/providers`: the provider presets with the one configured now, and the connection
//! test behind the setup window's "Test connection".

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::State;
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{Value, json};

use super::api_error::ApiError;
use super::routes::AdminState;
use crate::config::LlmApi;
use crate::paths::Paths;
use crate::providers::{
    self, ErrorKind, PRESETS, PROBE_TIMEOUT, ProbeError, Report, Target, attribution_headers,
    same_base,
};
use crate::secrets::{Secret, SecretStore};
use crate::wiring::LLM_KEY;

pub fn router() -> Router<Arc<AdminState>> {
    Router::new()
        .route("/api/providers", get(list))
        .route("/api/providers/test", post(test))
}

async fn list(State(state): State<Arc<AdminState>>) -> Json<Value> {
    let config = &state.config;
    let llm = &config.llm;
    let presets: Vec<_> = PRESETS.iter().map(|p| p.view(config)).collect();
    // Unknown (null) when the store cannot be read; the UI then simply asks for a key.
    let key_stored = stored_key(&state).await.ok().map(|k| k.is_some());
    Json(json!({
        "presets": presets,
        "configured": {
            "provider": llm.provider,
            "preset": providers::configured(config).map(|p| p.name),
            "api": llm.api,
            "api_base": llm.api_base,
            "model_id": llm.model_id,
            "key_stored": key_stored,
        },
    }))
}

/// Deliberately not `Debug`: it holds the key as the user typed it.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TestRequest {
    provider: String,
    api_base: Option<String>,
    api: Option<LlmApi>,
    model: Option<String>,
    api_key: Option<String>,
}

async fn test(State(state): State<Arc<AdminState>>, body: Bytes) -> Result<Json<Report>, ApiError> {
    let req: TestRequest = serde_json::from_slice(&body).map_err(|e| {
        ApiError::BadRequest(format!(
            "expected {{provider, api_base?, api?, model?, api_key?}}: {e}"
        ))
    })?;
    let target = match resolve(&state, req).await {
        Ok(t) => t,
        Err(Resolve::Bad(message)) => return Err(ApiError::BadRequest(message)),
        Err(Resolve::Failed(e)) => return Ok(Json(failed(e))),
    };
    let http = reqwest::Client::builder()
        // A redirect could carry the key to another host.
        .redirect(reqwest::redirect::Policy::none())
        .connect_timeout(PROBE_TIMEOUT)
        .build()
        .map_err(ApiError::internal)?;
    Ok(Json(providers::test_connection(&http, &target).await))
}

enum Resolve {
    /// The request itself is wrong: 400.
    Bad(String),
    /// The test fails before any request: 200 with `ok: false`.
    Failed(ProbeError),
}

/// The request with the preset's defaults filled in. The stored key is used only for the
/// configured base URL: the main key must never be sent to another host.
async fn resolve(state: &AdminState, req: TestRequest) -> Result<Target, Resolve> {
    let llm = &state.config.llm;
    let preset = providers::find(&req.provider).ok_or_else(|| {
        let names: Vec<_> = PRESETS.iter().map(|p| p.name).collect();
        Resolve::Bad(format!(
            "unknown provider `{}`; one of: {}",
            req.provider,
            names.join(", ")
        ))
    })?;
    let api_base = given(req.api_base).unwrap_or_else(|| preset.api_base.to_owned());
    if api_base.is_empty() {
        return Err(Resolve::Bad(format!(
            "api_base is needed for provider `{}`",
            preset.name
        )));
    }
    if providers::host_of(&api_base).is_none() {
        return Err(Resolve::Bad("api_base must be an http(s) URL".into()));
    }
    let configured = same_base(&api_base, &llm.api_base);
    let api = req.api.unwrap_or(if configured && preset.name == "custom" {
        llm.api
    } else {
        preset.api
    });
    let model = given(req.model)
        .or_else(|| {
            configured
                .then(|| given(Some(llm.model_id.clone())))
                .flatten()
        })
        .unwrap_or_else(|| preset.default_model.to_owned());
    let api_key = match given(req.api_key) {
        Some(k) => Some(Secret::new(k)),
        None if configured => stored_key(state).await.map_err(|e| {
            Resolve::Failed(ProbeError {
                kind: ErrorKind::Other,
                message: format!("cannot read the stored API key: {e}"),
                status: None,
            })
        })?,
        None => None,
    };
    if api_key.is_none() && preset.key_required {
        return Err(Resolve::Failed(ProbeError {
            kind: ErrorKind::Auth,
            message: format!("no API key: {} needs one", preset.label),
            status: None,
        }));
    }
    // `llm.extra_headers` belong to the configured host only.
    let mut extra_headers: Vec<(String, String)> = if configured {
        llm.extra_headers.clone().into_iter().collect()
    } else {
        Vec::new()
    };
    for (name, value) in attribution_headers(&api_base, &state.config.openrouter) {
        if !extra_headers
            .iter()
            .any(|(k, _)| k.eq_ignore_ascii_case(&name))
        {
            extra_headers.push((name, value));
        }
    }
    Ok(Target {
        key_check: providers::key_check_path(&api_base),
        api_base,
        api,
        model,
        api_key,
        extra_headers,
        timeout: PROBE_TIMEOUT,
    })
}

fn failed(e: ProbeError) -> Report {
    Report {
        ok: false,
        latency_ms: 0,
        connected: None,
        error: Some(e),
    }
}

/// `llm.api_key` from the daemon's secret store (environment, keychain, file).
async fn stored_key(state: &AdminState) -> Result<Option<Secret>, ApiError> {
    let paths = Paths::new(&state.home)?;
    let store = SecretStore::open(&paths)?;
    let key = store.get_async(LLM_KEY).await?;
    Ok(key.filter(|k| !k.expose().is_empty()))
}

fn given(s: Option<String>) -> Option<String> {
    s.map(|s| s.trim().to_owned()).filter(|s| !s.is_empty())
}
