//! `/api/agents`: which agents are installed and connected, and previewing, connecting,
//! disconnecting and verifying one, through the same glue as `metaclaw agent …`
//! ([`crate::agents`]). File IO, keychain reads and restart commands run on blocking
//! threads; every response is scrubbed of the stored keys as a last line of defence.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use axum::extract::{Path, Query, State};
use axum::routing::{get, post};
use axum::{Json, Router};
use metaclaw_claws::ClawError;
use metaclaw_claws::driver::mask;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::{Mutex, OwnedMutexGuard};

use super::api_error::ApiError;
use super::routes::AdminState;
use crate::agents::{self, AgentError, VERIFY_TIMEOUT};
use crate::config::{Config, SECRET_KEYS};
use crate::paths::Paths;
use crate::secrets::{Secret, SecretStore};

/// What the agent routes need.
pub struct AgentsAdmin {
    paths: Paths,
    secrets: SecretStore,
    /// The config with the port this run listens on, so agents are pointed at this run.
    config: Config,
    /// Held while agent files are written (API calls and the start-time reconnect), so two
    /// writers never interleave on one agent's config and backup.
    writing: Arc<Mutex<()>>,
    /// True until the start-time reconnect has finished.
    reconnecting: Arc<AtomicBool>,
}

/// The start-time reconnect, holding the write lock from construction so no API call gets
/// in first.
pub struct StartReconnect {
    paths: Paths,
    secrets: SecretStore,
    config: Config,
    _writing: Option<OwnedMutexGuard<()>>,
    reconnecting: Arc<AtomicBool>,
}

impl AgentsAdmin {
    pub fn new(paths: Paths, secrets: SecretStore, config: Config) -> (Self, StartReconnect) {
        let writing = Arc::new(Mutex::new(()));
        let reconnecting = Arc::new(AtomicBool::new(true));
        let start = StartReconnect {
            paths: paths.clone(),
            secrets: secrets.clone(),
            config: config.clone(),
            // A fresh mutex: always free.
            _writing: writing.clone().try_lock_owned().ok(),
            reconnecting: reconnecting.clone(),
        };
        let admin = AgentsAdmin {
            paths,
            secrets,
            config,
            writing,
            reconnecting,
        };
        (admin, start)
    }
}

impl StartReconnect {
    /// Runs [`agents::reconnect_on_start`] on a blocking thread: restart commands can be
    /// slow, and the start must not wait for them.
    pub fn spawn(self) {
        tokio::task::spawn_blocking(move || {
            agents::reconnect_on_start(&self.paths, &self.config, &self.secrets);
            tracing::info!("agents checked at start");
            // Dropping `self` releases the lock and clears the flag, also on a panic.
        });
    }
}

impl Drop for StartReconnect {
    fn drop(&mut self) {
        self.reconnecting.store(false, Ordering::Release);
    }
}

pub fn router() -> Router<Arc<AdminState>> {
    Router::new()
        .route("/api/agents", get(list))
        .route("/api/agents/{name}/preview", post(preview))
        .route("/api/agents/{name}/connect", post(connect))
        .route("/api/agents/{name}/disconnect", post(disconnect))
        .route("/api/agents/{name}/verify", post(verify))
}

/// What a blocking job works with.
struct Job {
    paths: Paths,
    secrets: SecretStore,
    config: Config,
}

type Answer = Result<Json<Value>, ApiError>;

async fn list(State(state): State<Arc<AdminState>>) -> Answer {
    let a = &state.agents;
    let reconnecting = a.reconnecting.load(Ordering::Acquire);
    let claw_type = a.config.claw_type.name();
    let chosen = a.config.chosen_agent().is_some();
    run(a, move |job| {
        let env = agents::system_env()?;
        let with_plugin: Vec<&str> = agents::names()
            .into_iter()
            .filter(|n| agents::has_plugin(n))
            .collect();
        Ok(json!({
            "agents": to_json(&agents::statuses(&job.paths, &env))?,
            // Agents that can run MetaClaw inside them (`?plugin=true` on preview/connect).
            "with_plugin": with_plugin,
            // Of those, the ones that connect only that way (Claude Code).
            "plugin_only": with_plugin
                .iter()
                .filter(|n| matches!(agents::mode(n), Ok(agents::Mode::Plugin)))
                .collect::<Vec<_>>(),
            "claw_type": claw_type,
            "chosen": chosen,
            // The UI can say "connecting agents…" until this is false.
            "reconnecting": reconnecting,
        }))
    })
    .await
}

async fn preview(
    State(state): State<Arc<AdminState>>,
    Path(name): Path<String>,
    Query(q): Query<ConnectQuery>,
) -> Answer {
    run(&state.agents, move |job| {
        let env = agents::system_env()?;
        let target = agents::target_for(&job.paths, &job.config, &job.secrets, q.plugin)?;
        to_json(&agents::preview(&env, &target, &name)?)
    })
    .await
}

#[derive(Deserialize)]
struct ConnectQuery {
    /// Send the agent's request through MetaClaw afterwards (proxy only).
    #[serde(default)]
    verify: bool,
    /// Run MetaClaw inside the agent (its plugin) instead of as its proxy.
    #[serde(default)]
    plugin: bool,
}

async fn connect(
    State(state): State<Arc<AdminState>>,
    Path(name): Path<String>,
    Query(q): Query<ConnectQuery>,
) -> Answer {
    let a = &state.agents;
    // Moved into the blocking job, so it is held until the write is done even if the
    // client goes away.
    let lock = a.writing.clone().lock_owned().await;
    let rt = tokio::runtime::Handle::current();
    run(a, move |job| {
        let env = agents::system_env()?;
        let target = agents::target_for(&job.paths, &job.config, &job.secrets, q.plugin)?;
        let connected = agents::connect(&job.paths, &env, &target, &name);
        drop(lock);
        let mut body = to_json(&connected?)?;
        if q.verify
            && !q.plugin
            && let Value::Object(fields) = &mut body
        {
            let v = verified(check(&rt, &env, &job.secrets, &name))?;
            fields.insert("verify".into(), v);
        }
        Ok(body)
    })
    .await
}

async fn disconnect(State(state): State<Arc<AdminState>>, Path(name): Path<String>) -> Answer {
    let a = &state.agents;
    let lock = a.writing.clone().lock_owned().await;
    run(a, move |job| {
        let env = agents::system_env()?;
        let disconnected = agents::disconnect(&job.paths, &env, &name);
        drop(lock);
        to_json(&disconnected?)
    })
    .await
}

async fn verify(State(state): State<Arc<AdminState>>, Path(name): Path<String>) -> Answer {
    let rt = tokio::runtime::Handle::current();
    run(&state.agents, move |job| {
        let env = agents::system_env()?;
        verified(check(&rt, &env, &job.secrets, &name))
    })
    .await
}

/// Reads the agent's config (blocking), then sends its request on the runtime.
fn check(
    rt: &tokio::runtime::Handle,
    env: &agents::Env,
    secrets: &SecretStore,
    name: &str,
) -> Result<metaclaw_claws::Verified, AgentError> {
    let endpoint = agents::endpoint(env, secrets, name)?;
    rt.block_on(agents::verify(name, &endpoint, VERIFY_TIMEOUT))
}

/// `{ok: true, …}` or `{ok: false, error}`; only an unknown agent (404) or a failed task
/// stays an error.
fn verified(result: Result<metaclaw_claws::Verified, AgentError>) -> Result<Value, AgentError> {
    match result {
        Ok(v) => {
            let mut body = to_json(&v)?;
            if let Value::Object(fields) = &mut body {
                fields.insert("ok".into(), Value::Bool(true));
            }
            Ok(body)
        }
        Err(e @ (AgentError::Claw(ClawError::UnknownAgent(_)) | AgentError::Task(_))) => Err(e),
        Err(e) => Ok(json!({"ok": false, "error": e.to_string()})),
    }
}

/// `serde_json::json!` would panic where a path is not UTF-8; this says so instead.
fn to_json<T: serde::Serialize>(v: &T) -> Result<Value, AgentError> {
    serde_json::to_value(v).map_err(|e| AgentError::Task(format!("cannot report the result: {e}")))
}

/// Runs `work` on a blocking thread and answers with its JSON or its error, the stored keys
/// masked either way.
async fn run<F>(a: &AgentsAdmin, work: F) -> Answer
where
    F: FnOnce(&Job) -> Result<Value, AgentError> + Send + 'static,
{
    let job = Job {
        paths: a.paths.clone(),
        secrets: a.secrets.clone(),
        config: a.config.clone(),
    };
    let done = tokio::task::spawn_blocking(move || {
        let result = work(&job);
        (result, known_secrets(&job.secrets, &job.config))
    })
    .await;
    let (result, known) =
        done.map_err(|e| ApiError::Internal(format!("agent task failed: {e}")))?;
    match result {
        Ok(mut body) => {
            scrub(&mut body, &known);
            Ok(Json(body))
        }
        Err(e) => {
            let mut message = Value::String(e.to_string());
            scrub(&mut message, &known);
            let message = message.as_str().unwrap_or_default().to_owned();
            Err(api_error(&e, message))
        }
    }
}

/// `e`'s meaning for the admin API, with its (scrubbed) `message`.
fn api_error(e: &AgentError, message: String) -> ApiError {
    match e {
        AgentError::Claw(c) => match c {
            ClawError::UnknownAgent(_) => ApiError::NotFound(message),
            // The agent is not set up, or not connected, or changed under MetaClaw.
            ClawError::ConfigMissing { .. }
            | ClawError::NotFound { .. }
            | ClawError::NotConnected { .. }
            | ClawError::PluginOnly { .. }
            | ClawError::ChangedSince { .. } => ApiError::Conflict(message),
            // The file is there but cannot be edited safely: nothing was changed.
            ClawError::ConfigEmpty { .. }
            | ClawError::ConfigCorrupt { .. }
            | ClawError::Unexpected { .. } => ApiError::Unprocessable(message),
            _ => ApiError::Internal(message),
        },
        AgentError::NotConnected { .. } => ApiError::Conflict(message),
        AgentError::Verify(_) => ApiError::BadGateway(message),
        AgentError::Secret(_)
        | AgentError::NoHome
        | AgentError::Task(_)
        | AgentError::NoBinary(_) => ApiError::Internal(message),
    }
}

/// Every key in the secret store (the proxy key, provider keys), to mask wherever they
/// might have slipped into a response (a parser's message quoting a line, a command's
/// output). Unreadable accounts are skipped.
fn known_secrets(store: &SecretStore, config: &Config) -> Vec<Secret> {
    let fallbacks = config.llm.fallbacks.iter().map(|f| f.key_account());
    SECRET_KEYS
        .iter()
        .map(|k| (*k).to_owned())
        .chain(fallbacks)
        .filter_map(|account| store.get(&account).ok().flatten())
        .filter(|s| !s.expose().is_empty())
        .collect()
}

/// Masks every occurrence of a known secret in the strings of `v`.
fn scrub(v: &mut Value, known: &[Secret]) {
    match v {
        Value::String(s) => {
            for k in known {
                if s.contains(k.expose()) {
                    *s = s.replace(k.expose(), &mask(k.expose()));
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|i| scrub(i, known)),
        Value::Object(map) => map.values_mut().for_each(|i| scrub(i, known)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scrub_masks_known_secrets_at_any_depth() {
        let known = [Secret::new("mc-proxy-key-0123456789")];
        let mut v = json!({
            "problem": "line 2: \"api_key\": \"mc-proxy-key-0123456789\"",
            "changes": [{"new": {"note": "x mc-proxy-key-0123456789 y"}}],
            "n": 3,
        });
        scrub(&mut v, &known);
        let s = v.to_string();
        assert!(!s.contains("mc-proxy-key-0123456789"), "{s}");
        assert!(s.contains("mc-…6789"), "{s}");
        assert!(s.contains("line 2"), "{s}");
    }

    #[test]
    fn unknown_agents_are_404_and_broken_configs_422() {
        use axum::http::StatusCode;
        let unknown = AgentError::Claw(ClawError::UnknownAgent("x".into()));
        let status = |e: &AgentError| api_error(e, e.to_string()).status();
        assert_eq!(status(&unknown), StatusCode::NOT_FOUND);
        let corrupt = AgentError::Claw(ClawError::ConfigCorrupt {
            agent: "copaw".into(),
            path: "/x".into(),
            detail: "bad".into(),
        });
        assert_eq!(status(&corrupt), StatusCode::UNPROCESSABLE_ENTITY);
    }
}
